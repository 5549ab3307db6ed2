-- 0001: the first schema. Times are TEXT in UTC with a fixed nine-digit
-- fraction, so text order is time order.

CREATE TABLE sessions (
	id            TEXT PRIMARY KEY,
	name          TEXT NOT NULL DEFAULT '',
	agent_id      TEXT NOT NULL DEFAULT '',
	mode          TEXT NOT NULL,
	status        TEXT NOT NULL,
	worktree_path TEXT NOT NULL DEFAULT '',
	branch        TEXT NOT NULL DEFAULT '',
	base_commit   TEXT NOT NULL DEFAULT '',
	created_at    TEXT NOT NULL,
	ended_at      TEXT
);

CREATE INDEX sessions_status ON sessions (status, created_at);

CREATE TABLE tool_calls (
	session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	id            TEXT NOT NULL,
	tool_name     TEXT NOT NULL DEFAULT '',
	args          BLOB,
	agent_id      TEXT NOT NULL DEFAULT '',
	cwd           TEXT NOT NULL DEFAULT '',
	message_index INTEGER NOT NULL DEFAULT 0,
	snapshot      BLOB,
	result        BLOB,
	started_at    TEXT NOT NULL,
	completed_at  TEXT,
	PRIMARY KEY (session_id, id)
);

-- seq is AUTOINCREMENT so a sequence number is never reused, even after the
-- newest record is deleted: it is the order of changes.
CREATE TABLE records (
	seq            INTEGER PRIMARY KEY AUTOINCREMENT,
	id             TEXT NOT NULL,
	session_id     TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	file_path      TEXT NOT NULL,
	rel_path       TEXT NOT NULL,
	agent_id       TEXT NOT NULL DEFAULT '',
	change_type    TEXT NOT NULL,
	tool_call_id   TEXT NOT NULL DEFAULT '',
	tool_name      TEXT NOT NULL DEFAULT '',
	message_index  INTEGER NOT NULL DEFAULT 0,
	old_hash       TEXT NOT NULL DEFAULT '', -- '' = the file did not exist
	new_hash       TEXT NOT NULL DEFAULT '',
	pre_tool_hash  TEXT NOT NULL DEFAULT '',
	added_ranges   TEXT NOT NULL DEFAULT '[]', -- JSON [{"startLine","endLine"}]
	removed_ranges TEXT NOT NULL DEFAULT '[]',
	timestamp      TEXT NOT NULL,
	status         TEXT NOT NULL,
	sync_state     TEXT NOT NULL DEFAULT '',
	binary         INTEGER NOT NULL DEFAULT 0,
	mode_before    INTEGER NOT NULL DEFAULT 0,
	mode_after     INTEGER NOT NULL DEFAULT 0,
	size_before    INTEGER NOT NULL DEFAULT 0,
	size_after     INTEGER NOT NULL DEFAULT 0,
	UNIQUE (session_id, id)
);

CREATE INDEX records_rel_path ON records (session_id, rel_path);
CREATE INDEX records_status ON records (session_id, status);
CREATE INDEX records_tool_call ON records (session_id, tool_call_id);

CREATE TABLE checkpoints (
	id            TEXT PRIMARY KEY,
	session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	kind          TEXT NOT NULL,
	name          TEXT NOT NULL DEFAULT '',
	annotation    TEXT NOT NULL DEFAULT '',
	message_index INTEGER NOT NULL DEFAULT 0,
	tool_call_id  TEXT NOT NULL DEFAULT '',
	tree          TEXT NOT NULL DEFAULT '',
	commit_id     TEXT NOT NULL DEFAULT '',
	created_at    TEXT NOT NULL
);

CREATE INDEX checkpoints_session ON checkpoints (session_id, created_at);

-- Content-addressed store: hash is the lowercase hex sha256 of the raw
-- content; data holds it raw or zstd-compressed, as encoding says.
CREATE TABLE blobs (
	hash     TEXT PRIMARY KEY,
	encoding TEXT NOT NULL CHECK (encoding IN ('raw', 'zstd')),
	size     INTEGER NOT NULL, -- raw size in bytes
	data     BLOB NOT NULL
);

CREATE TABLE kv (
	key   TEXT PRIMARY KEY,
	value BLOB
);

-- Multi-step operations write an intent first and finish it last, so a crash
-- in between can be rolled forward or back at the next start. Not tied to a
-- session by a foreign key: an intent may outlive the rows it is about.
CREATE TABLE intents (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	session_id TEXT NOT NULL DEFAULT '',
	kind       TEXT NOT NULL,
	payload    BLOB,
	state      TEXT NOT NULL,
	created_at TEXT NOT NULL
);

CREATE INDEX intents_state ON intents (state);
