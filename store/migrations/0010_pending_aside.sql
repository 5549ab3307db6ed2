-- 0010: pending checkpoint objects whose row cannot be read or written
-- out (corrupt bytes, an object that does not hash to its id) are moved
-- here at start, with why, instead of stopping the server: the rest is
-- flushed and served, and nothing is deleted.
CREATE TABLE pending_objects_aside (
	seq          INTEGER PRIMARY KEY,
	session_id   TEXT NOT NULL,
	commit_id    TEXT NOT NULL,
	refs         TEXT NOT NULL,
	objects      BLOB,
	reason       TEXT NOT NULL,
	set_aside_at TEXT NOT NULL
);
