package store

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
)

// A pending row refuses objects past its bounds instead of storing a row
// that cannot be read back (a 4-byte length that wrapped, a value over
// sqlite's limit).
func TestPendingSizeBounds(t *testing.T) {
	objs := []PendingObject{{Data: make([]byte, 10)}, {Data: make([]byte, 20)}}
	if n, err := pendingSize(objs, 20, 100); err != nil || n != 24*2+30 {
		t.Errorf("pendingSize = %d, %v", n, err)
	}
	if _, err := pendingSize(objs, 19, 100); !errors.Is(err, prsm.ErrInvalid) {
		t.Errorf("an object over the bound: %v", err)
	}
	if _, err := pendingSize(objs, 20, 77); !errors.Is(err, prsm.ErrInvalid) {
		t.Errorf("a row over the bound: %v", err)
	}
	if maxPendingObject > 1<<32-1 || maxPendingRow >= 1_000_000_000 {
		t.Error("the bounds must fit a 4-byte length and sqlite's value limit")
	}
}

// A row that cannot be read (here 40 bytes of TEXT, as a blob that
// overflowed sqlite's bind length was once stored) comes back marked bad,
// the others as they are, and SetPendingAside moves it aside whole.
func TestPendingBadRowSetAside(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	q := db.Q()
	good := &Pending{SessionID: "s1", Commit: "c1", Refs: []string{"refs/prsm/s1/head"}, Objects: []PendingObject{{ID: [20]byte{1}, Data: []byte("blob 1\x00x")}}}
	if err := AddPending(ctx, q, good); err != nil {
		t.Fatal(err)
	}
	if _, err := q.ExecContext(ctx, `INSERT INTO pending_objects (session_id, commit_id, refs, objects) VALUES ('s1', 'c2', '["r"]', CAST(? AS TEXT))`,
		strings.Repeat("7", 40)); err != nil {
		t.Fatal(err)
	}
	rows, err := ListPending(ctx, q)
	if err != nil {
		t.Fatalf("one bad row failed the whole list: %v", err)
	}
	if len(rows) != 2 || rows[0].Bad != nil || rows[0].Commit != "c1" || len(rows[0].Objects) != 1 || !errors.Is(rows[1].Bad, ErrCorrupt) {
		t.Fatalf("rows: %+v", rows)
	}
	if err := SetPendingAside(ctx, q, rows[1].Seq, rows[1].Bad.Error()); err != nil {
		t.Fatal(err)
	}
	if rows, _ := ListPending(ctx, q); len(rows) != 1 || rows[0].Commit != "c1" {
		t.Errorf("pending after setting aside: %+v", rows)
	}
	var commit, reason string
	var n int
	if err := q.QueryRowContext(ctx, `SELECT commit_id, reason, length(objects) FROM pending_objects_aside`).Scan(&commit, &reason, &n); err != nil {
		t.Fatal(err)
	}
	if commit != "c2" || !strings.Contains(reason, "corrupt") || n != 40 {
		t.Errorf("set aside: %s %q %d", commit, reason, n)
	}
}
