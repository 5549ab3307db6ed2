package store

import (
	"context"
	"fmt"

	"github.com/prsm-dev/prsm"
)

const checkpointCols = `id, session_id, kind, name, annotation, message_index, tool_call_id, tree,
	commit_id, created_at, record_seq, files_changed, decision_seq`

func scanCheckpoint(sc scanner) (*prsm.Checkpoint, error) { return scanCheckpointAnd(sc) }

// scanCheckpointAnd scans the checkpointCols, then into extra the columns
// selected after them.
func scanCheckpointAnd(sc scanner, extra ...any) (*prsm.Checkpoint, error) {
	var (
		c       prsm.Checkpoint
		created string
	)
	if err := sc.Scan(append([]any{&c.ID, &c.SessionID, &c.Kind, &c.Name, &c.Annotation, &c.MessageIndex,
		&c.ToolCallID, &c.Tree, &c.Commit, &created, &c.RecordSeq, &c.FilesChanged, &c.DecisionSeq}, extra...)...); err != nil {
		return nil, err
	}
	var err error
	if c.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	return &c, nil
}

// InsertCheckpoint stores c. It fails with prsm.ErrConflict when a
// checkpoint with c.ID exists (in any session), and with prsm.ErrNotFound
// when the session does not exist.
func InsertCheckpoint(ctx context.Context, q Querier, c *prsm.Checkpoint) error {
	if c.ID == "" {
		return fmt.Errorf("insert checkpoint: empty id: %w", prsm.ErrInvalid)
	}
	return insertCheckpoint(ctx, q, c, "")
}

func insertCheckpoint(ctx context.Context, q Querier, c *prsm.Checkpoint, changes string) error {
	_, err := q.ExecContext(ctx, "INSERT INTO checkpoints ("+checkpointCols+
		", changes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		c.ID, c.SessionID, c.Kind, c.Name, c.Annotation, c.MessageIndex, c.ToolCallID, c.Tree,
		c.Commit, formatTime(c.CreatedAt), c.RecordSeq, c.FilesChanged, c.DecisionSeq, changes)
	if err != nil {
		return fmt.Errorf("insert checkpoint %s: %w", c.ID, mapErr(err))
	}
	return nil
}

// InsertLazyCheckpoint stores c, whose tree and commit are not built
// yet, with changes, what it holds against the checkpoint before it (not
// empty: it marks the row as not built).
func InsertLazyCheckpoint(ctx context.Context, q Querier, c *prsm.Checkpoint, changes string) error {
	if c.ID == "" || changes == "" {
		return fmt.Errorf("insert checkpoint: empty id or changes: %w", prsm.ErrInvalid)
	}
	return insertCheckpoint(ctx, q, c, changes)
}

// LazyCheckpoint is a checkpoint whose tree and commit are not built,
// with the changes it was stored with.
type LazyCheckpoint struct {
	*prsm.Checkpoint
	Changes string
}

// ListLazyCheckpoints returns the checkpoints of a session ("": of every
// session) whose trees are not built, oldest first.
func ListLazyCheckpoints(ctx context.Context, q Querier, sessionID string) ([]LazyCheckpoint, error) {
	rows, err := q.QueryContext(ctx, "SELECT "+checkpointCols+", changes"+
		" FROM checkpoints WHERE changes != '' AND (?1 = '' OR session_id = ?1) ORDER BY created_at, rowid", sessionID)
	if err != nil {
		return nil, fmt.Errorf("list checkpoints: %w", mapErr(err))
	}
	out, err := collect(rows, func(sc scanner) (LazyCheckpoint, error) {
		var lc LazyCheckpoint
		c, err := scanCheckpointAnd(sc, &lc.Changes)
		lc.Checkpoint = c
		return lc, err
	})
	if err != nil {
		return nil, fmt.Errorf("list checkpoints: %w", mapErr(err))
	}
	return out, nil
}

// SetCheckpointTree stores the built tree and commit of a checkpoint
// stored with its changes (InsertLazyCheckpoint).
func SetCheckpointTree(ctx context.Context, q Querier, sessionID, id, tree, commit string) error {
	_, err := q.ExecContext(ctx,
		"UPDATE checkpoints SET tree = ?, commit_id = ?, changes = '' WHERE session_id = ? AND id = ?",
		tree, commit, sessionID, id)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", id, mapErr(err))
	}
	return nil
}

// GetCheckpoint returns a checkpoint of a session; a checkpoint of another
// session is prsm.ErrNotFound.
func GetCheckpoint(ctx context.Context, q Querier, sessionID, id string) (*prsm.Checkpoint, error) {
	c, err := scanCheckpoint(q.QueryRowContext(ctx, "SELECT "+checkpointCols+
		" FROM checkpoints WHERE session_id = ? AND id = ?", sessionID, id))
	if err != nil {
		return nil, fmt.Errorf("get checkpoint %s: %w", id, mapErr(err))
	}
	return c, nil
}

// ListCheckpoints returns a session's checkpoints, oldest first.
func ListCheckpoints(ctx context.Context, q Querier, sessionID string) ([]*prsm.Checkpoint, error) {
	rows, err := q.QueryContext(ctx, "SELECT "+checkpointCols+
		" FROM checkpoints WHERE session_id = ? ORDER BY created_at, rowid", sessionID)
	if err != nil {
		return nil, fmt.Errorf("list checkpoints: %w", mapErr(err))
	}
	cs, err := collect(rows, scanCheckpoint)
	if err != nil {
		return nil, fmt.Errorf("list checkpoints: %w", mapErr(err))
	}
	return cs, nil
}

