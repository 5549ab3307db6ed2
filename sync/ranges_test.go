package sync

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/sync/linediff"
)

func rs(pairs ...int) []prsm.Range {
	out := []prsm.Range{}
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, prsm.Range{StartLine: pairs[i], EndLine: pairs[i+1]})
	}
	return out
}

func TestLineRanges(t *testing.T) {
	tests := []struct {
		name           string
		old, new       string
		added, removed []prsm.Range
	}{
		{"both empty", "", "", rs(), rs()},
		{"equal", "a\nb\n", "a\nb\n", rs(), rs()},
		{"create", "", "a\nb\nc\n", rs(1, 3), rs()},
		{"create without final newline", "", "a\nb", rs(1, 2), rs()},
		{"delete", "a\nb\nc\n", "", rs(), rs(1, 3)},
		{"truncate to empty", "a", "", rs(), rs(1, 1)},
		{"insert middle", "a\nb\nc\n", "a\nb\nX\nY\nc\n", rs(3, 4), rs()},
		{"insert at start", "a\nb\n", "X\na\nb\n", rs(1, 1), rs()},
		{"append", "a\nb\n", "a\nb\nX\n", rs(3, 3), rs()},
		{"delete middle", "a\nb\nc\nd\n", "a\nd\n", rs(), rs(2, 3)},
		{"delete first", "a\nb\n", "b\n", rs(), rs(1, 1)},
		{"replace one", "a\nb\nc\n", "a\nB\nc\n", rs(2, 2), rs(2, 2)},
		{"replace two by three", "a\nb\nc\nd\n", "a\nX\nY\nZ\nd\n", rs(2, 4), rs(2, 3)},
		{"two hunks", "1\n2\n3\n4\n5\n6\n", "1\nX\n3\n4\n6\n", rs(2, 2), rs(2, 2, 5, 5)},
		{"add final newline", "a\nb", "a\nb\n", rs(2, 2), rs(2, 2)},
		{"drop final newline", "a\nb\n", "a\nb", rs(2, 2), rs(2, 2)},
		{"append after unterminated line", "a", "a\nb", rs(1, 2), rs(1, 1)},
		{"append after unterminated, keep it", "a\nb", "a\nb\nc", rs(2, 3), rs(2, 2)},
		{"blank lines only", "\n\n", "\n\n\n", rs(3, 3), rs()},
		{"crlf differs from lf", "a\r\nb\r\n", "a\nb\r\n", rs(1, 1), rs(1, 1)},
		{"swap", "a\nb\n", "b\na\n", rs(2, 2), rs(1, 1)},
		// A line common in the other file, amid lines found nowhere
		// there, counts as changed in git's diff (xdiff's discarding of
		// common lines), though keeping it would change 2 lines fewer.
		{"git's diff is not minimal", "x\nx\nx\nx\nx\nx\nx\nx\n", "a\nb\nc\nd\nx\ne\nf\ng\nh\n", rs(1, 9), rs(1, 8)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			added, removed := LineRanges([]byte(tt.old), []byte(tt.new))
			if !reflect.DeepEqual(added, tt.added) || !reflect.DeepEqual(removed, tt.removed) {
				t.Fatalf("LineRanges(%q, %q) = added %v, removed %v; want %v, %v",
					tt.old, tt.new, added, removed, tt.added, tt.removed)
			}
			checkRanges(t, splitLines([]byte(tt.old)), splitLines([]byte(tt.new)), added, removed)
			checkMinimalOrGit(t, []byte(tt.old), []byte(tt.new), added, removed)
		})
	}
}

// TestLineRangesNonNil pins the JSON shape: [] and never null.
func TestLineRangesNonNil(t *testing.T) {
	added, removed := LineRanges(nil, nil)
	if added == nil || removed == nil {
		t.Fatalf("LineRanges(nil, nil) = %#v, %#v; want empty non-nil slices", added, removed)
	}
}

// splitLines cuts b into lines as the diff sees them (each keeps its "\n"),
// as strings that tests compare and print easily.
func splitLines(b []byte) []string {
	var out []string
	for _, l := range linediff.Split(b) {
		out = append(out, string(l))
	}
	return out
}

// checkRanges verifies that the ranges are well formed and cover exactly the
// differing lines: what lies outside them is the same sequence on both sides.
func checkRanges(t *testing.T, a, b []string, added, removed []prsm.Range) {
	t.Helper()
	keptA := outside(t, "removed", a, removed)
	keptB := outside(t, "added", b, added)
	if !reflect.DeepEqual(keptA, keptB) {
		t.Fatalf("lines outside the ranges differ:\nold kept %q\nnew kept %q\nadded %v removed %v", keptA, keptB, added, removed)
	}
}

// outside returns the lines not in ranges, after checking the ranges are in
// bounds, ordered and separated by at least one line.
func outside(t *testing.T, what string, lines []string, ranges []prsm.Range) []string {
	t.Helper()
	in := make([]bool, len(lines))
	prevEnd := -1
	for _, r := range ranges {
		if r.StartLine < 1 || r.EndLine < r.StartLine || r.EndLine > len(lines) || r.StartLine <= prevEnd+1 {
			t.Fatalf("bad %s range %v in %v (%d lines)", what, r, ranges, len(lines))
		}
		prevEnd = r.EndLine
		for l := r.StartLine; l <= r.EndLine; l++ {
			in[l-1] = true
		}
	}
	kept := []string{}
	for i, l := range lines {
		if !in[i] {
			kept = append(kept, l)
		}
	}
	return kept
}

