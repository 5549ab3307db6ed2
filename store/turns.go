package store

import (
	"context"
	"fmt"
	"time"
)

// MaxPrompt bounds the prompt a turn keeps: what is past it is cut.
const MaxPrompt = 64 << 10

// PutTurn stores the prompt of a session's turn n. A turn told again (the
// hook and prsm run both start one) keeps its first time, and takes the
// newer prompt unless that is empty.
func PutTurn(ctx context.Context, q Querier, sessionID string, n int, prompt string, at time.Time) error {
	if len(prompt) > MaxPrompt {
		prompt = prompt[:MaxPrompt]
	}
	_, err := q.ExecContext(ctx, `INSERT INTO turns (session_id, message_index, prompt, started_at)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (session_id, message_index) DO UPDATE SET prompt = excluded.prompt
		WHERE excluded.prompt != ''`, sessionID, n, prompt, formatTime(at))
	if err != nil {
		return fmt.Errorf("store turn %d of session %s: %w", n, sessionID, mapErr(err))
	}
	return nil
}

// TurnPrompts returns the prompts of a session's turns, by turn.
func TurnPrompts(ctx context.Context, q Querier, sessionID string) (map[int]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT message_index, prompt FROM turns WHERE session_id = ?`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("turns of session %s: %w", sessionID, mapErr(err))
	}
	defer rows.Close()
	out := map[int]string{}
	for rows.Next() {
		var (
			n int
			p string
		)
		if err := rows.Scan(&n, &p); err != nil {
			return nil, fmt.Errorf("turns of session %s: %w", sessionID, mapErr(err))
		}
		out[n] = p
	}
	return out, rows.Err()
}

// MarkCommitted notes the commit that prsm commit made of the records
// ids of a session.
func MarkCommitted(ctx context.Context, q Querier, sessionID, commit string, ids []string) error {
	for _, id := range ids {
		if _, err := q.ExecContext(ctx, `UPDATE records SET commit_id = ? WHERE session_id = ? AND id = ?`,
			commit, sessionID, id); err != nil {
			return fmt.Errorf("mark record %s committed: %w", id, mapErr(err))
		}
	}
	return nil
}
