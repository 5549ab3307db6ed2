package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/prsm-dev/prsm"
)

// TestRecordHistory: every change of a record's review state keeps the
// state before it, so StatesAt gives each record its state when the
// history ended at a seq (a checkpoint's DecisionSeq), and
// RestoreRecordState gives it back, hunks and rejected_at included.
func TestRecordHistory(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "prsm.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q, ctx := db.Q(), context.Background()
	mustSession(t, q, "s1", t0)
	mustSession(t, q, "s2", t0)
	pendingRecord(t, q, "s1", "a", prsm.StatusPending)
	pendingRecord(t, q, "s1", "b", prsm.StatusPending)
	pendingRecord(t, q, "s2", "c", prsm.StatusPending)
	hunks := []prsm.Hunk{{Index: 0, OldStart: 1, OldLines: 1, NewStart: 1, NewLines: 1, Status: prsm.StatusPending}}
	if err := UpdateRecordHunks(ctx, q, "s1", "a", hunks); err != nil {
		t.Fatal(err)
	}
	cp, err := LastDecisionSeq(ctx, q)
	if err != nil || cp == 0 {
		t.Fatalf("decision seq %d %v", cp, err)
	}
	// Since the "checkpoint": a accepted, b rejected (with its time), c in
	// another session accepted.
	if err := UpdateRecordState(ctx, q, "s1", "a", prsm.StatusAccepted, prsm.SyncSynced); err != nil {
		t.Fatal(err)
	}
	if err := UpdateRecordState(ctx, q, "s1", "b", prsm.StatusRejected, prsm.SyncSynced); err != nil {
		t.Fatal(err)
	}
	if err := MarkRejected(ctx, q, "s1", "b", t0); err != nil {
		t.Fatal(err)
	}
	if err := UpdateRecordState(ctx, q, "s2", "c", prsm.StatusAccepted, prsm.SyncSynced); err != nil {
		t.Fatal(err)
	}
	then, err := StatesAt(ctx, q, "s1", cp)
	if err != nil {
		t.Fatal(err)
	}
	if len(then) != 2 || then["a"].Status != prsm.StatusPending || then["b"].Status != prsm.StatusPending || then["b"].RejectedAt != "" {
		t.Fatalf("states at the checkpoint: %+v", then)
	}
	if then["a"].Hunks == "" {
		t.Errorf("a's hunks were not kept: %+v", then["a"])
	}
	for _, st := range then {
		if err := RestoreRecordState(ctx, q, "s1", st); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"a", "b"} {
		r, err := GetRecord(ctx, q, "s1", id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != prsm.StatusPending || !r.RejectedAt.IsZero() {
			t.Errorf("%s after the restore: %s, rejected at %v", id, r.Status, r.RejectedAt)
		}
		if id == "a" && (len(r.Hunks) != 1 || r.Hunks[0].NewLines != 1) {
			t.Errorf("a's hunks after the restore: %+v", r.Hunks)
		}
	}
	checkPending(t, q, "after the restore")
	// The restore is in the history too: the states before it come back.
	now, err := StatesAt(ctx, q, "s1", cp+4)
	if err != nil {
		t.Fatal(err)
	}
	if now["a"].Status != prsm.StatusAccepted || now["b"].Status != prsm.StatusRejected || now["b"].RejectedAt == "" {
		t.Errorf("states before the restore: %+v", now)
	}
	// Another session's history is its own; an unknown record is refused.
	if other, _ := StatesAt(ctx, q, "s2", cp); len(other) != 1 || other["c"].Status != prsm.StatusPending {
		t.Errorf("s2 at the checkpoint: %+v", other)
	}
	if err := RestoreRecordState(ctx, q, "s1", RecordState{ID: "nope", Status: prsm.StatusPending, SyncState: prsm.SyncSynced}); !errors.Is(err, prsm.ErrNotFound) {
		t.Errorf("restoring an unknown record: %v", err)
	}
	// A session's history goes with it (gc).
	if err := DeleteSession(ctx, q, "s2"); err != nil {
		t.Fatal(err)
	}
	if n := count(t, q, "SELECT COUNT(*) FROM record_history WHERE session_id = 's2'"); n != 0 {
		t.Errorf("%d history entries of a deleted session left", n)
	}
}
