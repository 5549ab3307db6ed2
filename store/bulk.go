package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/prsm-dev/prsm"
)

// RecordRef is what a bulk operation plans with, of each record: its
// order, id, path and kind of change, without its contents, ranges and
// hunks, so that the plan of 200k records takes a few MB.
type RecordRef struct {
	Seq        int64
	ID         string
	RelPath    string
	ChangeType string
	// SyncState (PendingRefs only) says whether the record is in conflict.
	SyncState string
}

// PendingRefs returns the pending records of a session (of the file
// relPath, when set) in the order they were inserted.
func PendingRefs(ctx context.Context, q Querier, sessionID, relPath string) ([]RecordRef, error) {
	query := "SELECT seq, id, rel_path, change_type, sync_state FROM records WHERE session_id = ? AND status = ? ORDER BY seq"
	args := []any{sessionID, prsm.StatusPending}
	if relPath != "" {
		// records_rel_path, not records_status (see recordsQuery).
		query = "SELECT seq, id, rel_path, change_type, sync_state FROM records WHERE session_id = ? AND rel_path = ? AND +status = ? ORDER BY seq"
		args = []any{sessionID, relPath, prsm.StatusPending}
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list pending records: %w", mapErr(err))
	}
	refs, err := collect(rows, func(sc scanner) (RecordRef, error) {
		var r RecordRef
		err := sc.Scan(&r.Seq, &r.ID, &r.RelPath, &r.ChangeType, &r.SyncState)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("list pending records: %w", mapErr(err))
	}
	return refs, nil
}

// jsonList is a list as one query argument, for `IN (SELECT value FROM
// json_each(?))`: the query's text stays one (a prepared statement kept
// for it) whatever the list's length.
func jsonList[T any](list []T) (string, error) {
	b, err := json.Marshal(list)
	return string(b), err
}

// recordsBySeqQuery reads records by seq, each looked up by its key: the
// unary + keeps sqlite from reading every record of the session (an
// index by session) to find a chunk's.
const recordsBySeqQuery = "SELECT " + recordCols + " FROM records WHERE +session_id = ? AND seq IN (SELECT value FROM json_each(?))"

// RecordsBySeq returns the records of a session with the sequence numbers
// seqs, in that order; a number with no record of the session is skipped.
// Their content pointer fields are nil.
func RecordsBySeq(ctx context.Context, q Querier, sessionID string, seqs []int64) ([]*prsm.Record, error) {
	list, err := jsonList(seqs)
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, recordsBySeqQuery, sessionID, list)
	if err != nil {
		return nil, fmt.Errorf("read records: %w", mapErr(err))
	}
	rs, err := collect(rows, scanRecord)
	if err != nil {
		return nil, fmt.Errorf("read records: %w", mapErr(err))
	}
	bySeq := make(map[int64]*prsm.Record, len(rs))
	for _, r := range rs {
		bySeq[r.Seq] = r
	}
	out := make([]*prsm.Record, 0, len(rs))
	for _, seq := range seqs {
		if r := bySeq[seq]; r != nil {
			out = append(out, r)
			delete(bySeq, seq) // a number given twice gives its record once
		}
	}
	return out, nil
}

// GetBlobs returns the contents stored under hashes, by hash, as GetBlob
// does one (prsm.ErrNotFound names the first hash with none).
func GetBlobs(ctx context.Context, q Querier, hashes []string) (map[string][]byte, error) {
	out := make(map[string][]byte, len(hashes))
	if len(hashes) == 0 {
		return out, nil
	}
	list, err := jsonList(hashes)
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, "SELECT hash, encoding, size, data FROM blobs WHERE hash IN (SELECT value FROM json_each(?))", list)
	if err != nil {
		return nil, fmt.Errorf("get blobs: %w", mapErr(err))
	}
	defer rows.Close()
	big := map[string]int64{} // contents stored in chunks, read after
	for rows.Next() {
		var (
			hash, enc string
			size      int64
			stored    sql.RawBytes // the driver's bytes, decoded or copied once
		)
		if err := rows.Scan(&hash, &enc, &size, &stored); err != nil {
			return nil, fmt.Errorf("get blobs: %w", mapErr(err))
		}
		if chunked(size, stored) {
			big[hash] = size
			continue
		}
		data, err := decodeBlob(hash, enc, size, stored)
		if err != nil {
			return nil, err
		}
		out[hash] = data
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("get blobs: %w", mapErr(err))
	}
	rows.Close()
	for hash, size := range big {
		data, err := getChunks(ctx, q, hash, size)
		if err != nil {
			return nil, err
		}
		out[hash] = data
	}
	for _, h := range hashes {
		if _, ok := out[h]; !ok {
			return nil, fmt.Errorf("get blob %s: %w", h, prsm.ErrNotFound)
		}
	}
	return out, nil
}

// StateChange is a record's new review state, for SetRecordStates.
type StateChange struct {
	ID, Status, SyncState string
	// Rejected: a reject took the record's change out (RejectedAt, the
	// first time only).
	Rejected bool
}

// SetRecordStates gives records of a session their new states, each kept
// in the review history first, as UpdateRecordState and MarkRejected do
// one record at a time: one history row per record, then its update.
// Call it in a transaction.
func SetRecordStates(ctx context.Context, q Querier, sessionID string, changes []StateChange, at time.Time) error {
	if len(changes) == 0 {
		return nil
	}
	ids := make([]string, len(changes))
	for i, c := range changes {
		ids[i] = c.ID
	}
	list, err := jsonList(ids)
	if err != nil {
		return err
	}
	if _, err := q.ExecContext(ctx, `INSERT INTO record_history (session_id, record_id, status, sync_state, hunks, rejected_at)
		SELECT session_id, id, status, sync_state, hunks, rejected_at FROM records
		WHERE session_id = ? AND id IN (SELECT value FROM json_each(?))`, sessionID, list); err != nil {
		return fmt.Errorf("keep states of %d records: %w", len(changes), mapErr(err))
	}
	ts := formatTime(at)
	for _, c := range changes {
		var rejectedAt any // NULL keeps rejected_at as it is
		if c.Rejected {
			rejectedAt = ts
		}
		res, err := q.ExecContext(ctx, `UPDATE records SET status = ?, sync_state = ?, rejected_at = COALESCE(rejected_at, ?)
			WHERE session_id = ? AND id = ?`, c.Status, c.SyncState, rejectedAt, sessionID, c.ID)
		if err == nil {
			err = mustAffect(res)
		}
		if err != nil {
			return fmt.Errorf("update record %s: %w", c.ID, mapErr(err))
		}
	}
	return nil
}
