package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prsm-dev/prsm"
)

const recordCols = `seq, id, session_id, file_path, rel_path, agent_id, change_type, tool_call_id,
	tool_name, message_index, old_hash, new_hash, pre_tool_hash, added_ranges, removed_ranges,
	timestamp, status, sync_state, binary, mode_before, mode_after, size_before, size_after, rejected_at, note, hunks, commit_id`

func scanRecord(sc scanner) (*prsm.Record, error) {
	var (
		r              prsm.Record
		added, removed string
		hunks          string
		ts             string
		rejectedAt     sql.NullString
	)
	if err := sc.Scan(&r.Seq, &r.ID, &r.SessionID, &r.FilePath, &r.RelPath, &r.AgentID,
		&r.ChangeType, &r.ToolCallID, &r.ToolName, &r.MessageIndex, &r.OldHash, &r.NewHash,
		&r.PreToolHash, &added, &removed, &ts, &r.Status, &r.SyncState, &r.Binary,
		&r.ModeBefore, &r.ModeAfter, &r.SizeBefore, &r.SizeAfter, &rejectedAt, &r.Note, &hunks, &r.Commit); err != nil {
		return nil, err
	}
	var err error
	if r.Timestamp, err = parseTime(ts); err != nil {
		return nil, err
	}
	if rejectedAt.Valid {
		if r.RejectedAt, err = parseTime(rejectedAt.String); err != nil {
			return nil, err
		}
	}
	if r.AddedRanges, err = decodeRanges(added); err != nil {
		return nil, err
	}
	if r.RemovedRanges, err = decodeRanges(removed); err != nil {
		return nil, err
	}
	if r.Hunks, err = decodeHunks(hunks); err != nil {
		return nil, err
	}
	return &r, nil
}

// storedHunk is a hunk as the store keeps it: with its RejectedAt.
type storedHunk struct {
	prsm.Hunk
	RejectedAt string `json:"rejected_at,omitempty"`
}

// encodeHunks stores a record's hunks; nil (not worked out) stays an
// empty text.
func encodeHunks(hs []prsm.Hunk) (string, error) {
	if hs == nil {
		return "", nil
	}
	out := make([]storedHunk, len(hs))
	for i, h := range hs {
		out[i].Hunk = h
		if !h.RejectedAt.IsZero() {
			out[i].RejectedAt = formatTime(h.RejectedAt)
		}
	}
	b, err := json.Marshal(out)
	return string(b), err
}

// decodeHunks reads a record's hunks: nil for a record stored before
// prsm kept them (an empty text). Each keeps the status a decision of
// that hunk alone gave it (pending when none did); what a record decided
// whole shows is its record's business (prsm.Record's MarshalJSON).
func decodeHunks(s string) ([]prsm.Hunk, error) {
	if s == "" {
		return nil, nil
	}
	var stored []storedHunk
	if err := json.Unmarshal([]byte(s), &stored); err != nil {
		return nil, fmt.Errorf("decode hunks: %w", err)
	}
	hs := make([]prsm.Hunk, len(stored))
	for i, h := range stored {
		hs[i] = h.Hunk
		if hs[i].Status == "" {
			hs[i].Status = prsm.StatusPending
		}
		if h.RejectedAt != "" {
			t, err := parseTime(h.RejectedAt)
			if err != nil {
				return nil, fmt.Errorf("decode hunks: %w", err)
			}
			hs[i].RejectedAt = t
		}
	}
	return hs, nil
}

// UpdateRecordHunks stores the hunks of a record, with their statuses.
func UpdateRecordHunks(ctx context.Context, q Querier, sessionID, id string, hunks []prsm.Hunk) error {
	b, err := encodeHunks(hunks)
	if err != nil {
		return err
	}
	if err := keepState(ctx, q, sessionID, id); err != nil {
		return err
	}
	res, err := q.ExecContext(ctx, "UPDATE records SET hunks = ? WHERE session_id = ? AND id = ?", b, sessionID, id)
	if err == nil {
		err = mustAffect(res)
	}
	if err != nil {
		return fmt.Errorf("update hunks of record %s: %w", id, mapErr(err))
	}
	return nil
}

func encodeRanges(rs []prsm.Range) (string, error) {
	if len(rs) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(rs)
	return string(b), err
}

// decodeRanges always returns a non-nil slice, so a record without ranges
// encodes them as [] rather than null.
func decodeRanges(s string) ([]prsm.Range, error) {
	rs := []prsm.Range{}
	if err := json.Unmarshal([]byte(s), &rs); err != nil {
		return nil, fmt.Errorf("decode ranges: %w", err)
	}
	if rs == nil {
		rs = []prsm.Range{}
	}
	return rs, nil
}

