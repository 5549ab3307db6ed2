-- 0002: the tracker's known state of each session file that differs from the
-- session's base commit (or was changed and changed back), so a restart does
-- not need to replay records to know what the worktree should hold.
CREATE TABLE file_states (
	session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	rel_path   TEXT NOT NULL,
	present    INTEGER NOT NULL, -- 0: the file does not exist
	mode       INTEGER NOT NULL DEFAULT 0,
	hash       TEXT NOT NULL DEFAULT '', -- blob hash of the content (link target for symlinks)
	size       INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (session_id, rel_path)
);
