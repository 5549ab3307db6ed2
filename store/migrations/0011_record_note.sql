-- 0011: a record's note says what a user should know of it that its
-- other fields do not: a side too large to keep, held as a stub (its
-- size and a hash) with no copy of its content.
ALTER TABLE records ADD COLUMN note TEXT NOT NULL DEFAULT '';
