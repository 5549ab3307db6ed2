package tracker_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/tracker"
)

func newWatched(t *testing.T) (*tracker.Watcher, string) {
	t.Helper()
	w, err := tracker.NewWatcher(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "old/deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "old/deep/f.txt"), []byte("x"), 0o644)
	if err := w.Add("s1", root); err != nil {
		t.Fatal(err)
	}
	return w, root
}

func shell(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v %s", script, err, out)
	}
}

func settled(t *testing.T, w *tracker.Watcher, root string) tracker.Dirty {
	t.Helper()
	if err := w.Flush(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	return w.Peek(root)
}

func TestWatcherNewDirectoryFilledAtOnce(t *testing.T) {
	w, root := newWatched(t)
	// The directory and its files appear faster than a watch can be added.
	shell(t, root, "mkdir -p a/b && echo c > a/b/c && echo d > a/d && echo top > top.txt")
	d := settled(t, w, root)
	got := strings.Join(d.Paths, ",")
	for _, want := range []string{"a/b/c", "a/d", "top.txt"} {
		if !strings.Contains(","+got+",", ","+want+",") {
			t.Errorf("dirty %q lacks %s", got, want)
		}
	}
	if strings.Contains(got, "sentinel") {
		t.Errorf("sentinel leaked into dirty set: %s", got)
	}
	w.Ack(d)
	if d2 := settled(t, w, root); len(d2.Paths) != 0 || d2.Full {
		t.Errorf("after ack: %+v", d2)
	}
	// A later write in the new subdirectory is seen: it is watched.
	shell(t, root, "echo again >> a/b/c")
	if d := settled(t, w, root); strings.Join(d.Paths, ",") != "a/b/c" {
		t.Errorf("write in new dir: %v", d.Paths)
	}
}

func TestWatcherRenamedSubtree(t *testing.T) {
	w, root := newWatched(t)
	shell(t, root, "mv old new")
	d := settled(t, w, root)
	if !d.Full {
		t.Errorf("a moved directory must force a full scan: %+v", d)
	}
	w.Ack(d)
	// The old subtree's watches are gone: writing under the new name is
	// reported under the new name, never the old one.
	shell(t, root, "echo y >> new/deep/f.txt")
	d = settled(t, w, root)
	for _, p := range d.Paths {
		if strings.HasPrefix(p, "old") {
			t.Errorf("event under old path %s", p)
		}
	}
	if strings.Join(d.Paths, ",") != "new/deep/f.txt" {
		t.Errorf("dirty after write in moved dir: %v", d.Paths)
	}
	// Removing a watched directory drops its watches too.
	shell(t, root, "rm -rf new")
	d = settled(t, w, root)
	if !d.Full {
		t.Errorf("removed directory: %+v", d)
	}
}

func TestWatcherAckKeepsNewerChanges(t *testing.T) {
	w, root := newWatched(t)
	shell(t, root, "echo 1 > x")
	d := settled(t, w, root)
	shell(t, root, "echo 2 > x") // changes again before the ack
	settled(t, w, root)
	w.Ack(d)
	if d2 := w.Peek(root); strings.Join(d2.Paths, ",") != "x" {
		t.Errorf("newer change lost: %v", d2.Paths)
	}
}

// Flush through a sentinel directory: changes made just before it are all
// in the dirty set when it returns, many flushes in a row reuse one file,
// and nothing is created in the worktree.
func TestWatcherFlushWithSentinelDir(t *testing.T) {
	w, err := tracker.NewWatcher(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SentinelDir = filepath.Join(t.TempDir(), "sentinels")
	root := t.TempDir()
	if err := w.Add("s1", root); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		name := filepath.Join(root, "f"+strings.Repeat("x", i%5)+".txt")
		if err := os.WriteFile(name, []byte{byte(i)}, 0o644); err != nil {
			t.Fatal(err)
		}
		d := settled(t, w, root)
		found := false
		for _, p := range d.Paths {
			found = found || p == filepath.Base(name)
		}
		if !found || d.Full {
			t.Fatalf("flush %d returned before the write's event: %+v", i, d)
		}
		w.Ack(d)
	}
	entries, _ := os.ReadDir(w.SentinelDir)
	if len(entries) != 1 {
		t.Errorf("sentinel files: %d, want one reused", len(entries))
	}
	left, _ := os.ReadDir(root)
	for _, e := range left {
		if strings.HasPrefix(e.Name(), tracker.SentinelPrefix) {
			t.Errorf("sentinel in the worktree: %s", e.Name())
		}
	}
}
