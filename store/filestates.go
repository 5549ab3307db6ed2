package store

import (
	"context"
	"fmt"
)

// FileState is what the tracker knows a session file to be: present or not,
// its mode (st_mode bits: type and permissions) and the blob hash of its
// content.
type FileState struct {
	Present bool
	Mode    uint32
	Hash    string
	Size    int64
}

// PutFileState records the known state of one session file.
func PutFileState(ctx context.Context, q Querier, sessionID, rel string, st FileState) error {
	_, err := q.ExecContext(ctx, `INSERT INTO file_states (session_id, rel_path, present, mode, hash, size)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (session_id, rel_path) DO UPDATE SET present = excluded.present,
			mode = excluded.mode, hash = excluded.hash, size = excluded.size`,
		sessionID, rel, st.Present, st.Mode, st.Hash, st.Size)
	if err != nil {
		return fmt.Errorf("put file state %s: %w", rel, mapErr(err))
	}
	return nil
}

// ListFileStates returns every known file state of a session by path.
func ListFileStates(ctx context.Context, q Querier, sessionID string) (map[string]FileState, error) {
	rows, err := q.QueryContext(ctx, `SELECT rel_path, present, mode, hash, size FROM file_states WHERE session_id = ?`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("list file states: %w", mapErr(err))
	}
	defer rows.Close()
	m := map[string]FileState{}
	for rows.Next() {
		var rel string
		var st FileState
		if err := rows.Scan(&rel, &st.Present, &st.Mode, &st.Hash, &st.Size); err != nil {
			return nil, fmt.Errorf("list file states: %w", err)
		}
		m[rel] = st
	}
	return m, rows.Err()
}
