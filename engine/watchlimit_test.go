package engine_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/tracker"
)

// TestNoWatcherScansEverySession: when the watcher cannot start (no
// descriptor or inotify instance left), prsm degrades instead of failing:
// every session says why, with the fix; a change no hook told of still
// becomes a Watch record (the periodic scan covers every session) and a
// tool call still records all it changed.
func TestNoWatcherScansEverySession(t *testing.T) {
	old := engine.ScanInterval
	engine.ScanInterval = 100 * time.Millisecond
	t.Cleanup(func() { engine.ScanInterval = old })
	t.Cleanup(engine.FailWatcher(syscall.EMFILE))
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); f.eng.StopWatching() })
	if err := f.eng.StartWatching(ctx); err != nil {
		t.Fatalf("StartWatching failed with the watcher: %v", err)
	}
	s := f.start("")
	l := f.eng.Watcher.Limits()[s.ID]
	if l.Cause != tracker.LimitNoWatcher || !strings.Contains(l.Fix, "ulimit -n") {
		t.Fatalf("Limits()[%s] = %+v", s.ID, l)
	}
	write(t, s.WorktreePath, "by-hand.txt", "scanned\n")
	var recs []*prsm.Record
	waitLong(t, "the periodic scan's Watch record", func() bool {
		recs, _ = f.eng.Records(f.ctx, s.ID, "", "")
		return len(recs) > 0
	})
	if len(recs) != 1 || recs[0].ToolName != "Watch" || recs[0].RelPath != "by-hand.txt" {
		t.Fatalf("records: %s", summary(recs))
	}
	recs = f.tool(s, "b1", "Bash", "", func(wt string) { sh(t, wt, "mkdir -p n/m && echo x > n/m/y") })
	if got := summary(recs); got != "b1:0 create n/m/y pending/synced" {
		t.Fatalf("tool call without a watcher:\n%s", got)
	}
}

// TestLimitedSessionTurnEndScans: a worktree past the watch budget
// (PRSM_MAX_WATCHES) gets no events; with no periodic scan due, a turn's
// end still finds what changed outside any tool call.
func TestLimitedSessionTurnEndScans(t *testing.T) {
	old := engine.ScanInterval
	engine.ScanInterval = time.Hour
	t.Cleanup(func() { engine.ScanInterval = old })
	f := newFixture(t)
	write(t, f.ws, "sub/dir/x.txt", "x\n")
	f.eng.WatchBudget = 2
	f.watch()
	s := f.start("")
	if l := f.eng.Watcher.Limits()[s.ID]; l.Cause != tracker.LimitBudget || !strings.Contains(l.Fix, "PRSM_MAX_WATCHES") {
		t.Fatalf("Limits()[%s] = %+v", s.ID, l)
	}
	write(t, s.WorktreePath, "sub/dir/x.txt", "y\n")
	recs, err := f.eng.EndTurn(f.ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(recs); !strings.Contains(got, "modify sub/dir/x.txt") || len(recs) != 1 {
		t.Fatalf("turn end on a limited worktree:\n%s", got)
	}
}