// UpdateCheckpointAnnotation replaces a checkpoint's annotation.
func UpdateCheckpointAnnotation(ctx context.Context, q Querier, sessionID, id, annotation string) error {
	res, err := q.ExecContext(ctx,
		"UPDATE checkpoints SET annotation = ? WHERE session_id = ? AND id = ?",
		annotation, sessionID, id)
	if err == nil {
		err = mustAffect(res)
	}
	if err != nil {
		return fmt.Errorf("annotate checkpoint %s: %w", id, mapErr(err))
	}
	return nil
}

// RenameCheckpoint sets a checkpoint's name and message index: a turn
// that takes over the checkpoint of the empty turn before it.
func RenameCheckpoint(ctx context.Context, q Querier, sessionID, id, name string, messageIndex int) error {
	res, err := q.ExecContext(ctx,
		"UPDATE checkpoints SET name = ?, message_index = ? WHERE session_id = ? AND id = ?",
		name, messageIndex, sessionID, id)
	if err == nil {
		err = mustAffect(res)
	}
	if err != nil {
		return fmt.Errorf("rename checkpoint %s: %w", id, mapErr(err))
	}
	return nil
}

// DeleteCheckpoint removes a checkpoint of a session. The blobs it refers to
// stay.
func DeleteCheckpoint(ctx context.Context, q Querier, sessionID, id string) error {
	res, err := q.ExecContext(ctx, "DELETE FROM checkpoints WHERE session_id = ? AND id = ?", sessionID, id)
	if err == nil {
		err = mustAffect(res)
	}
	if err != nil {
		return fmt.Errorf("delete checkpoint %s: %w", id, mapErr(err))
	}
	return nil
}

// CountCheckpoints returns how many checkpoints of the given kind ("" for
// any) a session has.
func CountCheckpoints(ctx context.Context, q Querier, sessionID, kind string) (int, error) {
	var n int
	err := q.QueryRowContext(ctx,
		"SELECT COUNT(*) FROM checkpoints WHERE session_id = ?1 AND (?2 = '' OR kind = ?2)",
		sessionID, kind).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count checkpoints: %w", mapErr(err))
	}
	return n, nil
}

// ResolveCheckpoint returns a session's checkpoint by id or unique prefix.
func ResolveCheckpoint(ctx context.Context, q Querier, sessionID, idOrPrefix string) (*prsm.Checkpoint, error) {
	if idOrPrefix == "" {
		return nil, fmt.Errorf("resolve checkpoint: empty id: %w", prsm.ErrInvalid)
	}
	if c, err := GetCheckpoint(ctx, q, sessionID, idOrPrefix); err == nil {
		return c, nil
	}
	rows, err := q.QueryContext(ctx, "SELECT "+checkpointCols+
		" FROM checkpoints WHERE session_id = ? AND substr(id, 1, length(?)) = ? ORDER BY created_at, rowid LIMIT 10",
		sessionID, idOrPrefix, idOrPrefix)
	if err != nil {
		return nil, fmt.Errorf("resolve checkpoint %s: %w", idOrPrefix, mapErr(err))
	}
	defer rows.Close()
	var found []*prsm.Checkpoint
	for rows.Next() {
		c, err := scanCheckpoint(rows)
		if err != nil {
			return nil, err
		}
		found = append(found, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("resolve checkpoint %s: %w", idOrPrefix, prsm.ErrNotFound)
	case 1:
		return found[0], nil
	}
	amb := &AmbiguousError{Prefix: idOrPrefix}
	for _, c := range found {
		amb.Matches = append(amb.Matches, c.ID)
	}
	return nil, amb
}

// lastRecordSeq reads the end of records' rowid, whatever the session:
// one b-tree descent.
const lastRecordSeqQuery = "SELECT COALESCE(MAX(seq), 0) FROM records"

// LastRecordSeq returns the newest record sequence number over all
// sessions (0 when there are none). A checkpoint notes it: the records of
// its session made after it are those with a greater seq, as seq only
// grows (AUTOINCREMENT never reuses a number).
func LastRecordSeq(ctx context.Context, q Querier) (int64, error) {
	var n int64
	if err := q.QueryRowContext(ctx, lastRecordSeqQuery).Scan(&n); err != nil {
		return 0, fmt.Errorf("last record seq: %w", mapErr(err))
	}
	return n, nil
}

// LastDecisionSeq returns the newest entry of the records' review
// history over all sessions (0 when there is none). A checkpoint notes it
// (prsm.Checkpoint.DecisionSeq).
func LastDecisionSeq(ctx context.Context, q Querier) (int64, error) {
	var n int64
	if err := q.QueryRowContext(ctx, "SELECT COALESCE(MAX(seq), 0) FROM record_history").Scan(&n); err != nil {
		return 0, fmt.Errorf("last decision seq: %w", mapErr(err))
	}
	return n, nil
}

// SetAutoCheckpoints switches a session's automatic checkpoints on or off.
func SetAutoCheckpoints(ctx context.Context, q Querier, sessionID string, on bool) error {
	res, err := q.ExecContext(ctx, "UPDATE sessions SET auto_checkpoints = ? WHERE id = ?", on, sessionID)
	if err != nil {
		return fmt.Errorf("set auto checkpoints: %w", mapErr(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("set auto checkpoints %s: %w", sessionID, prsm.ErrNotFound)
	}
	return nil
}

// AutoCheckpoints reports whether a session takes automatic checkpoints.
func AutoCheckpoints(ctx context.Context, q Querier, sessionID string) (bool, error) {
	var on bool
	if err := q.QueryRowContext(ctx, "SELECT auto_checkpoints FROM sessions WHERE id = ?", sessionID).Scan(&on); err != nil {
		return false, fmt.Errorf("auto checkpoints %s: %w", sessionID, mapErr(err))
	}
	return on, nil
}
