package linediff

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/internal/memtest"
)

// alternating is the file: "a\nb\n" n times, with each b made
// mid when mid is not "".
func alternating(n int, mid string) []byte {
	return []byte(strings.Repeat("a\n"+mid+"\n", n))
}

// TestDiffBoundedBelowTheBounds: below the bounds DiffBounded is Diff,
// line for line, and Lines counts what Split cuts.
func TestDiffBoundedBelowTheBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 1))
	for range 2000 {
		old, new := randomFile(r, 40, 5), randomFile(r, 40, 5)
		if Lines(old) != len(Split(old)) {
			t.Fatalf("Lines(%q) = %d, Split cuts %d", old, Lines(old), len(Split(old)))
		}
		a, b, hunks, limit := DiffBounded(old, new)
		want := Diff(Split(old), Split(new))
		if limit != Within || !reflect.DeepEqual(hunks, want) {
			t.Fatalf("DiffBounded(%q, %q) = %v %v, Diff gives %v", old, new, hunks, limit, want)
		}
		if a != nil && (!reflect.DeepEqual(a, Split(old)) || !reflect.DeepEqual(b, Split(new))) {
			t.Fatalf("DiffBounded(%q, %q): lines %q %q", old, new, a, b)
		}
		if a == nil && len(old) > 0 && len(new) > 0 && !bytes.Equal(old, new) {
			t.Fatalf("DiffBounded(%q, %q) ran and gave no lines", old, new)
		}
	}
}

// TestDiffBoundedPastTheBounds: the file (every other line
// changed) and the worst inputs of a diff, each past one bound, come back
// as the one hunk of the whole file, with the bound named, and within
// the memory the bounds promise.
func TestDiffBoundedPastTheBounds(t *testing.T) {
	huge := bytes.Repeat([]byte("x"), 20<<20)
	hugeEdit := bytes.Clone(huge)
	hugeEdit[10<<20] = 'y'
	r := rand.New(rand.NewPCG(7, 8))
	coin := func(n int) []byte {
		var b bytes.Buffer
		for range n {
			b.WriteString([]string{"a\n", "b\n"}[r.IntN(2)])
		}
		return b.Bytes()
	}
	tests := []struct {
		name     string
		old, new []byte
		limit    Limit
		hunks    int    // when Within
		maxAlloc uint64 // bytes
	}{
		// 2.5M one-line hunks in the issue; past MaxLines it is never
		// split, so it costs nothing.
		{"issue's 10 MB file", alternating(2_500_000, "b"), alternating(2_500_000, "c"), TooManyLines, 0, 1 << 10},
		{"alternating past the lines", alternating(MaxLines/4+1, "b"), alternating(MaxLines/4+1, "c"), TooManyLines, 0, 1 << 10},
		{"alternating past the hunks", alternating(MaxHunks+1, "b"), alternating(MaxHunks+1, "c"), TooManyHunks, 0, 8 << 20},
		{"alternating at the hunks", alternating(MaxHunks, "b"), alternating(MaxHunks, "c"), Within, MaxHunks, 8 << 20},
		// Most lines the diff takes, each other one changed: its memory
		// at the bound.
		{"many tiny hunks at the lines", distinct(MaxLines/2, 0), distinct(MaxLines/2, 2), TooManyHunks, 0, 100 << 20},
		// One 20 MB line: two lines to diff, not 20 MB of copies.
		{"one huge line", huge, hugeEdit, Within, 1, 1 << 20},
		{"random a/b lines", coin(MaxLines / 2), coin(MaxLines / 2), TooMuchWork, 0, 100 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var a, b [][]byte
			var hunks []Hunk
			var limit Limit
			alloc := memtest.Allocated(func() { a, b, hunks, limit = DiffBounded(tc.old, tc.new) })
			t.Logf("%d+%d lines: %v, %d hunks, %.1f MB allocated", Lines(tc.old), Lines(tc.new), limit, len(hunks), float64(alloc)/(1<<20))
			if limit != tc.limit {
				t.Fatalf("limit %v, want %v", limit, tc.limit)
			}
			if alloc > tc.maxAlloc {
				t.Errorf("allocated %d bytes, bound %d", alloc, tc.maxAlloc)
			}
			if tc.limit == Within {
				if len(hunks) != tc.hunks || a == nil || b == nil {
					t.Fatalf("%d hunks (lines given: %v), want %d", len(hunks), a != nil, tc.hunks)
				}
				return
			}
			want := []Hunk{{OldStart: 0, OldCount: Lines(tc.old), NewStart: 0, NewCount: Lines(tc.new)}}
			if !reflect.DeepEqual(hunks, want) || a != nil || b != nil {
				t.Fatalf("hunks %v (lines given: %v), want the whole file %v", hunks, a != nil, want)
			}
		})
	}
}

// distinct is n distinct lines; with every > 0, each every-th line is
// changed.
func distinct(n, every int) []byte {
	var b bytes.Buffer
	for i := range n {
		if every > 0 && i%every == 0 {
			fmt.Fprintf(&b, "changed line %d\n", i)
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	return b.Bytes()
}

// TestDiffBoundedWork: the work bound is counted, not timed: the same
// diff gives up at the same bound every time, and a diff within it is
// Diff's.
func TestDiffBoundedWork(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var old, new bytes.Buffer
	for range 3000 {
		fmt.Fprintf(&old, "%d\n", r.IntN(3))
		fmt.Fprintf(&new, "%d\n", r.IntN(3))
	}
	_, _, full, limit := DiffBounded(old.Bytes(), new.Bytes())
	if limit != Within || !reflect.DeepEqual(full, Diff(Split(old.Bytes()), Split(new.Bytes()))) {
		t.Fatalf("within the bounds: %v, %d hunks", limit, len(full))
	}
	defer func(n int) { maxWork = n }(maxWork)
	maxWork = 1000
	for range 3 {
		_, _, hunks, limit := DiffBounded(old.Bytes(), new.Bytes())
		if limit != TooMuchWork || !reflect.DeepEqual(hunks, WholeHunk(3000, 3000)) {
			t.Fatalf("past the work bound: %v %v", limit, hunks)
		}
	}
}

// TestDiffBoundedEmptySides: a creation or a deletion is one hunk of the
// whole file without a diff, and within the bounds whatever its size.
func TestDiffBoundedEmptySides(t *testing.T) {
	big := alternating(MaxLines, "b")
	for _, tc := range []struct {
		old, new []byte
		want     []Hunk
	}{
		{nil, nil, nil},
		{[]byte("x\n"), []byte("x\n"), nil},
		{nil, big, []Hunk{{0, 0, 0, 2 * MaxLines}}},
		{big, nil, []Hunk{{0, 2 * MaxLines, 0, 0}}},
		{[]byte("a"), nil, []Hunk{{0, 1, 0, 0}}},
	} {
		a, b, hunks, limit := DiffBounded(tc.old, tc.new)
		if limit != Within || a != nil || b != nil || !reflect.DeepEqual(hunks, tc.want) {
			t.Errorf("DiffBounded(%d bytes, %d bytes) = %v %v, want %v", len(tc.old), len(tc.new), hunks, limit, tc.want)
		}
	}
}
