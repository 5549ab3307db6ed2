package store

import (
	"context"
	"fmt"
	"time"
)

// Intent is a multi-step operation written down before it starts, so that
// a crash in between is finished at the next start (SPEC rule 6).
type Intent struct {
	ID        int64
	SessionID string
	Kind      string
	Payload   []byte
	CreatedAt time.Time
}

// AddIntent records an operation about to run and returns its id.
func AddIntent(ctx context.Context, q Querier, sessionID, kind string, payload []byte) (int64, error) {
	res, err := q.ExecContext(ctx, "INSERT INTO intents (session_id, kind, payload, state, created_at) VALUES (?, ?, ?, 'open', ?)",
		sessionID, kind, payload, formatTime(time.Now()))
	if err != nil {
		return 0, fmt.Errorf("add intent: %w", mapErr(err))
	}
	return res.LastInsertId()
}

// DoneIntent marks an operation finished (the row goes: finished intents
// have nothing left to say).
func DoneIntent(ctx context.Context, q Querier, id int64) error {
	if _, err := q.ExecContext(ctx, "DELETE FROM intents WHERE id = ?", id); err != nil {
		return fmt.Errorf("finish intent %d: %w", id, mapErr(err))
	}
	return nil
}

// OpenIntents lists the operations a crash cut off, oldest first.
func OpenIntents(ctx context.Context, q Querier) ([]Intent, error) {
	rows, err := q.QueryContext(ctx, "SELECT id, session_id, kind, payload, created_at FROM intents WHERE state = 'open' ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("open intents: %w", mapErr(err))
	}
	defer rows.Close()
	var out []Intent
	for rows.Next() {
		var in Intent
		var ts string
		if err := rows.Scan(&in.ID, &in.SessionID, &in.Kind, &in.Payload, &ts); err != nil {
			return nil, err
		}
		in.CreatedAt, _ = parseTime(ts)
		out = append(out, in)
	}
	return out, rows.Err()
}
