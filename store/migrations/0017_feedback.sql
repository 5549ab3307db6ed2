-- 0017: the review's feedback to the agent (issue 46): notes on
-- decisions, comments on a change's lines, and the notices of rejects and
-- rewinds. Each row is one item of its session's queue: who said it and
-- when, the change, file and lines it is about, what was decided, a short
-- excerpt of the hunk, the user's words, and what became of it: state
-- queued, delivering (handed to a hook's answer, attempts counts how
-- often; taken_at when), delivered (via: the hook event and tool call
-- that carried it) or undeliverable (why). A session's rows go with it.
CREATE TABLE feedback (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    record_id    TEXT NOT NULL DEFAULT '',
    kind         TEXT NOT NULL,
    decision     TEXT NOT NULL DEFAULT '',
    path         TEXT NOT NULL DEFAULT '',
    lines        TEXT NOT NULL DEFAULT '',
    excerpt      TEXT NOT NULL DEFAULT '',
    text         TEXT NOT NULL DEFAULT '',
    author       TEXT NOT NULL DEFAULT '',
    created_at   TEXT NOT NULL,
    state        TEXT NOT NULL DEFAULT 'queued',
    attempts     INTEGER NOT NULL DEFAULT 0,
    taken_at     TEXT,
    via          TEXT NOT NULL DEFAULT '',
    delivered_at TEXT,
    why          TEXT NOT NULL DEFAULT ''
);
CREATE INDEX feedback_queue ON feedback (session_id, state, id);
CREATE INDEX feedback_record ON feedback (session_id, record_id);
