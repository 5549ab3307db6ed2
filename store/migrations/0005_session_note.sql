-- 0005: why prsm itself ended a session (its worktree was deleted by hand,
-- say), so `prsm session show` and `prsm status` can say so.
ALTER TABLE sessions ADD COLUMN note TEXT NOT NULL DEFAULT '';
