package workspace_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/engine/workspace"
	"github.com/prsm-dev/prsm/sync"
)

func file(s string) sync.Version { return sync.Version{Present: true, Mode: 0o644, Content: []byte(s)} }

// TestPathOrder: a path that leaves nothing goes first, the deepest
// first; then the others, the shallowest first; and no order at all when
// no path lies inside another.
func TestPathOrder(t *testing.T) {
	type op struct {
		rel  string
		gone bool
	}
	run := func(ops []op) []int {
		return workspace.PathOrder(len(ops), func(i int) string { return ops[i].rel }, func(i int) bool { return ops[i].gone })
	}
	if got := run([]op{{"a", false}, {"b/c", true}}); got != nil {
		t.Errorf("no nesting: got order %v, want nil", got)
	}
	// d/x goes (a file d takes its place), then d is written.
	if got, want := run([]op{{"d", false}, {"d/x", true}}), []int{1, 0}; !slices.Equal(got, want) {
		t.Errorf("file replaces directory: got %v, want %v", got, want)
	}
	// d goes (a directory d takes its place), then d/x is written.
	if got, want := run([]op{{"d/x", false}, {"d", true}}), []int{1, 0}; !slices.Equal(got, want) {
		t.Errorf("directory replaces file: got %v, want %v", got, want)
	}
}

// TestWriterMergesAndRefusesEscapes: Sync merges the change into a file
// the user edited elsewhere, leaves a conflicting one as it is, and a
// path out of the workspace is refused by Read.
func TestWriterMergesAndRefusesEscapes(t *testing.T) {
	root := t.TempDir()
	w := workspace.New(root, slog.New(slog.DiscardHandler), nil)
	base := "1\n2\n3\n4\n5\n6\n7\n"
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("1\n2\n3\n4\n5\n6\nseven\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	state, err := w.Sync("s", "f.txt", file(base), file("one\n2\n3\n4\n5\n6\n7\n"))
	if err != nil || state != prsm.SyncSynced {
		t.Fatalf("sync: state %q, err %v", state, err)
	}
	b, _ := os.ReadFile(filepath.Join(root, "f.txt"))
	if got, want := string(b), "one\n2\n3\n4\n5\n6\nseven\n"; got != want {
		t.Errorf("merged file = %q, want %q", got, want)
	}
	state, err = w.Sync("s", "f.txt", file(base), file("1\n2\n3\n4\n5\n6\nSEVEN\n"))
	if err != nil || state != prsm.SyncConflict {
		t.Fatalf("conflicting sync: state %q, err %v", state, err)
	}
	if b2, _ := os.ReadFile(filepath.Join(root, "f.txt")); string(b2) != string(b) {
		t.Errorf("a conflict changed the file: %q", b2)
	}
	if _, err := w.Read("../outside", 100); err == nil {
		t.Error("Read of a path out of the workspace: no error")
	}
}
