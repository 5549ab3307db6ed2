-- 0014: per-session hook tokens. An agent's environment carries one of
-- these instead of the server's own token: it sends the hook events of its
-- one session and nothing else. Only a SHA-256 of each token is kept (the
-- token is 256 random bits, so no slower hash is needed); a token counts
-- while its session is active, so it survives a restart of the server and
-- dies with the session, and its rows go with the session (gc).
CREATE TABLE hook_tokens (
    token_hash TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL
);
CREATE INDEX hook_tokens_session ON hook_tokens (session_id);
