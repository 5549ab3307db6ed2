-- 0009: when a user's reject (or its cascade) took each record's change
-- out of the worktree. NULL: not rejected that way (a rollback's rejects
-- leave it NULL: its own records carry what it took out), or rejected
-- before this column existed. A review-mode rewind compares it with its
-- checkpoint's time: a change rejected before the checkpoint was taken is
-- not in the checkpoint's tree, one rejected after it is.
ALTER TABLE records ADD COLUMN rejected_at TEXT;
