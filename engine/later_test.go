package engine_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	stdsync "sync"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/testenv"
	"github.com/prsm-dev/prsm/store"
)

// completeLater completes tool call id as an agent's hook does: the
// answer does not wait for the records.
func (f *fixture) completeLater(s *prsm.Session, id string) {
	f.t.Helper()
	if err := f.eng.CompleteToolCallLater(f.ctx, s.ID, id, api.CompleteRequest{}); err != nil {
		f.t.Fatalf("complete %s later: %v", id, err)
	}
}

// wantContent checks both sides of record id of s.
func (f *fixture) wantContent(s *prsm.Session, id, before, after string) {
	f.t.Helper()
	for side, want := range map[string]string{"before": before, "after": after} {
		got, _, err := f.eng.Content(f.ctx, s.ID, id, side)
		if err != nil || string(got) != want {
			f.t.Errorf("%s of %s = %q, %v; want %q", side, id, got, err, want)
		}
	}
}

// TestCompleteLaterRecordsBeforeWhatComesNext: a complete that answers
// before its work (an agent's PostToolUse) leaves the same records as one
// that waits, and whatever comes next for the session (the next capture,
// a read) comes after them: two Edits of one file in a row, each
// completed later, are two records, the second's before the first's
// after, and both files hold the second's content.
func TestCompleteLaterRecordsBeforeWhatComesNext(t *testing.T) {
	scannedAndWatched(t, func(t *testing.T, f *fixture) {
		s := f.start(prsm.ModeAuto)
		base := read(t, f.ws, "f.txt")
		v1, v2 := replaceLine(base, 2, "one"), replaceLine(replaceLine(base, 2, "one"), 9, "two")
		f.capture(s, "e1", "Edit", "f.txt")
		write(t, s.WorktreePath, "f.txt", v1)
		f.completeLater(s, "e1")
		f.capture(s, "e2", "Edit", "f.txt")
		write(t, s.WorktreePath, "f.txt", v2)
		f.completeLater(s, "e2")
		if got := f.records(s); got != "e1 modify f.txt pending/synced\ne2 modify f.txt pending/synced" {
			t.Fatalf("records:\n%s", got)
		}
		f.wantContent(s, "e1", base, v1)
		f.wantContent(s, "e2", v1, v2)
		f.bothHold(s, "f.txt", v2, "after both")
		if open, err := store.OpenToolCalls(f.ctx, f.q(), s.ID); err != nil || len(open) != 0 {
			t.Errorf("tool calls left open: %v %v", open, err)
		}
	})
}

// TestCompleteLaterDoesNotWaitForTheCapture: the capture's store runs
// after its answer, holding the session's lock; a later complete that
// comes meanwhile is queued behind it and answers at once, instead of
// waiting for the lock. Here another connection holds the database's
// write lock, so the capture's store waits; the complete must answer
// before that lock is let go (the store would wait 5 s for it).
func TestCompleteLaterDoesNotWaitForTheCapture(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeAuto)
	base := read(t, f.ws, "f.txt")
	want := replaceLine(base, 4, "four")
	release := testenv.HoldWriteLock(t, filepath.Join(f.eng.ProjectDir, "prsm.db"))
	f.capture(s, "e1", "Edit", "f.txt")
	write(t, s.WorktreePath, "f.txt", want)
	answered := make(chan error, 1)
	go func() {
		answered <- f.eng.CompleteToolCallLater(f.ctx, s.ID, "e1", api.CompleteRequest{})
	}()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatalf("complete later: %v", err)
		}
	case <-time.After(3 * time.Second):
		release()
		t.Fatal("the later complete waited for the capture's store (the database lock)")
	}
	release()
	if got := f.records(s); got != "e1 modify f.txt pending/synced" {
		t.Fatalf("records:\n%s", got)
	}
	f.wantContent(s, "e1", base, want)
	f.bothHold(s, "f.txt", want, "after the lock went")
}

// TestCompleteLaterManyAtOnce: parallel tool calls, each on a file of its
// own, captured and completed later from many goroutines (run with
// -race): every change is one record under its own call, synced.
func TestCompleteLaterManyAtOnce(t *testing.T) {
	f := newFixture(t)
	f.watch()
	s := f.start(prsm.ModeAuto)
	const n = 12
	var wg stdsync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			id, rel := fmt.Sprintf("w%02d", i), fmt.Sprintf("new%02d.txt", i)
			if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Write",
				Args: []byte(fmt.Sprintf(`{"file_path":%q}`, filepath.Join(s.WorktreePath, rel))), AgentID: "claude"}); err != nil {
				errs <- err
				return
			}
			write(t, s.WorktreePath, rel, fmt.Sprintf("file %d\n", i))
			errs <- f.eng.CompleteToolCallLater(context.Background(), s.ID, id, api.CompleteRequest{})
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := ""
	for i := 0; i < n; i++ {
		if i > 0 {
			want += "\n"
		}
		want += fmt.Sprintf("w%02d create new%02d.txt pending/synced", i, i)
	}
	all, err := f.eng.Records(f.ctx, s.ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*prsm.Record{}
	for _, r := range all {
		byID[r.ID] = r
	}
	got := ""
	for i := 0; i < n; i++ {
		if i > 0 {
			got += "\n"
		}
		if r := byID[fmt.Sprintf("w%02d", i)]; r != nil {
			got += summary([]*prsm.Record{r})
		}
	}
	if got != want || len(all) != n {
		t.Fatalf("records (%d):\n%s\nwant:\n%s", len(all), summary(all), want)
	}
	for i := 0; i < n; i++ {
		f.bothHold(s, fmt.Sprintf("new%02d.txt", i), fmt.Sprintf("file %d\n", i), "after the calls")
	}
}

// TestCompleteLaterOfAnEndedSession: a later complete of a session that
// ended is refused as a complete is (session_ended), and changes nothing.
func TestCompleteLaterOfAnEndedSession(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeAuto)
	if _, err := f.eng.EndSession(f.ctx, s.ID, false); err != nil {
		t.Fatal(err)
	}
	err := f.eng.CompleteToolCallLater(f.ctx, s.ID, "e9", api.CompleteRequest{})
	var pe *prsm.Error
	if !errors.As(err, &pe) || pe.Code != "session_ended" {
		t.Fatalf("complete later of an ended session: %v, want session_ended", err)
	}
	if err := f.eng.CompleteToolCallLater(f.ctx, s.ID, "bad id!", api.CompleteRequest{}); err == nil {
		t.Fatal("a later complete took an invalid tool call id")
	}
}
