package tracker

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/prsm-dev/prsm/sync"
)

// TestLookReadsReplacedDirectoryAnew: during Detect a look reads through
// the directories it opened (sync.OpenDirs). A directory the agent
// replaced since is read anew: the look records what the path holds now,
// never the file of the directory it opened, nor its absence.
func TestLookReadsReplacedDirectoryAnew(t *testing.T) {
	wt := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(wt, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("d/x", "old x\n")
	write("d/gone", "in the old directory only\n")
	s := &Session{Worktree: wt}
	s.open = sync.NewOpenDirs(wt)
	defer s.open.Close()
	read := func(rel string) sync.Version {
		t.Helper()
		v, _, err := s.current(rel)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		return v
	}
	if v := read("d/x"); string(v.Content) != "old x\n" {
		t.Fatalf("d/x: %q", v.Content)
	}
	if v := read("e/new"); v.Present {
		t.Fatalf("e/new before it exists: %q", v.Content)
	}
	// The agent replaces d, and makes e.
	if err := os.Rename(filepath.Join(wt, "d"), filepath.Join(wt, "old")); err != nil {
		t.Fatal(err)
	}
	write("d/x", "new x\n")
	write("d/only-new", "in the new directory only\n")
	write("e/new", "new\n")
	if v := read("d/x"); string(v.Content) != "new x\n" {
		t.Errorf("d/x after d was replaced: %q, want the new directory's", v.Content)
	}
	if v := read("d/gone"); v.Present {
		t.Errorf("d/gone, which the new d lacks: read %q", v.Content)
	}
	if v := read("d/only-new"); string(v.Content) != "in the new directory only\n" {
		t.Errorf("d/only-new: %q", v.Content)
	}
	if v := read("e/new"); string(v.Content) != "new\n" {
		t.Errorf("e/new, whose directory was missing at the first read: %q", v.Content)
	}
}
