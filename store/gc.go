package store

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/prsm-dev/prsm"
)

// DeleteSession removes a session and, by cascade, its tool calls, records,
// checkpoints and file states.
func DeleteSession(ctx context.Context, q Querier, id string) error {
	res, err := q.ExecContext(ctx, "DELETE FROM sessions WHERE id = ?", id)
	if err != nil {
		return fmt.Errorf("delete session %s: %w", id, mapErr(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("delete session %s: %w", id, prsm.ErrNotFound)
	}
	return nil
}

// SweepBlobs removes every blob no record, known file state or tool-call
// snapshot names, in one transaction, and returns how many and their
// stored bytes. A blob stored but not yet referenced (the known content a
// capture stores for its complete's record) is removed too: BlobSweeps
// tells a writer whether one ran since it stored such a blob.
func (db *DB) SweepBlobs(ctx context.Context) (n int, size int64, err error) {
	err = db.Tx(ctx, func(q Querier) error {
		// Counted inside the sweep's transaction, before any delete: a
		// writer that reads BlobSweeps in its own transaction sees either
		// the count from before (no blob of it was deleted yet, and its
		// commit comes before the sweep's look at what is referenced) or
		// the new one.
		db.sweeps.Add(1)
		n, size, err = deleteUnreferencedBlobs(ctx, q)
		return err
	})
	return n, size, err
}

// BlobSweeps is how many blob sweeps have begun. Read inside a
// transaction, a value equal to one read in an earlier transaction means
// no sweep deleted a blob in between.
func (db *DB) BlobSweeps() uint64 { return db.sweeps.Load() }

func deleteUnreferencedBlobs(ctx context.Context, q Querier) (int, int64, error) {
	live := map[string]bool{}
	add := func(query string) error {
		rows, err := q.QueryContext(ctx, query)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var h string
			if err := rows.Scan(&h); err != nil {
				return err
			}
			live[h] = true
		}
		return rows.Err()
	}
	for _, query := range []string{
		"SELECT old_hash FROM records", "SELECT new_hash FROM records", "SELECT pre_tool_hash FROM records",
		"SELECT hash FROM file_states",
	} {
		if err := add(query); err != nil {
			return 0, 0, fmt.Errorf("gc blobs: %w", mapErr(err))
		}
	}
	rows, err := q.QueryContext(ctx, "SELECT snapshot FROM tool_calls WHERE snapshot IS NOT NULL")
	if err != nil {
		return 0, 0, fmt.Errorf("gc blobs: %w", mapErr(err))
	}
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			rows.Close()
			return 0, 0, err
		}
		var snap map[string]struct{ Hash string }
		if json.Unmarshal(b, &snap) == nil {
			for _, s := range snap {
				live[s.Hash] = true
			}
		}
	}
	rows.Close()
	all, err := q.QueryContext(ctx, `SELECT hash, length(data) + (SELECT COALESCE(SUM(length(c.data)), 0) FROM blob_chunks c WHERE c.hash = b.hash)
		FROM blobs b`)
	if err != nil {
		return 0, 0, fmt.Errorf("gc blobs: %w", mapErr(err))
	}
	var dead []string
	var bytes int64
	for all.Next() {
		var h string
		var n int64
		if err := all.Scan(&h, &n); err != nil {
			all.Close()
			return 0, 0, err
		}
		if !live[h] {
			dead = append(dead, h)
			bytes += n
		}
	}
	all.Close()
	for _, h := range dead {
		if _, err := q.ExecContext(ctx, "DELETE FROM blobs WHERE hash = ?", h); err != nil {
			return 0, 0, fmt.Errorf("gc blobs: %w", mapErr(err))
		}
	}
	return len(dead), bytes, nil
}

// Size is the database's size on disk (main file and WAL).
func (db *DB) Size() int64 {
	var n int64
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(db.path + suffix); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// Compact checkpoints the WAL and vacuums, returning freed pages to the disk.
func (db *DB) Compact(ctx context.Context) error {
	if _, err := db.ExecContext(ctx, "VACUUM"); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	if _, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return fmt.Errorf("wal checkpoint: %w", err)
	}
	return nil
}
