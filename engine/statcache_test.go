package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/tracker"
)

// The stat cache is stored with the session, and after a restart it never
// hides a change made while prsm was down, even one that keeps the size.
func TestStatCachePersistedAndSafeAcrossRestart(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) {
		write(t, wt, "f.txt", strings.Replace(read(t, wt, "f.txt"), "line 3", "LINE 3", 1))
	})
	time.Sleep(50 * time.Millisecond) // let the file age past the racy window
	f.tool(s, "e2", "Edit", "keep.txt", func(wt string) { write(t, wt, "keep.txt", "kept\n") })

	stats, err := store.ListStats(f.ctx, f.q(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	content := read(t, s.WorktreePath, "f.txt")
	if e, ok := stats["f.txt"]; !ok || e.Hash != tracker.Hash([]byte(content)) || e.Size != int64(len(content)) {
		t.Fatalf("stat cache of f.txt not stored: %+v", stats)
	}

	// Down: the same number of bytes, other content.
	changed := strings.Replace(content, "LINE 3", "line 3", 1)
	if len(changed) != len(content) || changed == content {
		t.Fatal("test needs a same-size change")
	}
	write(t, s.WorktreePath, "f.txt", changed)
	f.restart()
	if got := read(t, f.ws, "f.txt"); got != changed {
		t.Fatalf("the change made while down did not reach the workspace:\n%s", got)
	}
	if got := f.records(s); !strings.Contains(got, "reconcile-") {
		t.Fatalf("no reconcile record: %s", got)
	}
}
