package engine_test

import (
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/store"
)

func TestGCRetention(t *testing.T) {
	f := newFixture(t)
	var sessions []*prsm.Session
	for i := 0; i < 3; i++ {
		s := f.start("")
		big := strings.Repeat("unique content of session "+s.ID+"\n", 2000)
		f.tool(s, "w", "Write", "s"+s.ID+".txt", func(wt string) { write(t, wt, "s"+s.ID+".txt", big) })
		f.eng.Turn(f.ctx, s.ID, api.TurnRequest{})
		sessions = append(sessions, s)
	}
	active := sessions[2]
	for i := 0; i < 4; i++ {
		f.eng.Turn(f.ctx, active.ID, api.TurnRequest{})
	}
	named, err := f.eng.CreateCheckpoint(f.ctx, active.ID, api.CheckpointRequest{Name: "keep me"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sessions[:2] {
		if _, err := f.eng.Bulk(f.ctx, s.ID, true, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := f.eng.EndSession(f.ctx, s.ID, false); err != nil {
			t.Fatal(err)
		}
	}
	blobsBefore := countBlobs(t, f)
	rep, err := f.eng.GC(f.ctx, api.GCRequest{KeepSessions: 1, KeepAuto: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.SessionsRemoved) != 1 || rep.SessionsRemoved[0] != sessions[0].ID {
		t.Fatalf("removed %v, want the oldest ended %s", rep.SessionsRemoved, sessions[0].ID)
	}
	if _, err := f.eng.Session(f.ctx, sessions[0].ID); err == nil {
		t.Errorf("dropped session still there")
	}
	if refs := testgit.Git(t, f.ws, "for-each-ref", "refs/prsm/"+sessions[0].ID); refs != "" {
		t.Errorf("refs left: %s", refs)
	}
	if got := countBlobs(t, f); got >= blobsBefore || rep.BlobsRemoved == 0 {
		t.Errorf("blobs %d -> %d (%d removed)", blobsBefore, got, rep.BlobsRemoved)
	}
	cps, _ := f.eng.Checkpoints(f.ctx, active.ID, "")
	autos, manual := 0, 0
	for _, c := range cps {
		if c.Kind == prsm.CheckpointAuto {
			autos++
		} else if c.ID == named.ID {
			manual++
		}
	}
	if autos != 2 || manual != 1 {
		t.Errorf("active session keeps %d auto, %d named", autos, manual)
	}
	// The active session's records and content are intact.
	recs, _ := f.eng.Records(f.ctx, active.ID, "", "")
	if len(recs) != 1 {
		t.Fatalf("active records %d", len(recs))
	}
	if b, _, err := f.eng.Content(f.ctx, active.ID, recs[0].ID, "after"); err != nil || len(b) == 0 {
		t.Errorf("active content lost: %v", err)
	}
	// A budget smaller than the store drops the remaining ended session too.
	rep, err = f.eng.GC(f.ctx, api.GCRequest{BudgetBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.SessionsRemoved) != 1 || rep.SessionsRemoved[0] != sessions[1].ID || !rep.OverBudget {
		t.Errorf("budget gc: %+v", rep)
	}
	if _, err := f.eng.Session(f.ctx, active.ID); err != nil {
		t.Errorf("active session removed by budget")
	}
}

func countBlobs(t *testing.T, f *fixture) int {
	var n int
	if err := f.eng.DB.QueryRowContext(f.ctx, "SELECT COUNT(*) FROM blobs").Scan(&n); err != nil {
		t.Fatal(err)
	}
	_ = store.HashBlob
	return n
}

// TestRecordStoresKnownBlobAfterSweep: a capture stores the known content
// of the file its tool names, and complete's record then skips storing it
// again. A gc sweep in between removes that blob (nothing references it
// yet): the record must store it anew, or its before side is lost.
func TestRecordStoresKnownBlobAfterSweep(t *testing.T) {
	for _, sweep := range []bool{false, true} {
		t.Run(map[bool]string{false: "no sweep", true: "sweep"}[sweep], func(t *testing.T) {
			f := newFixture(t)
			s := f.start("")
			f.capture(s, "t1", "Edit", "f.txt")
			engine.Settle(f.eng)
			known := store.HashBlob([]byte(lines(20, "")))
			if !hasBlob(t, f, known) {
				t.Fatal("the capture did not store the known content")
			}
			if sweep {
				rep, err := f.eng.GC(f.ctx, api.GCRequest{})
				if err != nil {
					t.Fatal(err)
				}
				if rep.BlobsRemoved == 0 || hasBlob(t, f, known) {
					t.Fatalf("the sweep kept the unreferenced known content (%d removed)", rep.BlobsRemoved)
				}
			}
			write(t, s.WorktreePath, "f.txt", lines(20, "agent"))
			recs := f.complete(s, "t1")
			if len(recs) != 1 || recs[0].OldHash != known {
				t.Fatalf("records %+v, want one with old hash %s", recs, known)
			}
			engine.Settle(f.eng)
			if !hasBlob(t, f, known) {
				t.Fatal("the record's before content is not stored")
			}
			b, _, err := f.eng.Content(f.ctx, s.ID, recs[0].ID, "before")
			if err != nil || string(b) != lines(20, "") {
				t.Fatalf("before content: %q %v", b, err)
			}
		})
	}
}

func hasBlob(t *testing.T, f *fixture, hash string) bool {
	t.Helper()
	var n int
	if err := f.eng.DB.QueryRowContext(f.ctx, "SELECT COUNT(*) FROM blobs WHERE hash = ?", hash).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}
