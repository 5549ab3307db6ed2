-- 0004: the tracker's stat cache. For each session file it last read, the
-- lstat facts (size, mtime, ctime, inode, mode) and the content's blob hash,
-- so a file whose facts are unchanged is not read or hashed again, also
-- after a restart. Rows are only a cache: a missing or stale one costs a read.
CREATE TABLE stat_cache (
	session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	rel_path   TEXT NOT NULL,
	size       INTEGER NOT NULL,
	mtime_ns   INTEGER NOT NULL,
	ctime_ns   INTEGER NOT NULL,
	ino        INTEGER NOT NULL,
	mode       INTEGER NOT NULL,
	hash       TEXT NOT NULL,
	seen_ns    INTEGER NOT NULL,
	PRIMARY KEY (session_id, rel_path)
);