// InsertRecord stores r and sets r.Seq. Contents are not stored here: put
// them with PutBlob and set the *Hash fields; the content pointer fields are
// ignored. It fails with prsm.ErrConflict when the session already has a
// record with r.ID, and with prsm.ErrNotFound when the session does not
// exist.
func InsertRecord(ctx context.Context, q Querier, r *prsm.Record) error {
	if r.ID == "" {
		return fmt.Errorf("insert record: empty id: %w", prsm.ErrInvalid)
	}
	added, err := encodeRanges(r.AddedRanges)
	if err != nil {
		return fmt.Errorf("insert record %s: %w", r.ID, err)
	}
	removed, err := encodeRanges(r.RemovedRanges)
	if err != nil {
		return fmt.Errorf("insert record %s: %w", r.ID, err)
	}
	hunks, err := encodeHunks(r.Hunks)
	if err != nil {
		return fmt.Errorf("insert record %s: %w", r.ID, err)
	}
	var seq int64
	err = q.QueryRowContext(ctx, `INSERT INTO records (id, session_id, file_path, rel_path, agent_id,
		change_type, tool_call_id, tool_name, message_index, old_hash, new_hash, pre_tool_hash,
		added_ranges, removed_ranges, timestamp, status, sync_state, binary, mode_before,
		mode_after, size_before, size_after, note, hunks)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING seq`,
		r.ID, r.SessionID, r.FilePath, r.RelPath, r.AgentID, r.ChangeType, r.ToolCallID,
		r.ToolName, r.MessageIndex, r.OldHash, r.NewHash, r.PreToolHash, added, removed,
		formatTime(r.Timestamp), r.Status, r.SyncState, r.Binary, r.ModeBefore, r.ModeAfter,
		r.SizeBefore, r.SizeAfter, r.Note, hunks).Scan(&seq)
	if err != nil {
		return fmt.Errorf("insert record %s: %w", r.ID, mapErr(err))
	}
	r.Seq = seq
	return nil
}

// GetRecord returns one record of a session. Its content pointer fields are
// nil; the caller fills them from the blob store.
func GetRecord(ctx context.Context, q Querier, sessionID, id string) (*prsm.Record, error) {
	r, err := scanRecord(q.QueryRowContext(ctx, "SELECT "+recordCols+
		" FROM records WHERE session_id = ? AND id = ?", sessionID, id))
	if err != nil {
		return nil, fmt.Errorf("get record %s: %w", id, mapErr(err))
	}
	return r, nil
}

// RecordFilter selects records for ListRecords. Empty fields match
// everything.
type RecordFilter struct {
	// SessionID limits the list to one session.
	SessionID string
	// RelPath limits the list to one workspace-relative path.
	RelPath string
	// Status limits the list to one status (prsm.StatusPending, ...).
	Status string
	// SyncState limits the list to one sync state (prsm.SyncConflict,
	// ...); with Status and SessionID, records_status finds the rows.
	SyncState string
	// ToolCallID matches records of that tool call: the exact id, or the id
	// with a ":N" suffix that a multi-file tool call gives its records.
	ToolCallID string
	// AfterSeq limits the list to records inserted after the one with
	// this sequence number (a checkpoint's RecordSeq): a rewind reads what
	// came after its checkpoint, not the whole session.
	AfterSeq int64
	// Limit, when above 0, bounds the list to its first Limit records (a
	// page: the next one starts after the last one's Seq).
	Limit int
}

// ListRecords returns the records that f selects, in the order they were
// inserted. Their content pointer fields are nil.
func ListRecords(ctx context.Context, q Querier, f RecordFilter) ([]*prsm.Record, error) {
	query, args := recordsQuery(f)
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list records: %w", mapErr(err))
	}
	rs, err := collect(rows, scanRecord)
	if err != nil {
		return nil, fmt.Errorf("list records: %w", mapErr(err))
	}
	return rs, nil
}

