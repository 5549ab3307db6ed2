package sync

import (
	"bytes"
	"testing"
)

// FuzzMerge3 checks properties every merge must have and, when git is
// installed, that Merge3 agrees with `git merge-file`. Run it with
// `go test -fuzz FuzzMerge3 ./sync/`.
func FuzzMerge3(f *testing.F) {
	for _, tc := range mergeCases {
		f.Add([]byte(tc.base), []byte(tc.ours), []byte(tc.theirs))
	}
	f.Add([]byte(""), []byte(""), []byte(""))
	f.Add([]byte("a"), []byte("b"), []byte("a\n"))
	f.Add([]byte("x\ny\nz"), []byte("x\ny\nz\n"), []byte("w\nx\ny\nz"))
	f.Add([]byte("1\n2\n3\n4\n5\n6\n7\n"), []byte("1\n2\n2\n3\n4\n5\n6\n7\n"), []byte("1\n2\n3\n4\n5\n6\n6\n7\n"))
	f.Add([]byte("\n\n\n\n"), []byte("\n\n\n"), []byte("\n\n\n\n\n"))

	g := newGitMerger(f)
	f.Fuzz(func(t *testing.T, base, ours, theirs []byte) {
		// Big inputs only make each run slower without finding more.
		if len(base)+len(ours)+len(theirs) > 8<<10 {
			t.Skip()
		}

		if got, clean := Merge3(base, base, theirs); !clean || !bytes.Equal(got, theirs) {
			t.Fatalf("ours == base: got %q, clean=%v, want theirs", got, clean)
		}
		if got, clean := Merge3(base, ours, base); !clean || !bytes.Equal(got, ours) {
			t.Fatalf("theirs == base: got %q, clean=%v, want ours", got, clean)
		}
		if got, clean := Merge3(base, ours, ours); !clean || !bytes.Equal(got, ours) {
			t.Fatalf("ours == theirs: got %q, clean=%v, want ours", got, clean)
		}

		got, clean := Merge3(base, ours, theirs)
		if !clean && got != nil {
			t.Fatalf("conflict returned %q, want nil", got)
		}
		// Which side is "ours" must not matter: both diffs are taken
		// against the same base and a clean merge uses every change once.
		swapped, swappedClean := Merge3(base, theirs, ours)
		if clean != swappedClean || !bytes.Equal(got, swapped) {
			t.Fatalf("not symmetric: %q (clean=%v) vs swapped %q (clean=%v)", got, clean, swapped, swappedClean)
		}

		// git refuses files with a NUL byte as binary.
		if g != nil && !bytes.Contains(base, []byte{0}) && !bytes.Contains(ours, []byte{0}) && !bytes.Contains(theirs, []byte{0}) {
			checkAgainstGit(t, g, base, ours, theirs)
		}
	})
}
