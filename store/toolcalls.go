package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/prsm-dev/prsm"
)

const toolCallCols = `session_id, id, tool_name, args, agent_id, cwd, message_index, snapshot,
	result, started_at, completed_at`

func scanToolCall(sc scanner) (*prsm.ToolCall, error) {
	var (
		tc        prsm.ToolCall
		started   string
		completed sql.NullString
	)
	if err := sc.Scan(&tc.SessionID, &tc.ID, &tc.ToolName, &tc.Args, &tc.AgentID, &tc.Cwd,
		&tc.MessageIndex, &tc.Snapshot, &tc.Result, &started, &completed); err != nil {
		return nil, err
	}
	var err error
	if tc.StartedAt, err = parseTime(started); err != nil {
		return nil, err
	}
	if tc.CompletedAt, err = parseNullTime(completed); err != nil {
		return nil, err
	}
	return &tc, nil
}

// InsertToolCall stores tc. It fails with prsm.ErrConflict when the session
// already has a tool call with tc.ID, and with prsm.ErrNotFound when the
// session does not exist.
func InsertToolCall(ctx context.Context, q Querier, tc *prsm.ToolCall) error {
	if tc.ID == "" {
		return fmt.Errorf("insert tool call: empty id: %w", prsm.ErrInvalid)
	}
	_, err := q.ExecContext(ctx, "INSERT INTO tool_calls ("+toolCallCols+
		") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		tc.SessionID, tc.ID, tc.ToolName, keepJSON(tc.Args), tc.AgentID, tc.Cwd, tc.MessageIndex,
		tc.Snapshot, tc.Result, formatTime(tc.StartedAt), formatNullTime(tc.CompletedAt))
	if err != nil {
		return fmt.Errorf("insert tool call %s: %w", tc.ID, mapErr(err))
	}
	return nil
}

// GetToolCall returns one tool call of a session.
func GetToolCall(ctx context.Context, q Querier, sessionID, id string) (*prsm.ToolCall, error) {
	tc, err := scanToolCall(q.QueryRowContext(ctx, "SELECT "+toolCallCols+
		" FROM tool_calls WHERE session_id = ? AND id = ?", sessionID, id))
	if err != nil {
		return nil, fmt.Errorf("get tool call %s: %w", id, mapErr(err))
	}
	return tc, nil
}

// ToolCallIDs returns the ids of a session's tool calls.
func ToolCallIDs(ctx context.Context, q Querier, sessionID string) (map[string]bool, error) {
	rows, err := q.QueryContext(ctx, "SELECT id FROM tool_calls WHERE session_id = ?", sessionID)
	if err != nil {
		return nil, fmt.Errorf("list tool call ids: %w", mapErr(err))
	}
	list, err := collect(rows, func(sc scanner) (id string, err error) { return id, sc.Scan(&id) })
	if err != nil {
		return nil, fmt.Errorf("list tool call ids: %w", mapErr(err))
	}
	ids := make(map[string]bool, len(list))
	for _, id := range list {
		ids[id] = true
	}
	return ids, nil
}

// OpenToolCalls lists session sessionID's tool calls not completed (id ->
// started_at): one pass over the session's rows, none of them decoded.
func OpenToolCalls(ctx context.Context, q Querier, sessionID string) (map[string]time.Time, error) {
	rows, err := q.QueryContext(ctx, "SELECT id, started_at FROM tool_calls WHERE session_id = ? AND completed_at IS NULL", sessionID)
	if err != nil {
		return nil, fmt.Errorf("open tool calls of %s: %w", sessionID, mapErr(err))
	}
	defer rows.Close()
	open := map[string]time.Time{}
	for rows.Next() {
		var id, started string
		if err := rows.Scan(&id, &started); err != nil {
			return nil, fmt.Errorf("open tool calls of %s: %w", sessionID, mapErr(err))
		}
		t, err := parseTime(started)
		if err != nil {
			return nil, err
		}
		open[id] = t
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("open tool calls of %s: %w", sessionID, mapErr(err))
	}
	return open, nil
}

// MaxMessageIndex is the highest message index of session sessionID's
// tool calls (0 when it has none).
func MaxMessageIndex(ctx context.Context, q Querier, sessionID string) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, "SELECT COALESCE(MAX(message_index), 0) FROM tool_calls WHERE session_id = ?", sessionID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("message index of %s: %w", sessionID, mapErr(err))
	}
	return n, nil
}

// CompleteToolCall stores the result of a tool call and when it completed.
func CompleteToolCall(ctx context.Context, q Querier, sessionID, id string, result []byte, at time.Time) error {
	res, err := q.ExecContext(ctx,
		"UPDATE tool_calls SET result = ?, completed_at = ? WHERE session_id = ? AND id = ?",
		keepJSON(result), formatTime(at), sessionID, id)
	if err == nil {
		err = mustAffect(res)
	}
	if err != nil {
		return fmt.Errorf("complete tool call %s: %w", id, mapErr(err))
	}
	return nil
}

// ListToolCalls returns a session's tool calls in the order they started.
func ListToolCalls(ctx context.Context, q Querier, sessionID string) ([]*prsm.ToolCall, error) {
	rows, err := q.QueryContext(ctx, "SELECT "+toolCallCols+
		" FROM tool_calls WHERE session_id = ? ORDER BY started_at, rowid", sessionID)
	if err != nil {
		return nil, fmt.Errorf("list tool calls: %w", mapErr(err))
	}
	tcs, err := collect(rows, scanToolCall)
	if err != nil {
		return nil, fmt.Errorf("list tool calls: %w", mapErr(err))
	}
	return tcs, nil
}

// maxToolJSON bounds the arguments and the result a tool call keeps, and
// maxToolString each string in them beyond that bound. They may carry
// whole files (a Write's content; Claude Code sends an Edit's whole file
// back as originalFile), which the records' blobs hold already, once.
const (
	maxToolJSON   = 64 << 10
	maxToolString = 1 << 10
)

// keepJSON is b, or where it is longer than maxToolJSON, b with its long
// top-level values replaced by a note of their size (an object's short
// fields, a file_path, stay), or else a note of b's size.
func keepJSON(b []byte) []byte {
	if len(b) <= maxToolJSON {
		return b
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) == nil {
		for k, v := range m {
			if len(v) > maxToolString {
				m[k], _ = json.Marshal(fmt.Sprintf("(%d bytes, not kept)", len(v)))
			}
		}
		if out, err := json.Marshal(m); err == nil && len(out) <= maxToolJSON {
			return out
		}
	}
	out, _ := json.Marshal(map[string]string{"prsm": fmt.Sprintf("%d bytes, not kept", len(b))})
	return out
}
