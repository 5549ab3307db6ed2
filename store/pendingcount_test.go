package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/prsm-dev/prsm"
)

// pendingRecord inserts a record of session sid with the given status.
func pendingRecord(t *testing.T, q Querier, sid, id, status string) {
	t.Helper()
	r := &prsm.Record{ID: id, SessionID: sid, FilePath: "/ws/" + id, RelPath: id, ChangeType: prsm.ChangeCreate,
		ToolCallID: id, ToolName: "Write", Timestamp: t0, Status: status, SyncState: prsm.SyncSynced,
		AddedRanges: []prsm.Range{}, RemovedRanges: []prsm.Range{}}
	if err := InsertRecord(context.Background(), q, r); err != nil {
		t.Fatal(err)
	}
}

// checkPending compares every session's pending count with a count of
// its records.
func checkPending(t *testing.T, q Querier, step string) {
	t.Helper()
	ss, err := ListSessions(context.Background(), q, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		want := count(t, q, "SELECT COUNT(*) FROM records WHERE session_id = ? AND status = 'pending'", s.ID)
		got, err := GetSession(context.Background(), q, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.PendingCount != want || s.PendingCount != want {
			t.Errorf("%s: session %s pending = %d (get) %d (list), want %d", step, s.ID, got.PendingCount, s.PendingCount, want)
		}
	}
}

// TestPendingCountKeptByTriggers: a session's pending count follows every
// insert, status change and removal of its records.
func TestPendingCountKeptByTriggers(t *testing.T) {
	db := openTestDB(t)
	q := db.Q()
	ctx := context.Background()
	mustSession(t, q, "s1", t0)
	mustSession(t, q, "s2", t0)
	for i := 0; i < 5; i++ {
		pendingRecord(t, q, "s1", fmt.Sprint("p", i), prsm.StatusPending)
	}
	pendingRecord(t, q, "s1", "a0", prsm.StatusAccepted)
	pendingRecord(t, q, "s2", "p0", prsm.StatusPending)
	checkPending(t, q, "inserted")
	if s, _ := GetSession(ctx, q, "s1"); s.PendingCount != 5 {
		t.Fatalf("s1 pending = %d, want 5", s.PendingCount)
	}
	for _, step := range []struct{ id, status string }{
		{"p0", prsm.StatusAccepted}, {"p1", prsm.StatusRejected}, {"p1", prsm.StatusRejected},
		{"a0", prsm.StatusPending}, {"p0", prsm.StatusPending}, {"p2", prsm.StatusPending},
	} {
		if err := UpdateRecordState(ctx, q, "s1", step.id, step.status, prsm.SyncSynced); err != nil {
			t.Fatal(err)
		}
		checkPending(t, q, step.id+" "+step.status)
	}
	if _, err := q.ExecContext(ctx, "DELETE FROM records WHERE session_id = 's1' AND id IN ('p3', 'a0')"); err != nil {
		t.Fatal(err)
	}
	checkPending(t, q, "deleted")
	if err := DeleteSession(ctx, q, "s1"); err != nil {
		t.Fatal(err)
	}
	checkPending(t, q, "session deleted")
	// The count is read, not counted: a wrong value would show.
	if _, err := q.ExecContext(ctx, "UPDATE sessions SET pending_count = 42 WHERE id = 's2'"); err != nil {
		t.Fatal(err)
	}
	if s, _ := GetSession(ctx, q, "s2"); s.PendingCount != 42 {
		t.Errorf("GetSession counted the records (%d) instead of reading the kept count", s.PendingCount)
	}
}

// TestPendingCountMigrated: a database from before the count (schema 6)
// gets every session's count when it is opened.
func TestPendingCountMigrated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prsm.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	q := db.Q()
	ctx := context.Background()
	mustSession(t, q, "s1", t0)
	mustSession(t, q, "s2", t0)
	pendingRecord(t, q, "s1", "p0", prsm.StatusPending)
	pendingRecord(t, q, "s1", "p1", prsm.StatusPending)
	pendingRecord(t, q, "s1", "a0", prsm.StatusAccepted)
	// Back to schema 6.
	for _, stmt := range []string{
		"DROP TRIGGER records_pending_insert", "DROP TRIGGER records_pending_delete", "DROP TRIGGER records_pending_update",
		"ALTER TABLE sessions DROP COLUMN pending_count", "ALTER TABLE checkpoints DROP COLUMN changes",
		"ALTER TABLE records DROP COLUMN rejected_at", "ALTER TABLE records DROP COLUMN note", "ALTER TABLE records DROP COLUMN hunks",
		"DROP TABLE pending_objects_aside", "DROP TABLE record_history", "ALTER TABLE checkpoints DROP COLUMN decision_seq",
		"DROP TABLE hook_tokens", "DROP TABLE blob_chunks", "DROP TABLE feedback",
		"DROP TABLE turns", "ALTER TABLE records DROP COLUMN commit_id",
		"DELETE FROM schema_version WHERE version >= 7",
	} {
		if _, err := q.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	db.Close()
	db, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, _ := SchemaVersion(ctx, db.Q()); v < 7 {
		t.Fatalf("schema version %d after reopening", v)
	}
	for id, want := range map[string]int{"s1": 2, "s2": 0} {
		if s, err := GetSession(ctx, db.Q(), id); err != nil || s.PendingCount != want {
			t.Errorf("%s after migration: %v %v, want %d", id, s, err, want)
		}
	}
	pendingRecord(t, db.Q(), "s2", "p0", prsm.StatusPending)
	checkPending(t, db.Q(), "after migration")
}

// pendingCount counts a session's pending records from the records
// themselves (what the kept count must equal).
func pendingCount(ctx context.Context, q Querier, sessionID string) (int, error) {
	var n int
	err := q.QueryRowContext(ctx,
		"SELECT COUNT(*) FROM records WHERE session_id = ? AND status = ?",
		sessionID, prsm.StatusPending).Scan(&n)
	return n, err
}
