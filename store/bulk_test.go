package store

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
)

func TestPendingRefsAndRecordsBySeq(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	q := db.Q()
	mustSession(t, q, "s1", t0)
	mustSession(t, q, "s2", t0)
	var seqs []int64
	for _, r := range []struct{ s, id, rel, status, change string }{
		{"s1", "r1", "a.txt", prsm.StatusPending, prsm.ChangeCreate},
		{"s1", "r2", "b.txt", prsm.StatusAccepted, prsm.ChangeModify},
		{"s2", "r3", "a.txt", prsm.StatusPending, prsm.ChangeModify},
		{"s1", "r4", "a.txt", prsm.StatusPending, prsm.ChangeModify},
		{"s1", "r5", "c/d.txt", prsm.StatusPending, prsm.ChangeDelete},
	} {
		rec := testRecord(r.s, r.id, "t1", r.rel)
		rec.Status, rec.ChangeType = r.status, r.change
		if err := InsertRecord(ctx, q, rec); err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, rec.Seq)
	}
	refs, err := PendingRefs(ctx, q, "s1", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []RecordRef{{seqs[0], "r1", "a.txt", prsm.ChangeCreate, prsm.SyncSynced}, {seqs[3], "r4", "a.txt", prsm.ChangeModify, prsm.SyncSynced}, {seqs[4], "r5", "c/d.txt", prsm.ChangeDelete, prsm.SyncSynced}}
	if !reflect.DeepEqual(refs, want) {
		t.Errorf("PendingRefs(s1) = %+v, want %+v", refs, want)
	}
	if refs, err = PendingRefs(ctx, q, "s1", "a.txt"); err != nil || !reflect.DeepEqual(refs, want[:2]) {
		t.Errorf("PendingRefs(s1, a.txt) = %+v, %v; want %+v", refs, err, want[:2])
	}
	// In the order asked for; another session's record and a number of
	// none are skipped.
	recs, err := RecordsBySeq(ctx, q, "s1", []int64{seqs[4], seqs[2], seqs[0], 999, seqs[4]})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.ID+":"+r.RelPath)
	}
	if got := ids; !reflect.DeepEqual(got, []string{"r5:c/d.txt", "r1:a.txt"}) {
		t.Errorf("RecordsBySeq = %v", got)
	}
}

// TestBulkQueriesSeekByKey: a chunk's records, contents and history are
// found by their keys, not by reading every record of the session: a
// reject of 200k records read the session's 200k for each chunk of 1000.
func TestBulkQueriesSeekByKey(t *testing.T) {
	db := openTestDB(t)
	for query, want := range map[string]string{
		recordsBySeqQuery: "SEARCH records USING INTEGER PRIMARY KEY (rowid=?)",
		"SELECT hash FROM blobs WHERE hash IN (SELECT value FROM json_each(?))":                  "SEARCH blobs USING COVERING INDEX sqlite_autoindex_blobs_1 (hash=?)",
		"SELECT id FROM records WHERE session_id = ? AND id IN (SELECT value FROM json_each(?))": "SEARCH records USING COVERING INDEX sqlite_autoindex_records_1 (session_id=? AND id=?)",
	} {
		plan := planOf(t, db, query, make([]any, strings.Count(query, "?"))...)
		if !slices.Contains(plan, want) {
			t.Errorf("plan of %s:\n%s\nwant a step %q", query, strings.Join(plan, "\n"), want)
		}
	}
}

func TestGetBlobs(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	q := db.Q()
	big := make([]byte, 64<<10) // compressed when stored
	for i := range big {
		big[i] = byte('a' + i%7)
	}
	var hashes []string
	for _, c := range [][]byte{[]byte("one\n"), big, {}} {
		h, err := PutBlob(ctx, q, c)
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, h)
	}
	got, err := GetBlobs(ctx, q, hashes)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || string(got[hashes[0]]) != "one\n" || !reflect.DeepEqual(got[hashes[1]], big) || got[hashes[2]] == nil || len(got[hashes[2]]) != 0 {
		t.Errorf("GetBlobs = %d contents: %q ... %d bytes", len(got), got[hashes[0]], len(got[hashes[1]]))
	}
	missing := HashBlob([]byte("never stored"))
	if _, err := GetBlobs(ctx, q, []string{hashes[0], missing}); !errors.Is(err, prsm.ErrNotFound) {
		t.Errorf("GetBlobs with a missing hash: %v, want not found", err)
	}
}

func TestSetRecordStates(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	q := db.Q()
	mustSession(t, q, "s1", t0)
	for _, id := range []string{"r1", "r2", "r3"} {
		if err := InsertRecord(ctx, q, testRecord("s1", id, "t1", id+".txt")); err != nil {
			t.Fatal(err)
		}
	}
	first := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := MarkRejected(ctx, q, "s1", "r2", first); err != nil { // rejected once before
		t.Fatal(err)
	}
	hist := count(t, q, "SELECT COUNT(*) FROM record_history")
	at := first.Add(time.Hour)
	err := db.Tx(ctx, func(q Querier) error {
		return SetRecordStates(ctx, q, "s1", []StateChange{
			{ID: "r1", Status: prsm.StatusRejected, SyncState: prsm.SyncSynced, Rejected: true},
			{ID: "r2", Status: prsm.StatusRejected, SyncState: prsm.SyncConflict, Rejected: true},
			{ID: "r3", Status: prsm.StatusAccepted, SyncState: prsm.SyncSynced},
		}, at)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		id, status, sync string
		rejectedAt       time.Time
	}{{"r1", prsm.StatusRejected, prsm.SyncSynced, at}, {"r2", prsm.StatusRejected, prsm.SyncConflict, first}, {"r3", prsm.StatusAccepted, prsm.SyncSynced, time.Time{}}} {
		r, err := GetRecord(ctx, q, "s1", w.id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != w.status || r.SyncState != w.sync || !r.RejectedAt.Equal(w.rejectedAt) {
			t.Errorf("%s: %s/%s rejected at %v; want %s/%s at %v", w.id, r.Status, r.SyncState, r.RejectedAt, w.status, w.sync, w.rejectedAt)
		}
	}
	// One history row per record, holding its state before: what a
	// rewind to before the decision gives back.
	if n := count(t, q, "SELECT COUNT(*) FROM record_history") - hist; n != 3 {
		t.Errorf("%d history rows, want 3", n)
	}
	states, err := StatesAt(ctx, q, "s1", int64(hist))
	if err != nil {
		t.Fatal(err)
	}
	if st := states["r1"]; st.Status != prsm.StatusPending || st.RejectedAt != "" {
		t.Errorf("r1's state before: %+v", st)
	}
	if s, _ := GetSession(ctx, q, "s1"); s.PendingCount != 0 {
		t.Errorf("pending count %d, want 0", s.PendingCount)
	}
	// A record that is not there fails the whole change.
	err = db.Tx(ctx, func(q Querier) error {
		return SetRecordStates(ctx, q, "s1", []StateChange{{ID: "r1", Status: prsm.StatusPending}, {ID: "nope", Status: prsm.StatusRejected}}, at)
	})
	if !errors.Is(err, prsm.ErrNotFound) {
		t.Errorf("a missing record: %v, want not found", err)
	}
	if r, _ := GetRecord(ctx, q, "s1", "r1"); r.Status != prsm.StatusRejected {
		t.Errorf("r1 after a failed change: %s", r.Status)
	}
}