// recordsQuery is ListRecords' query and its arguments.
func recordsQuery(f RecordFilter) (string, []any) {
	var (
		where []string
		args  []any
	)
	if f.SessionID != "" {
		// A page of a session's records (no other filter) reads the
		// table by seq from where the last page ended: the unary + keeps
		// sqlite from taking an index by session, which holds no seq
		// order and made every page sort the whole session.
		cond := "session_id = ?"
		if f.Limit > 0 && f.RelPath == "" && f.Status == "" && f.ToolCallID == "" && f.SyncState == "" {
			cond = "+session_id = ?"
		}
		where = append(where, cond)
		args = append(args, f.SessionID)
	}
	if f.RelPath != "" {
		where = append(where, "rel_path = ?")
		args = append(args, f.RelPath)
	}
	if f.Status != "" {
		// With a file or a tool call named, their index finds the few
		// rows: the unary + keeps sqlite from taking records_status,
		// which reads every pending record of the session.
		cond := "status = ?"
		if f.RelPath != "" || f.ToolCallID != "" {
			cond = "+status = ?"
		}
		where = append(where, cond)
		args = append(args, f.Status)
	}
	if f.SyncState != "" {
		where = append(where, "+sync_state = ?")
		args = append(args, f.SyncState)
	}
	if f.ToolCallID != "" {
		// Either the id itself, or id + ":" + one or more digits. The
		// range (every id that starts with the id and goes on with a
		// byte below ';', the one after ':') lets records_tool_call find
		// them without reading every record of the session.
		cond := `tool_call_id >= ? AND tool_call_id < ? || ';' AND (tool_call_id = ? OR (
			substr(tool_call_id, 1, length(?) + 1) = ? || ':'
			AND substr(tool_call_id, length(?) + 2) GLOB '[0-9]*'
			AND substr(tool_call_id, length(?) + 2) NOT GLOB '*[^0-9]*'))`
		where = append(where, cond)
		args = append(args, slices.Repeat([]any{f.ToolCallID}, strings.Count(cond, "?"))...)
	}
	if f.AfterSeq > 0 {
		where = append(where, "seq > ?")
		args = append(args, f.AfterSeq)
	}
	query := "SELECT " + recordCols + " FROM records"
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY seq"
	if f.Limit > 0 {
		query += " LIMIT ?"
		args = append(args, f.Limit)
	}
	return query, args
}

// UpdateRecordState sets a record's status and sync state.
func UpdateRecordState(ctx context.Context, q Querier, sessionID, id, status, syncState string) error {
	if err := keepState(ctx, q, sessionID, id); err != nil {
		return err
	}
	res, err := q.ExecContext(ctx,
		"UPDATE records SET status = ?, sync_state = ? WHERE session_id = ? AND id = ?",
		status, syncState, sessionID, id)
	if err == nil {
		err = mustAffect(res)
	}
	if err != nil {
		return fmt.Errorf("update record %s: %w", id, mapErr(err))
	}
	return nil
}

// MarkRejected keeps the time a reject took a record's change out of the
// worktree (RejectedAt), the first time only.
func MarkRejected(ctx context.Context, q Querier, sessionID, id string, at time.Time) error {
	if err := keepState(ctx, q, sessionID, id); err != nil {
		return err
	}
	res, err := q.ExecContext(ctx,
		"UPDATE records SET rejected_at = COALESCE(rejected_at, ?) WHERE session_id = ? AND id = ?",
		formatTime(at), sessionID, id)
	if err == nil {
		err = mustAffect(res)
	}
	if err != nil {
		return fmt.Errorf("mark record %s rejected: %w", id, mapErr(err))
	}
	return nil
}

// UpdateRecordNote sets a record's note.
func UpdateRecordNote(ctx context.Context, q Querier, sessionID, id, note string) error {
	res, err := q.ExecContext(ctx, "UPDATE records SET note = ? WHERE session_id = ? AND id = ?", note, sessionID, id)
	if err == nil {
		err = mustAffect(res)
	}
	if err != nil {
		return fmt.Errorf("update note of record %s: %w", id, mapErr(err))
	}
	return nil
}

