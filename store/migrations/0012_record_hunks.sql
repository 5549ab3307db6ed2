-- 0012: a text record's hunks, its blocks of changed lines as JSON
-- ([{index, old_start, old_lines, new_start, new_lines, status}]). A
-- record stored before has '' here: its hunks are worked out from its
-- contents when it is read (engine FillContent).
ALTER TABLE records ADD COLUMN hunks TEXT NOT NULL DEFAULT '';
