-- 0003: what rewinding needs to know about a checkpoint: the newest record
-- it includes (records after it are undone) and how many files changed since
-- the checkpoint before it; and whether a session takes automatic
-- checkpoints.
ALTER TABLE checkpoints ADD COLUMN record_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE checkpoints ADD COLUMN files_changed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN auto_checkpoints INTEGER NOT NULL DEFAULT 1;
