package tracker_test

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/prsm-dev/prsm/tracker"
)

func quietWatcher(t *testing.T) *tracker.Watcher {
	t.Helper()
	w, err := tracker.NewWatcher(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// tree makes n files in dirs of 50 under a new directory.
func tree(t *testing.T, n int) string {
	t.Helper()
	root := t.TempDir()
	for i := 0; i < n; i++ {
		p := filepath.Join(root, fmt.Sprintf("d%d/f%d", i/50, i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// limited checks that the session is scanned for the cause given, says
// so with a fix, and that its every look is a full scan.
func limited(t *testing.T, w *tracker.Watcher, id, root, cause, fix string) {
	t.Helper()
	l, ok := w.Limits()[id]
	if !ok || l.Cause != cause {
		t.Fatalf("Limits()[%s] = %+v, want cause %q", id, l, cause)
	}
	if !strings.Contains(l.Fix, fix) || !strings.Contains(l.Reason, "scanning with git status") {
		t.Fatalf("limit %+v: want a fix with %q", l, fix)
	}
	if w.Degraded()[id] != l.Reason {
		t.Fatalf("Degraded()[%s] = %q, want %q", id, w.Degraded()[id], l.Reason)
	}
	if d := settled(t, w, root); !d.Full {
		t.Fatalf("a limited worktree's look is not a full scan: %+v", d)
	}
}

// A worktree on a network file system is scanned, not watched, and says
// why: its changes made elsewhere send no events.
func TestWatcherRemoteFSIsScanned(t *testing.T) {
	w := quietWatcher(t)
	remote := t.TempDir()
	w.RemoteFS = func(root string) string {
		if root == remote {
			return "nfs"
		}
		return ""
	}
	local := t.TempDir()
	if err := w.Add("local", local); err != nil {
		t.Fatal(err)
	}
	if err := w.Add("remote", remote); err != nil {
		t.Fatalf("Add on a network file system failed: %v", err)
	}
	limited(t, w, "remote", remote, tracker.LimitRemote, "PRSM_HOME")
	if !strings.Contains(w.Limits()["remote"].Reason, "nfs") {
		t.Fatalf("reason does not name the file system: %+v", w.Limits()["remote"])
	}
	if _, ok := w.Limits()["local"]; ok {
		t.Fatalf("the local worktree is limited too: %+v", w.Limits())
	}
	shell(t, local, "echo x > new.txt")
	if d := settled(t, w, local); d.Full || strings.Join(d.Paths, ",") != "new.txt" {
		t.Fatalf("the local worktree is not watched: %+v", d)
	}
}

// The budget's limit names PRSM_MAX_WATCHES and how to lift it.
func TestWatcherBudgetLimitSaysFix(t *testing.T) {
	w := quietWatcher(t)
	w.Budget = 2
	root := tree(t, 200)
	if err := w.Add("big", root); err != nil {
		t.Fatal(err)
	}
	limited(t, w, "big", root, tracker.LimitBudget, "PRSM_MAX_WATCHES")
}

func TestKqueueBound(t *testing.T) {
	for _, c := range []struct {
		nofile uint64
		want   int
	}{{0, 0}, {256, 0}, {512, 0}, {600, 88}, {1024, 512}, {10240, 5120}, {1 << 40, 1 << 30}} {
		if got := tracker.KqueueBound(c.nofile); got != c.want {
			t.Errorf("KqueueBound(%d) = %d, want %d", c.nofile, got, c.want)
		}
	}
}

// With kqueue (a descriptor per file: darwin), a worktree is watched only
// while the files of every watched worktree fit the bound; a larger one
// is scanned, and what git ignores does not count. Linux runs the choice
// with the backend declared kqueue and the limit injected.
func TestWatcherKqueueChoosesByRepositorySize(t *testing.T) {
	w := quietWatcher(t)
	w.Kqueue, w.OpenFiles = true, 1100 // bound: 550 descriptors
	w.Ignored = func(root string, dirs []string) map[string]bool {
		m := map[string]bool{}
		for _, d := range dirs {
			if d == "node_modules" {
				m[d] = true
			}
		}
		return m
	}
	small := tree(t, 300)
	if err := os.MkdirAll(filepath.Join(small, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	shell(t, small, "cd node_modules && for i in $(seq 1 2000); do echo $i > m$i; done")
	if err := w.Add("small", small); err != nil {
		t.Fatal(err)
	}
	if l, ok := w.Limits()["small"]; ok {
		t.Fatalf("300 files (and 2000 ignored) do not fit 550 descriptors: %+v", l)
	}
	// 300 are taken: 300 more do not fit what is left.
	second := tree(t, 300)
	if err := w.Add("second", second); err != nil {
		t.Fatal(err)
	}
	limited(t, w, "second", second, tracker.LimitKqueue, "ulimit -n")
	// Once the first is gone, a third of the same size fits again.
	w.Remove(small)
	third := tree(t, 300)
	if err := w.Add("third", third); err != nil {
		t.Fatal(err)
	}
	if l, ok := w.Limits()["third"]; ok {
		t.Fatalf("the descriptors of a removed worktree are not given back: %+v", l)
	}
	shell(t, third, "echo y > d0/f0")
	if d := settled(t, w, third); d.Full || strings.Join(d.Paths, ",") != "d0/f0" {
		t.Fatalf("the worktree that fits is not watched: %+v", d)
	}
}

// A watcher that could not start still takes worktrees: each is limited
// with the start's reason and every look at it is a full scan.
func TestScanningWatcher(t *testing.T) {
	w := tracker.ScanningWatcher(slog.New(slog.NewTextHandler(io.Discard, nil)), tracker.StartLimit(syscall.EMFILE))
	root := t.TempDir()
	if err := w.Add("s", root); err != nil {
		t.Fatal(err)
	}
	limited(t, w, "s", root, tracker.LimitNoWatcher, "ulimit -n")
	if ids := w.DegradedRoots(); len(ids) != 1 || ids[0] != "s" {
		t.Fatalf("DegradedRoots() = %v", ids)
	}
	w.Remove(root)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// A worktree that does not fit gives its watches back: another one that
// fits is watched in full.
func TestWatcherLimitedGivesWatchesBack(t *testing.T) {
	w := quietWatcher(t)
	w.Budget = 10
	big := tree(t, 1000) // 21 directories
	if err := w.Add("big", big); err != nil {
		t.Fatal(err)
	}
	limited(t, w, "big", big, tracker.LimitBudget, "PRSM_MAX_WATCHES")
	small := tree(t, 400) // 9 directories
	if err := w.Add("small", small); err != nil {
		t.Fatal(err)
	}
	if l, ok := w.Limits()["small"]; ok {
		t.Fatalf("the watches of the limited worktree were kept: %+v", l)
	}
	shell(t, small, "echo y > d7/f399")
	if d := settled(t, w, small); d.Full || strings.Join(d.Paths, ",") != "d7/f399" {
		t.Fatalf("the worktree that fits is not watched: %+v", d)
	}
}
