package tracker

import (
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/internal/safepath"
)

// TestTooLongToldOncePerTree: the scan tells of a file too deep to name,
// and the watcher then reports the first directory above it that it
// cannot watch. That is the same tree: the directory is not told again
// (it was, depending on which came first, in a loaded CI run of
// TestDeepPathIsReported/watched).
func TestTooLongToldOncePerTree(t *testing.T) {
	wt := "/w"
	s := &Session{Worktree: wt}
	dir := strings.TrimSuffix(strings.Repeat("d/", (safepath.MaxPath-len(wt))/2+2), "/")
	file := dir + "/d/f.txt"
	s.noteTooLong(file)
	if got, _ := s.TakeTooLong(); len(got) != 1 || got[0] != file {
		t.Fatalf("first look: %q, want the file", got)
	}
	s.noteTooLong(dir)
	if got, more := s.TakeTooLong(); len(got) != 0 || more != 0 {
		t.Fatalf("the directory above a told file was told again: %q (+%d)", got, more)
	}
	// Another tree is news.
	other := strings.Replace(dir, "d", "e", 1)
	s.noteTooLong(other)
	if got, _ := s.TakeTooLong(); len(got) != 1 || got[0] != other {
		t.Fatalf("another tree: %q, want %q", got, other)
	}
}
