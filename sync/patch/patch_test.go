package patch_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/sync/patch"
)

// randomEdit is a text of up to 30 lines (of alphabet different ones) and an edit of it: lines
// replaced, inserted (at the top and the end too) and deleted, a final
// newline dropped or added now and then.
func randomEdit(r *rand.Rand, alphabet int) (old, new []byte) {
	line := func() string { return fmt.Sprintf("line %d\n", r.IntN(alphabet)) }
	var a []string
	for range r.IntN(30) {
		a = append(a, line())
	}
	var b []string
	for i := 0; i <= len(a); i++ {
		switch r.IntN(8) {
		case 0:
			b = append(b, line()) // insert before a[i] (or at the end)
		case 1:
			if i < len(a) {
				b = append(b, line()) // replace
				continue
			}
		case 2:
			if i < len(a) {
				continue // delete
			}
		}
		if i < len(a) {
			b = append(b, a[i])
		}
	}
	old, new = []byte(strings.Join(a, "")), []byte(strings.Join(b, ""))
	if r.IntN(5) == 0 && len(new) > 0 {
		new = bytes.TrimSuffix(new, []byte("\n"))
	}
	return old, new
}

// Hunks through go-gitdiff: the fragments of a change's -U0 patch are
// exactly its hunks (RangesAndHunks, the one diff), applying all of them
// gives the new content and none the old (for any text), and, for text
// whose lines mostly differ, applying two disjoint sets of hunks
// separately and merging the results (the 3-way merge path, as a
// workspace with some hunks and a worktree with others would) is clean and
// gives what applying their union at once gives.
func TestApplyHunksMatchesMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	multi, conflicts := 0, 0
	for n := range 3000 {
		// Few different lines make many equally short diffs, where the
		// merge may align otherwise than the hunks do (and conflict or
		// not); most cases have source-like text.
		alphabet := 1000
		if n%4 == 0 {
			alphabet = 4
		}
		old, new := randomEdit(r, alphabet)
		_, _, hunks, _ := sync.RangesAndHunks(old, new)
		frags, err := patch.HunkFragments(old, new)
		if err != nil {
			t.Fatalf("case %d: %v", n, err)
		}
		if len(frags) != len(hunks) {
			t.Fatalf("case %d: %d fragments, %d hunks\nold %q\nnew %q", n, len(frags), len(hunks), old, new)
		}
		for i, f := range frags {
			h := hunks[i]
			if int(f.OldPosition) != h.OldStart || int(f.OldLines) != h.OldLines || int(f.NewPosition) != h.NewStart || int(f.NewLines) != h.NewLines {
				t.Fatalf("case %d: fragment %d is %s, hunk %+v", n, i, strings.SplitN(f.String(), "\n", 2)[0], h)
			}
		}
		apply := func(keep func(int) bool) []byte {
			t.Helper()
			out, err := patch.ApplyHunks(old, new, keep)
			if err != nil {
				t.Fatalf("case %d: %v\nold %q\nnew %q", n, err, old, new)
			}
			return out
		}
		if got := apply(func(int) bool { return true }); !bytes.Equal(got, new) {
			t.Fatalf("case %d: all hunks give %q, want %q (old %q)", n, got, new, old)
		}
		if got := apply(func(int) bool { return false }); !bytes.Equal(got, old) {
			t.Fatalf("case %d: no hunk gives %q, want %q", n, got, old)
		}
		if len(hunks) < 2 {
			continue
		}
		multi++
		side := make([]int, len(hunks)) // 0: neither, 1: ours, 2: theirs
		for i := range side {
			side[i] = r.IntN(3)
		}
		ours := apply(func(i int) bool { return side[i] == 1 })
		theirs := apply(func(i int) bool { return side[i] == 2 })
		both := apply(func(i int) bool { return side[i] != 0 })
		merged, clean := sync.Merge3(old, ours, theirs)
		if alphabet < 10 {
			continue
		}
		if !clean {
			conflicts++
			continue
		}
		if !bytes.Equal(merged, both) {
			t.Fatalf("case %d: sides %v: merge %q (clean %v), applying both %q\nold %q\nnew %q", n, side, merged, clean, both, old, new)
		}
	}
	if multi < 500 {
		t.Fatalf("only %d cases with several hunks", multi)
	}
	if conflicts > 0 {
		t.Fatalf("%d of %d merges of disjoint hunks of source-like text conflicted", conflicts, multi)
	}
}
