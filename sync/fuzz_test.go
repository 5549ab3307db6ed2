package sync

import (
	"bytes"
	"slices"
	"strings"
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
	if g == nil {
		f.Fatal("git is not installed: the differential check against git merge-file cannot run")
	}
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
		if !bytes.Contains(base, []byte{0}) && !bytes.Contains(ours, []byte{0}) && !bytes.Contains(theirs, []byte{0}) {
			checkAgainstGit(t, g, base, ours, theirs)
		}
	})
}

// FuzzMerge3Edits is the differential test on random edits: ops (two bytes
// per edit) insert, delete, replace, duplicate and move lines of base to
// make ours (the first half of ops) and theirs (the second half), with
// lines from a small alphabet and from base itself, so that repeated lines
// and nearby edits (where merges get hard) are common and most merges are
// not trivially conflicting. Merge3 must agree with `git merge-file`,
// clean or not, byte for byte.
func FuzzMerge3Edits(f *testing.F) {
	f.Add([]byte("a\nb\nc\nd\ne\nf\ng\n"), []byte{0, 1, 2, 5})
	f.Add([]byte("func f() {\n\treturn 1\n}\n\nfunc g() {\n\treturn 2\n}\n"), []byte{2, 1, 7, 0, 2, 6, 9, 3})
	f.Add([]byte("}\n}\n}\n\n\n}\n"), []byte{1, 0, 4, 2, 3, 5, 8, 1})
	f.Add([]byte("x\r\ny\r\nz"), []byte{3, 1, 0, 2})
	f.Add([]byte(""), []byte{1, 0, 1, 0})
	f.Add([]byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"), []byte{4, 2, 9, 8, 12, 3, 20, 1, 5, 5, 2, 2})

	g := newGitMerger(f)
	if g == nil {
		f.Fatal("git is not installed: the differential check against git merge-file cannot run")
	}
	f.Fuzz(func(t *testing.T, base, ops []byte) {
		if len(base) > 4<<10 || len(ops) > 64 || bytes.IndexByte(base, 0) >= 0 {
			t.Skip()
		}
		half := len(ops) / 2
		half -= half % 2
		ours := editLines(base, ops[:half])
		theirs := editLines(base, ops[half:])
		checkAgainstGit(t, g, base, ours, theirs)
	})
}

// editAlphabet are the lines edits insert besides lines of the file.
var editAlphabet = []string{"a\n", "b\n", "}\n", "\n", "\treturn nil\n", "x y z\n", "a", "b\r\n"}

// editLines applies ops, two bytes each (what, where), to the lines of b.
func editLines(b []byte, ops []byte) []byte {
	var lines []string
	for rest := string(b); rest != ""; {
		i := strings.IndexByte(rest, '\n')
		if i < 0 {
			lines = append(lines, rest)
			break
		}
		lines = append(lines, rest[:i+1])
		rest = rest[i+1:]
	}
	orig := slices.Clone(lines)
	for i := 0; i+1 < len(ops); i += 2 {
		what, at := ops[i], int(ops[i+1])
		pos := 0
		if len(lines) > 0 {
			pos = at % (len(lines) + 1)
		}
		line := editAlphabet[int(what>>3)%len(editAlphabet)]
		if len(orig) > 0 && what&0x40 != 0 {
			line = orig[at%len(orig)]
		}
		switch what % 5 {
		case 0: // insert
			lines = slices.Insert(lines, pos, line)
		case 1: // delete
			if pos < len(lines) {
				lines = slices.Delete(lines, pos, pos+1)
			}
		case 2: // replace
			if pos < len(lines) {
				lines[pos] = line
			} else {
				lines = append(lines, line)
			}
		case 3: // duplicate
			if pos < len(lines) {
				lines = slices.Insert(lines, pos, lines[pos])
			}
		case 4: // move a line elsewhere
			if pos < len(lines) && len(lines) > 1 {
				l := lines[pos]
				lines = slices.Delete(lines, pos, pos+1)
				lines = slices.Insert(lines, int(what>>3)%(len(lines)+1), l)
			}
		}
	}
	return []byte(strings.Join(lines, ""))
}
