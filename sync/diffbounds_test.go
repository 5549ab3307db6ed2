package sync

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/internal/memtest"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/sync/linediff"
)

// TestRangesAndHunksPastTheBounds: the file (every other line
// changed), past the hunk bound and past the line bound, is one hunk of
// the whole file: its ranges are every line of each side, and the note
// says why. The same edit at the hunk bound keeps its real hunks.
func TestRangesAndHunksPastTheBounds(t *testing.T) {
	alt := func(n int, mid string) []byte { return []byte(strings.Repeat("a\n"+mid+"\n", n)) }
	for _, tc := range []struct {
		pairs int
		note  string
	}{
		{linediff.MaxHunks, ""},
		{linediff.MaxHunks + 1, "more than 5000 hunks"},
		{linediff.MaxLines/4 + 1, fmt.Sprintf("%d lines before and after together", linediff.MaxLines+4)},
		{2_500_000, "10000000 lines before and after together"},
	} {
		old, new := alt(tc.pairs, "b"), alt(tc.pairs, "c")
		var added, removed []prsm.Range
		var hunks []prsm.Hunk
		var note string
		alloc := memtest.Allocated(func() { added, removed, hunks, note = RangesAndHunks(old, new) })
		t.Logf("%d pairs: %d hunks, %.1f MB allocated", tc.pairs, len(hunks), float64(alloc)/(1<<20))
		if tc.note == "" {
			if note != "" || len(hunks) != tc.pairs || len(added) != tc.pairs || len(removed) != tc.pairs {
				t.Fatalf("%d pairs: %d hunks, %d+%d ranges, note %q; want real hunks", tc.pairs, len(hunks), len(added), len(removed), note)
			}
			continue
		}
		n := 2 * tc.pairs
		whole := []prsm.Range{{StartLine: 1, EndLine: n}}
		wantHunks := []prsm.Hunk{{Index: 0, OldStart: 1, OldLines: n, NewStart: 1, NewLines: n, Status: prsm.StatusPending}}
		if !reflect.DeepEqual(added, whole) || !reflect.DeepEqual(removed, whole) || !reflect.DeepEqual(hunks, wantHunks) {
			t.Errorf("%d pairs: ranges %v %v, hunks %v; want the whole file", tc.pairs, added, removed, hunks)
		}
		if !strings.HasPrefix(note, "one hunk of the whole file: ") || !strings.Contains(note, tc.note) {
			t.Errorf("%d pairs: note %q, want it to say %q", tc.pairs, note, tc.note)
		}
		if alloc > 32<<20 {
			t.Errorf("%d pairs: %d MB allocated for one hunk", tc.pairs, alloc>>20)
		}
	}
}

// TestUnifiedDiffPastTheBounds: the diff of a change past the bounds is
// its one block, which git apply takes, byte for byte, with or without a
// final newline; it is written off the contents (its memory is the text,
// not a slice of lines).
func TestUnifiedDiffPastTheBounds(t *testing.T) {
	testgit.Env(t)
	pairs := linediff.MaxLines/4 + 1
	old := strings.Repeat("a\nb\n", pairs)
	for _, tc := range []struct{ name, old, new, header string }{
		{"every other line", old, strings.Repeat("a\nc\n", pairs), fmt.Sprintf("@@ -1,%d +1,%d @@\n", 2*pairs, 2*pairs)},
		{"no final newline", old + "end", strings.Repeat("a\nc\n", pairs) + "END", fmt.Sprintf("@@ -1,%d +1,%d @@\n", 2*pairs+1, 2*pairs+1)},
		{"from empty", "", old, fmt.Sprintf("@@ -0,0 +1,%d @@\n", 2*pairs)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, n := []byte(tc.old), []byte(tc.new)
			var patch string
			alloc := memtest.Allocated(func() { patch = UnifiedDiff("a/f.txt", "b/f.txt", o, n, 3) })
			if alloc > uint64(len(patch))+64<<10 {
				t.Errorf("%d bytes allocated for a %d-byte patch", alloc, len(patch))
			}
			if !strings.HasPrefix(patch, "--- a/f.txt\n+++ b/f.txt\n"+tc.header) || strings.Count(patch, "@@ -") != 1 {
				t.Fatalf("patch starts %q", patch[:min(len(patch), 80)])
			}
			dir := testgit.Init(t, "repo")
			p := filepath.Join(dir, "f.txt")
			if err := os.WriteFile(p, []byte(tc.old), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("git", "apply")
			cmd.Dir = dir
			cmd.Stdin = strings.NewReader(patch)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git apply: %v\n%s", err, out)
			}
			if got, err := os.ReadFile(p); err != nil || string(got) != tc.new {
				t.Fatalf("git apply gave %d bytes (%v), want %d", len(got), err, len(tc.new))
			}
			// Only its one hunk can be chosen.
			if DiffHunks([]byte(tc.old), []byte(tc.new), 3, func(i int) bool { return i != 0 }) != "" {
				t.Error("a diff without its one hunk is not empty")
			}
		})
	}
}
