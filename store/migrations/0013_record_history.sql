-- 0013: what a record was before each change of its review state, so a
-- rewind can give every record back the state it had at a checkpoint
-- (SPEC rule 5). A row holds the record's status, sync state, hunks and
-- rejected_at as they were just before a change; a checkpoint notes the
-- newest row (decision_seq), so a record's state at the checkpoint is its
-- first row after that, or its state now when it has none. Checkpoints
-- stored before have 0: every row is after them, as every change was. A
-- session's rows go with it (gc).
CREATE TABLE record_history (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    record_id   TEXT NOT NULL,
    status      TEXT NOT NULL,
    sync_state  TEXT NOT NULL,
    hunks       TEXT NOT NULL DEFAULT '',
    rejected_at TEXT
);
CREATE INDEX record_history_session ON record_history (session_id, seq);
ALTER TABLE checkpoints ADD COLUMN decision_seq INTEGER NOT NULL DEFAULT 0;
