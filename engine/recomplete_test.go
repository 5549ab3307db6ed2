package engine_test

import (
	"encoding/json"
	"errors"
	"syscall"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// TestRepeatedCompleteRetriesAFailedSync: a complete whose workspace
// writes failed on a full disk stores its records unsynced and says so; a
// repeated complete tries the writes again: while the disk is still full
// it says so again and changes nothing, once there is room it applies
// them and answers with the records synced, as stored.
func TestRepeatedCompleteRetriesAFailedSync(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeAuto)
	fault := injectDiskFault(t, f.ws, "write", false)
	args, _ := json.Marshal(map[string]string{"command": "printf 'agent keep\\n' > keep.txt; echo new > new.txt"})
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "b1", ToolName: "Bash", Args: args}); err != nil {
		t.Fatal(err)
	}
	sh(t, s.WorktreePath, "printf 'agent keep\\n' > keep.txt; echo new > new.txt")
	complete := func() (*api.Records, error) {
		return f.eng.CompleteToolCall(f.ctx, s.ID, "b1", api.CompleteRequest{})
	}
	unsynced := func(when string) {
		t.Helper()
		if read(t, f.ws, "keep.txt") != "keep\n" || exists(f.ws, "new.txt") || len(tempFiles(t, f.ws)) > 0 {
			t.Errorf("workspace changed by failed writes %s", when)
		}
		for _, id := range []string{"b1:0", "b1:1"} {
			if r := f.record(s, id); r.Status != prsm.StatusPending || r.SyncState != prsm.SyncPendingReview {
				t.Errorf("%s %s: %s/%s, want pending/pending_review", id, when, r.Status, r.SyncState)
			}
		}
	}
	wantSyncFailed := func(err error, when string) {
		t.Helper()
		if pe := (*prsm.Error)(nil); !errors.Is(err, syscall.ENOSPC) || !errors.As(err, &pe) || pe.Code != "sync_failed" {
			t.Fatalf("complete %s: %v, want sync_failed (ENOSPC)", when, err)
		}
	}
	_, err := complete()
	wantSyncFailed(err, "on a full disk")
	unsynced("by the first complete")
	hits := fault.hits.Load()
	_, err = complete()
	wantSyncFailed(err, "repeated on a full disk")
	if fault.hits.Load() == hits {
		t.Errorf("a repeated complete did not try the writes again")
	}
	unsynced("by the repeated complete")

	fault.armed.Store(false)
	res, err := complete()
	if err != nil {
		t.Fatalf("complete repeated once the disk has room: %v", err)
	}
	want := "b1:0 modify keep.txt pending/synced\nb1:1 create new.txt pending/synced"
	if got := summary(res.Records); got != want {
		t.Errorf("repeated complete answered:\n%s\nwant:\n%s", got, want)
	}
	if res.Records[1].NewContent == nil || *res.Records[1].NewContent != "new\n" {
		t.Errorf("answer without its content: %v", res.Records[1].NewContent)
	}
	f.bothHold(s, "keep.txt", "agent keep\n", "after the repeated complete")
	f.bothHold(s, "new.txt", "new\n", "after the repeated complete")
	for _, id := range []string{"b1:0", "b1:1"} {
		if r := f.record(s, id); r.SyncState != prsm.SyncSynced {
			t.Errorf("%s stored as %s, answered synced", id, r.SyncState)
		}
	}
	// Synced: one more complete writes nothing and answers the same.
	fault.armed.Store(true)
	res, err = complete()
	if err != nil || summary(res.Records) != want {
		t.Errorf("complete of a synced call: %v\n%s", err, summary(res.Records))
	}
}
