-- 0016: large contents are stored a chunk at a time. Binding a content of
-- 99 MiB as one value cost a copy of it in SQLite's memory, and reading it
-- back two more (SQLite's, the driver's), on top of the one prsm keeps.
-- A blobs row whose data is empty while its size is not holds its content
-- here, in chunks of at most 1 MiB (each raw or zstd, whichever is
-- smaller), in seq order; the chunks go with their blobs row.
CREATE TABLE blob_chunks (
    hash     TEXT NOT NULL REFERENCES blobs (hash) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,
    encoding TEXT NOT NULL CHECK (encoding IN ('raw', 'zstd')),
    data     BLOB NOT NULL,
    PRIMARY KEY (hash, seq)
);