// ListRecordsWithNote returns the records of every session whose note is
// note, in insertion order.
func ListRecordsWithNote(ctx context.Context, q Querier, note string) ([]*prsm.Record, error) {
	rows, err := q.QueryContext(ctx, "SELECT "+recordCols+" FROM records WHERE note = ? ORDER BY seq", note)
	if err != nil {
		return nil, fmt.Errorf("list records: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*prsm.Record
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// keepState adds to the review history what a record's state is now,
// before a change of it: a rewind gives the record back the state it had
// at a checkpoint (StatesAt).
func keepState(ctx context.Context, q Querier, sessionID, id string) error {
	if _, err := q.ExecContext(ctx, `INSERT INTO record_history (session_id, record_id, status, sync_state, hunks, rejected_at)
		SELECT session_id, id, status, sync_state, hunks, rejected_at FROM records WHERE session_id = ? AND id = ?`, sessionID, id); err != nil {
		return fmt.Errorf("keep state of record %s: %w", id, mapErr(err))
	}
	return nil
}

// RecordState is a record's review state: what a rewind gives back.
type RecordState struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	SyncState  string `json:"sync_state"`
	Hunks      string `json:"hunks,omitempty"`       // as stored
	RejectedAt string `json:"rejected_at,omitempty"` // as stored, "" for none
}

// StateOf is r's review state as the store keeps it.
func StateOf(r *prsm.Record) (RecordState, error) {
	h, err := encodeHunks(r.Hunks)
	if err != nil {
		return RecordState{}, err
	}
	st := RecordState{ID: r.ID, Status: r.Status, SyncState: r.SyncState, Hunks: h}
	if !r.RejectedAt.IsZero() {
		st.RejectedAt = formatTime(r.RejectedAt)
	}
	return st, nil
}

// Apply gives r the state st (a copy of r when it differs, for a plan to
// work on without changing what it read).
func (st RecordState) Apply(r *prsm.Record) (*prsm.Record, error) {
	c := *r
	c.Status, c.SyncState = st.Status, st.SyncState
	hs, err := decodeHunks(st.Hunks)
	if err != nil {
		return nil, err
	}
	if hs != nil || st.Hunks == "" && r.Hunks == nil {
		c.Hunks = hs
	}
	c.RejectedAt = time.Time{}
	if st.RejectedAt != "" {
		if c.RejectedAt, err = parseTime(st.RejectedAt); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// StatesAt returns, by record id, the state each record of a session had
// when the review history ended at seq (a checkpoint's DecisionSeq): the
// first entry after it. A record with none has not changed since.
func StatesAt(ctx context.Context, q Querier, sessionID string, seq int64) (map[string]RecordState, error) {
	rows, err := q.QueryContext(ctx, `SELECT record_id, status, sync_state, hunks, COALESCE(rejected_at, '')
		FROM record_history WHERE session_id = ? AND seq > ? ORDER BY seq`, sessionID, seq)
	if err != nil {
		return nil, fmt.Errorf("record states at %d: %w", seq, mapErr(err))
	}
	defer rows.Close()
	out := map[string]RecordState{}
	for rows.Next() {
		var st RecordState
		if err := rows.Scan(&st.ID, &st.Status, &st.SyncState, &st.Hunks, &st.RejectedAt); err != nil {
			return nil, fmt.Errorf("record states at %d: %w", seq, mapErr(err))
		}
		if _, ok := out[st.ID]; !ok {
			out[st.ID] = st
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("record states at %d: %w", seq, mapErr(err))
	}
	return out, nil
}

// RestoreRecordState gives a record the state st (kept in the history
// first, as every change is).
func RestoreRecordState(ctx context.Context, q Querier, sessionID string, st RecordState) error {
	if err := keepState(ctx, q, sessionID, st.ID); err != nil {
		return err
	}
	var rejectedAt any
	if st.RejectedAt != "" {
		rejectedAt = st.RejectedAt
	}
	res, err := q.ExecContext(ctx, "UPDATE records SET status = ?, sync_state = ?, hunks = ?, rejected_at = ? WHERE session_id = ? AND id = ?",
		st.Status, st.SyncState, st.Hunks, rejectedAt, sessionID, st.ID)
	if err == nil {
		err = mustAffect(res)
	}
	if err != nil {
		return fmt.Errorf("restore record %s: %w", st.ID, mapErr(err))
	}
	return nil
}

// Reattribute gives the record seq of session sessionID to another tool
// call: its id, tool call, tool and agent change (its review history
// follows the id), nothing else. It does so only while the record is
// pending and synced (or waiting for review), and the new id is free; it
// reports whether it did. Run it in a transaction.
func Reattribute(ctx context.Context, q Querier, sessionID string, seq int64, id, toolCallID, toolName, agentID string) (bool, error) {
	var old string
	err := q.QueryRowContext(ctx, `SELECT id FROM records WHERE session_id = ? AND seq = ? AND status = ? AND sync_state IN (?, ?)
		AND NOT EXISTS (SELECT 1 FROM records o WHERE o.session_id = records.session_id AND o.id = ?)`,
		sessionID, seq, prsm.StatusPending, prsm.SyncSynced, prsm.SyncPendingReview, id).Scan(&old)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reattribute record %d: %w", seq, mapErr(err))
	}
	if _, err := q.ExecContext(ctx, `UPDATE records SET id = ?, tool_call_id = ?, tool_name = ?, agent_id = ? WHERE session_id = ? AND seq = ?`,
		id, toolCallID, toolName, agentID, sessionID, seq); err != nil {
		return false, fmt.Errorf("reattribute record %s: %w", old, mapErr(err))
	}
	if _, err := q.ExecContext(ctx, `UPDATE record_history SET record_id = ? WHERE session_id = ? AND record_id = ?`, id, sessionID, old); err != nil {
		return false, fmt.Errorf("reattribute the history of record %s: %w", old, mapErr(err))
	}
	return true, nil
}
