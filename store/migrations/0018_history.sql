-- 0018: where kept work went (issue 47). turns holds each turn's prompt,
-- for blame and for the messages of prsm commit (the checkpoint of a turn
-- keeps only its first words, and none when automatic checkpoints are
-- off). A record's commit_id is the commit prsm commit made of its
-- accepted lines; '' until then. A session's turns go with it.
CREATE TABLE turns (
    session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    message_index INTEGER NOT NULL,
    prompt        TEXT NOT NULL DEFAULT '',
    started_at    TEXT NOT NULL,
    PRIMARY KEY (session_id, message_index)
);
ALTER TABLE records ADD COLUMN commit_id TEXT NOT NULL DEFAULT '';
