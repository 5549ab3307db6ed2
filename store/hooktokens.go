package store

import (
	"context"
	"fmt"
	"time"
)

// AddHookToken stores the hash of a hook token of session sessionID
// (migration 0014); prsm.ErrNotFound when there is no such session.
func AddHookToken(ctx context.Context, q Querier, sessionID, tokenHash string, now time.Time) error {
	_, err := q.ExecContext(ctx, "INSERT INTO hook_tokens (token_hash, session_id, created_at) VALUES (?, ?, ?)",
		tokenHash, sessionID, formatTime(now))
	if err != nil {
		return fmt.Errorf("add hook token of session %s: %w", sessionID, mapErr(err))
	}
	return nil
}

// HookTokenSession returns the session of the hook token whose hash is
// tokenHash, and that session's status; prsm.ErrNotFound when no token
// has that hash (or its session is gone).
func HookTokenSession(ctx context.Context, q Querier, tokenHash string) (sessionID, status string, err error) {
	err = q.QueryRowContext(ctx, `SELECT s.id, s.status FROM hook_tokens t JOIN sessions s ON s.id = t.session_id
		WHERE t.token_hash = ?`, tokenHash).Scan(&sessionID, &status)
	if err != nil {
		return "", "", fmt.Errorf("find hook token: %w", mapErr(err))
	}
	return sessionID, status, nil
}