// lcsLen is the textbook O(nm) longest common subsequence, the reference
// LineRanges must match on small inputs (minimality).
func lcsLen(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func rangeLines(rr []prsm.Range) int {
	n := 0
	for _, r := range rr {
		n += r.EndLine - r.StartLine + 1
	}
	return n
}

// randomFile builds n lines drawn from an alphabet of k distinct lines, so
// that repeats (the hard case for a diff) are common; sometimes the last line
// has no newline.
func randomFile(r *rand.Rand, n, k int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d\n", r.IntN(k))
	}
	if n > 0 && r.IntN(4) == 0 {
		lines[n-1] = strings.TrimSuffix(lines[n-1], "\n")
	}
	return lines
}

// randomEdit applies a few random insertions, deletions and replacements.
func randomEdit(r *rand.Rand, lines []string, k, edits int) []string {
	out := append([]string(nil), lines...)
	// An unterminated last line must stay last; fix it up after editing.
	for e := 0; e < edits; e++ {
		pos := 0
		if len(out) > 0 {
			pos = r.IntN(len(out) + 1)
		}
		switch r.IntN(3) {
		case 0: // insert
			ins := randomFile(r, 1+r.IntN(3), k)
			ins[len(ins)-1] = strings.TrimSuffix(ins[len(ins)-1], "\n") + "\n"
			out = append(out[:pos], append(ins, out[pos:]...)...)
		case 1: // delete
			end := min(pos+1+r.IntN(3), len(out))
			out = append(out[:pos], out[end:]...)
		case 2: // replace
			if pos < len(out) {
				out[pos] = fmt.Sprintf("new %d\n", r.IntN(k))
			}
		}
	}
	for i := 0; i+1 < len(out); i++ {
		if !strings.HasSuffix(out[i], "\n") {
			out[i] += "\n"
		}
	}
	if len(out) > 0 && r.IntN(5) == 0 {
		out[len(out)-1] = strings.TrimSuffix(out[len(out)-1], "\n")
	}
	return out
}

// TestLineRangesProperty diffs many random edits of random files: the ranges
// must cover exactly the differing lines and be minimal (as many changed lines
// as the LCS allows) except where git's diff is not, and then be git's.
func TestLineRangesProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 3000; iter++ {
		k := 2 + r.IntN(8)
		a := randomFile(r, r.IntN(40), k)
		var b []string
		if r.IntN(10) == 0 {
			b = randomFile(r, r.IntN(40), k) // unrelated content
		} else {
			b = randomEdit(r, a, k, 1+r.IntN(6))
		}
		old, new := []byte(strings.Join(a, "")), []byte(strings.Join(b, ""))
		added, removed := LineRanges(old, new)
		checkRanges(t, a, b, added, removed)
		checkMinimalOrGit(t, old, new, added, removed)
	}
}

// TestLineRangesLarge covers the cost limit: large files of few distinct lines
// need far more edits than it allows, so the heuristic split runs. The result
// must still be a correct (if not minimal) diff, and quickly.
func TestLineRangesLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{3000, 20000} {
		a := randomFile(r, n, 5)
		b := randomFile(r, n, 5)
		start := time.Now()
		added, removed := LineRanges([]byte(strings.Join(a, "")), []byte(strings.Join(b, "")))
		t.Logf("%d vs %d unrelated lines: %v, %d+%d changed", n, n, time.Since(start), rangeLines(removed), rangeLines(added))
		checkRanges(t, a, b, added, removed)
	}
}

// TestLineRangesAllocatesLittle pins what diffing scattered edits in a
// 5,000-line file costs in allocations: a fixed handful, not one per line
// or per hunk (78 allocations of 1.2 MB in all when written). Counts, not
// times, so that a busy machine cannot fail it; BenchmarkLineRanges5000
// measures the speed.
func TestLineRangesAllocatesLittle(t *testing.T) {
	old, new := scatteredEdits(5000, 100)
	var added, removed []prsm.Range
	if n := testing.AllocsPerRun(5, func() { added, removed = LineRanges(old, new) }); n > 200 {
		t.Errorf("LineRanges on 5,000 lines made %v allocations, want at most 200", n)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	LineRanges(old, new)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
		t.Errorf("LineRanges on 5,000 lines allocated %d bytes, want at most 4 MiB", got)
	}
	checkRanges(t, splitLines(old), splitLines(new), added, removed)
}

// scatteredEdits makes an n-line source-like file and a copy with edits
// spread through it.
func scatteredEdits(n, edits int) (old, new []byte) {
	r := rand.New(rand.NewPCG(5, 6))
	var a []string
	for i := 0; i < n; i++ {
		switch i % 7 {
		case 0:
			a = append(a, "\n")
		case 1:
			a = append(a, "}\n")
		default:
			a = append(a, fmt.Sprintf("\tx%d := compute(%d, y) // some code\n", i, i*31))
		}
	}
	b := append([]string(nil), a...)
	for e := 0; e < edits; e++ {
		pos := r.IntN(len(b))
		switch e % 3 {
		case 0:
			b[pos] = fmt.Sprintf("\tchanged(%d)\n", e)
		case 1:
			b = append(b[:pos], b[pos+1:]...)
		case 2:
			b = append(b[:pos], append([]string{fmt.Sprintf("\tinserted(%d)\n", e)}, b[pos:]...)...)
		}
	}
	return []byte(strings.Join(a, "")), []byte(strings.Join(b, ""))
}

func BenchmarkLineRanges5000(b *testing.B) {
	old, new := scatteredEdits(5000, 100)
	b.SetBytes(int64(len(old) + len(new)))
	b.ReportAllocs()
	for b.Loop() {
		LineRanges(old, new)
	}
}

func BenchmarkLineRangesUnrelated(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	old := []byte(strings.Join(randomFile(r, 5000, 5), ""))
	new := []byte(strings.Join(randomFile(r, 5000, 5), ""))
	b.ReportAllocs()
	for b.Loop() {
		LineRanges(old, new)
	}
}
