package engine_test

import (
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
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
		f.eng.Turn(f.ctx, s.ID, engine.TurnRequest{})
		sessions = append(sessions, s)
	}
	active := sessions[2]
	for i := 0; i < 4; i++ {
		f.eng.Turn(f.ctx, active.ID, engine.TurnRequest{})
	}
	named, err := f.eng.CreateCheckpoint(f.ctx, active.ID, engine.CheckpointRequest{Name: "keep me"})
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
	rep, err := f.eng.GC(f.ctx, engine.GCRequest{KeepSessions: 1, KeepAuto: 2})
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
	rep, err = f.eng.GC(f.ctx, engine.GCRequest{BudgetBytes: 1})
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
