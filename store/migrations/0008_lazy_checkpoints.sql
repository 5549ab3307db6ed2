-- 0008: the automatic checkpoint before a tool call is stored at once as
-- what changed since the checkpoint before it (JSON: the paths with their
-- modes and blob hashes); its tree and commit are built later, off the
-- tool call's path, and changes is '' from then on. After a crash the
-- next start builds them from it.
ALTER TABLE checkpoints ADD COLUMN changes TEXT NOT NULL DEFAULT '';
