package tracker_test

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/tracker"
)

// TestWatcherDotDotNames: names that start with two dots are names like
// any other; only a whole ".." segment leads out of a root.
func TestWatcherDotDotNames(t *testing.T) {
	w, root := newWatched(t)
	shell(t, root, "echo a > ..txt && mkdir ..foo && echo b > ..foo/bar && echo c > ... && echo d > old/..deep")
	d := settled(t, w, root)
	if got, want := strings.Join(d.Paths, ","), "...,..foo/bar,..txt,old/..deep"; got != want {
		t.Errorf("dirty = %q, want %q", got, want)
	}
}

// TestWatcherCatchesUpWithADeepChain: an agent makes directories inside
// each other faster than watches can be added (each walk finds new ones
// below the last). Whatever the walk missed is found by the next look:
// the file at the bottom is dirty, or the look is a full scan.
func TestWatcherCatchesUpWithADeepChain(t *testing.T) {
	w, err := tracker.NewWatcher(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	// Asking git what is ignored takes a while; the agent does not wait.
	w.Ignored = func(string, []string) map[string]bool {
		time.Sleep(2 * time.Millisecond)
		return nil
	}
	root := t.TempDir()
	if err := w.Add("s1", root); err != nil {
		t.Fatal(err)
	}
	rel := deepChain(t, root, 2000)
	d := settled(t, w, root)
	if !d.Full && !slices.Contains(d.Paths, rel) {
		t.Fatalf("neither a full scan nor %s...f.txt dirty: %d paths", rel[:10], len(d.Paths))
	}
	w.Ack(d)
	// Once caught up, the whole chain is watched: a later write at the
	// bottom is an event.
	if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(rel)), []byte("again"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := settled(t, w, root); d.Full || !slices.Contains(d.Paths, rel) {
		t.Fatalf("later write at the bottom: full=%v, %d paths", d.Full, len(d.Paths))
	}
}

// deepChain makes depth directories "d" inside each other below root, one
// at a time relative to the last (as fast as a script would), and a file
// f.txt at the bottom; it returns the file's relative path.
func deepChain(t *testing.T, root string, depth int) string {
	t.Helper()
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < depth; i++ {
		if err := r.Mkdir("d", 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := r.OpenRoot("d")
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		r = next
	}
	defer r.Close()
	if err := r.WriteFile("f.txt", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	return strings.Repeat("d/", depth) + "f.txt"
}
