-- 0009: when each record was rejected (NULL: not rejected, or rejected
-- before this column existed). A review-mode rewind compares it with its
-- checkpoint's time: a change rejected before the checkpoint was taken is
-- not in the checkpoint's tree, one rejected after it is.
ALTER TABLE records ADD COLUMN rejected_at TEXT;
