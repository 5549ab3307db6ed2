-- 0015: the kv table of 0001 was never used by prsm; it goes.
DROP TABLE IF EXISTS kv;
