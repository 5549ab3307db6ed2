package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testgit"
)

// recordWhileEnding starts a session in mode whose Bash call "t1" has
// written new.txt, and makes that change a record at the moment an end of
// the session starts its checks, as the watcher or a late PostToolUse
// can: the end must see it.
func recordWhileEnding(t *testing.T, mode string) (*fixture, *prsm.Session) {
	f := newFixture(t)
	s := f.start(mode)
	f.capture(s, "t1", "Bash", "")
	testgit.Write(t, s.WorktreePath, "new.txt", "agent work\n", 0o644)
	var once sync.Once
	restore := engine.SetCrashHook(func(point string) {
		if point == "end:checking" {
			once.Do(func() {
				if recs := f.complete(s, "t1"); len(recs) != 1 {
					f.t.Errorf("records of t1: %d", len(recs))
				}
			})
		}
	})
	t.Cleanup(restore)
	return f, s
}

// TestEndSeesARecordMadeMeanwhile: a record made while an end checks the
// session is pending work: a plain end is refused (the agent's change,
// which in review mode lives only in the worktree, stays), and a discard
// rejects it (in auto mode, out of the workspace too). Before, the end
// counted pending records before it looked at the worktree, and a record
// made between the two was ended unseen.
func TestEndSeesARecordMadeMeanwhile(t *testing.T) {
	t.Run("end", func(t *testing.T) {
		f, s := recordWhileEnding(t, "review")
		_, err := f.eng.EndSession(f.ctx, s.ID, false)
		var pe *prsm.Error
		if !errors.As(err, &pe) || pe.Code != "unreviewed_changes" || !strings.Contains(pe.Msg, "1 pending change") {
			t.Fatalf("end with a record made meanwhile: %v", err)
		}
		got, err := f.eng.Session(f.ctx, s.ID)
		if err != nil || got.Status != prsm.SessionActive || got.PendingCount != 1 {
			t.Fatalf("session after the refusal: %+v %v", got, err)
		}
		if b, err := os.ReadFile(filepath.Join(s.WorktreePath, "new.txt")); err != nil || string(b) != "agent work\n" {
			t.Fatalf("the agent's work after the refusal: %q %v", b, err)
		}
	})
	t.Run("discard", func(t *testing.T) {
		f, s := recordWhileEnding(t, "auto")
		ended, err := f.eng.EndSession(f.ctx, s.ID, true)
		if err != nil || ended.Status != prsm.SessionEnded {
			t.Fatalf("end --discard: %+v %v", ended, err)
		}
		if _, err := os.Lstat(filepath.Join(f.ws, "new.txt")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the discarded change is still in the workspace: %v", err)
		}
		if n := f.pendingOf(s); n != 0 {
			t.Fatalf("pending after end --discard: %d", n)
		}
	})
}

// TestCloseWaitsForAWatchRecord: Close waits for a watch record that
// runs, and one whose timer fires after Close does not run: before, the
// quiet timer's record was nobody's background work, and a server's stop
// closed the store under it ("watch record … sql: database is closed").
func TestCloseWaitsForAWatchRecord(t *testing.T) {
	f := newFixture(t)
	f.watch()
	s := f.start("")
	in, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	t.Cleanup(engine.SetCrashHook(func(point string) {
		if point == "record:stored" {
			once.Do(func() { close(in); <-release })
		}
	}))
	testgit.Write(t, s.WorktreePath, "watched.txt", "agent work\n", 0o644)
	select {
	case <-in:
	case <-time.After(2 * time.Minute):
		t.Fatal("the watcher recorded nothing")
	}
	closed := make(chan struct{})
	go func() { f.eng.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a watch record ran")
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	select {
	case <-closed:
	case <-time.After(2 * time.Minute):
		t.Fatal("Close did not return once the watch record ended")
	}
}
