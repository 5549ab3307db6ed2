package linediff

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := map[string][]string{
		"":          nil,
		"a":         {"a"},
		"a\n":       {"a\n"},
		"a\nb":      {"a\n", "b"},
		"a\r\n\n":   {"a\r\n", "\n"},
		"\n\nx\n\n": {"\n", "\n", "x\n", "\n"},
	}
	for in, want := range tests {
		var got []string
		for _, l := range Split([]byte(in)) {
			got = append(got, string(l))
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Split(%q) = %q, want %q", in, got, want)
		}
	}
}

// randomFile is up to lines lines of values different ones, the last one
// without a newline now and then.
func randomFile(r *rand.Rand, lines, values int) []byte {
	var b bytes.Buffer
	for range r.IntN(lines) {
		fmt.Fprintf(&b, "%d\n", r.IntN(values))
	}
	if r.IntN(3) == 0 {
		b.WriteString("tail")
	}
	return b.Bytes()
}

// TestDiffRebuilds checks the shape of every diff on random files with many
// repeated lines: hunks in order, separated by at least one unchanged line,
// and turning a into b when applied. How the hunks are placed is pinned
// against git by sync's TestDiffMatchesGit and tracker's
// TestLineRangesAgreeWithDiffs.
func TestDiffRebuilds(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 32))
	for range 2000 {
		old, new := randomFile(r, 30, 4), randomFile(r, 30, 4)
		a, b := Split(old), Split(new)
		hunks := Diff(a, b)
		if bytes.Equal(old, new) != (hunks == nil) {
			t.Fatalf("Diff(%q, %q) = %v", old, new, hunks)
		}
		var out []byte
		pos := 0
		for i, h := range hunks {
			if h.OldStart < pos || (i > 0 && h.OldStart == pos) || h.OldCount+h.NewCount == 0 {
				t.Fatalf("Diff(%q, %q): hunk %d %+v after old line %d", old, new, i, h, pos)
			}
			if i > 0 && h.NewStart-(hunks[i-1].NewStart+hunks[i-1].NewCount) != h.OldStart-pos {
				t.Fatalf("Diff(%q, %q): hunk %d %+v out of step", old, new, i, h)
			}
			out = append(out, bytes.Join(a[pos:h.OldStart], nil)...)
			out = append(out, bytes.Join(b[h.NewStart:h.NewStart+h.NewCount], nil)...)
			pos = h.OldStart + h.OldCount
		}
		out = append(out, bytes.Join(a[pos:], nil)...)
		if !bytes.Equal(out, new) {
			t.Fatalf("Diff(%q, %q) = %v rebuilds %q", old, new, hunks, out)
		}
	}
}
