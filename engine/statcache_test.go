package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/tracker"
)

// The stat cache is stored with the session (a moment after the tool
// calls), and after a restart it never
// hides a change made while prsm was down, even one that keeps the size.
func TestStatCachePersistedAndSafeAcrossRestart(t *testing.T) {
	defer func(d time.Duration) { engine.StatsDelay = d }(engine.StatsDelay)
	engine.StatsDelay = 50 * time.Millisecond
	f := newFixture(t)
	f.eng.NoAutoCheckpoints = true // no flush of checkpoints runs either
	s := f.start("")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) {
		write(t, wt, "f.txt", strings.Replace(read(t, wt, "f.txt"), "line 3", "LINE 3", 1))
	})
	time.Sleep(50 * time.Millisecond) // let the file age past the racy window
	f.tool(s, "e2", "Edit", "keep.txt", func(wt string) { write(t, wt, "keep.txt", "kept\n") })

	// The cache is stored a moment (StatsDelay) after the tool calls.
	content := read(t, s.WorktreePath, "f.txt")
	var stats map[string]store.Stat
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var err error
		if stats, err = store.ListStats(f.ctx, f.q(), s.ID); err != nil {
			t.Fatal(err)
		}
		if e, ok := stats["f.txt"]; ok && e.Hash == tracker.Hash([]byte(content)) && e.Size == int64(len(content)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stat cache of f.txt not stored: %+v", stats)
		}
	}

	changeWhileDown(t, f, s, content)
	if got := f.records(s); !strings.Contains(got, "reconcile-") {
		t.Fatalf("no reconcile record: %s", got)
	}
}

// The stat cache's news are stored apart from the tool calls, a moment
// after them: a crash before that loses them, and the restarted engine reads
// the file again instead of trusting a stored row. The change made while
// prsm was down, of the same size, is still found.
func TestStatCacheNewsLostInCrash(t *testing.T) {
	defer func(d time.Duration) { engine.StatsDelay = d }(engine.StatsDelay)
	engine.StatsDelay = time.Hour // the crashed engine never saves them
	f := newFixture(t)
	s := f.start("")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) {
		write(t, wt, "f.txt", strings.Replace(read(t, wt, "f.txt"), "line 3", "LINE 3", 1))
	})
	stats, err := store.ListStats(f.ctx, f.q(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	content := read(t, s.WorktreePath, "f.txt")
	if e, ok := stats["f.txt"]; ok && e.Hash == tracker.Hash([]byte(content)) {
		t.Fatalf("stat row of f.txt stored with the tool call, want it left to SaveStats: %+v", e)
	}
	time.Sleep(50 * time.Millisecond) // past the racy window
	changed := changeWhileDown(t, f, s, content)

	// SaveStats (StatsDelay after tool calls, and the server's before it
	// stops) stores what the new engine read.
	if err := f.eng.SaveStats(f.ctx); err != nil {
		t.Fatal(err)
	}
	stats, err = store.ListStats(f.ctx, f.q(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := stats["f.txt"]; !ok || e.Hash != tracker.Hash([]byte(changed)) {
		t.Fatalf("stat row of f.txt after SaveStats: %+v (ok %v), want the hash of the changed content", e, ok)
	}
}

// changeWhileDown changes f.txt of s's worktree, which holds content,
// into other content of the same size while prsm is down (f.restart),
// and checks that the restarted engine finds the change: it reaches the
// workspace. It returns the changed content.
func changeWhileDown(t *testing.T, f *fixture, s *prsm.Session, content string) string {
	t.Helper()
	changed := strings.Replace(content, "LINE 3", "line 3", 1)
	if len(changed) != len(content) || changed == content {
		t.Fatal("test needs a same-size change")
	}
	write(t, s.WorktreePath, "f.txt", changed)
	f.restart()
	if got := read(t, f.ws, "f.txt"); got != changed {
		t.Fatalf("the change made while down did not reach the workspace:\n%s", got)
	}
	return changed
}
