-- 0006: checkpoint objects committed here, with their checkpoint, and not
-- yet written into the repository's object store. A checkpoint answers as
-- soon as this row commits; a flusher writes the objects as git loose
-- objects, points the refs at the commit, and deletes the row. After a
-- crash the next start flushes what is left, so no checkpoint is lost.
CREATE TABLE pending_objects (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT,
	session_id TEXT NOT NULL,
	commit_id  TEXT NOT NULL,        -- the checkpoint's commit
	refs       TEXT NOT NULL,        -- JSON list of refs to point at it
	objects    BLOB NOT NULL         -- repeated: 20-byte id, 4-byte length, zlib data
);
