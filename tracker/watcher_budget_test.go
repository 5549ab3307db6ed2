package tracker_test

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/tracker"
)

// A worktree larger than the watch budget is not watched: it says why, and
// every look is a full scan. It does not fail.
func TestWatcherBudgetDegradesToScans(t *testing.T) {
	w, err := tracker.NewWatcher(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Budget = 3
	root := t.TempDir()
	for i := 0; i < 5; i++ {
		if err := os.MkdirAll(filepath.Join(root, fmt.Sprintf("d%d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Add("big", root); err != nil {
		t.Fatalf("Add over the budget failed: %v", err)
	}
	why := w.Degraded()["big"]
	if !strings.Contains(why, "watch budget (3 directories)") {
		t.Fatalf("Degraded() = %q", why)
	}
	if got := w.DegradedRoots(); len(got) != 1 || got[0] != "big" {
		t.Fatalf("DegradedRoots() = %v", got)
	}
	if d := w.Peek(root); !d.Full {
		t.Fatalf("a degraded worktree's look is not a full scan: %+v", d)
	}
}

// A burst of events beyond MaxDirty is not kept path by path: memory stays
// bounded and the next look is a full scan.
func TestWatcherBurstFallsBackToScan(t *testing.T) {
	w, err := tracker.NewWatcher(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.MaxDirty = 50 // set before anything is watched
	root := t.TempDir()
	if err := w.Add("s1", root); err != nil {
		t.Fatal(err)
	}
	shell(t, root, "mkdir burst && for i in $(seq 1 400); do echo $i > burst/f$i; done")
	d := settled(t, w, root)
	if !d.Full {
		t.Fatalf("400 new files with MaxDirty 50: not a full scan")
	}
	if len(d.Paths) > 50 {
		t.Fatalf("%d dirty paths kept, over the cap of 50", len(d.Paths))
	}
	w.Ack(d)
	// After the scan, the watcher is back to paths.
	shell(t, root, "echo again > burst/f1")
	d = settled(t, w, root)
	if d.Full || strings.Join(d.Paths, ",") != "burst/f1" {
		t.Fatalf("after the scan: %+v", d)
	}
}
