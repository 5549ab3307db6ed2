package sync

import (
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
)

// TestLineRangesAgreeWithDiffs pins that a record's ranges come from the very
// diff that merges and unified output use: for the same before and after,
// LineRanges, the @@ headers of UnifiedDiff without context and the hunks of
// `git diff` (which the merge's diff reproduces, see sync's
// TestDiffMatchesGit) name the same lines. The cases are full of repeated
// lines, where several minimal diffs exist and only git's tie-breaking
// (group sliding) decides which lines a change touched.
func TestLineRangesAgreeWithDiffs(t *testing.T) {
	dir := t.TempDir()
	check := func(name string, old, new []byte) {
		t.Helper()
		added, removed := LineRanges(old, new)
		wantAdded, wantRemoved := rangesFromHunks(t, gitDiffU0(t, dir, old, new))
		if !reflect.DeepEqual(added, wantAdded) || !reflect.DeepEqual(removed, wantRemoved) {
			t.Fatalf("%s: LineRanges(%q, %q) = added %v, removed %v; git diff says added %v, removed %v",
				name, old, new, added, removed, wantAdded, wantRemoved)
		}
		uAdded, uRemoved := rangesFromHunks(t, UnifiedDiff("a/f", "b/f", old, new, 0))
		if !reflect.DeepEqual(added, uAdded) || !reflect.DeepEqual(removed, uRemoved) {
			t.Fatalf("%s: LineRanges(%q, %q) = added %v, removed %v; UnifiedDiff says added %v, removed %v",
				name, old, new, added, removed, uAdded, uRemoved)
		}
	}
	// Found by the random cases below: tracker's former own Myers took
	// line 3 for the removed one and reported added 2 and 5, git takes
	// line 2 and reports added 2 and 6.
	check("ambiguous move", []byte("0\n2\n2\n1\n0\n1\n0\n1\n"), []byte("0\nN\n2\n1\n0\n0\n1\n0\n1\n"))
	check("duplicate", []byte("a\nb\nc\n"), []byte("a\nb\nb\nc\n"))
	check("blank line", []byte("x\n\ny\n"), []byte("x\n\n\ny\n"))
	check("brace block", []byte("f {\n}\n"), []byte("f {\n}\ng {\n}\n"))
	r := rand.New(rand.NewPCG(32, 3))
	checked := gitCases(t)
	for i := range 300 {
		k := 2 + r.IntN(4)
		a := randomFile(r, r.IntN(30), k)
		b := randomEdit(r, a, k, 1+r.IntN(4))
		if checked(i) {
			check("random", []byte(strings.Join(a, "")), []byte(strings.Join(b, "")))
		}
	}
}

// checkMinimalOrGit checks that the ranges change as few lines as the
// textbook LCS allows, or else are exactly the lines `git diff` changes:
// git's diff, which prsm's follows, is not always minimal (see the case
// "git's diff is not minimal" of TestLineRanges).
func checkMinimalOrGit(t *testing.T, old, new []byte, added, removed []prsm.Range) {
	t.Helper()
	a, b := splitLines(old), splitLines(new)
	got, want := rangeLines(added)+rangeLines(removed), len(a)+len(b)-2*lcsLen(a, b)
	if got == want {
		return
	}
	gitAdded, gitRemoved := rangesFromHunks(t, gitDiffU0(t, t.TempDir(), old, new))
	if got < want || !reflect.DeepEqual(added, gitAdded) || !reflect.DeepEqual(removed, gitRemoved) {
		t.Fatalf("%d changed lines, LCS says %d, and git diff says added %v removed %v\nold %q\nnew %q\nadded %v removed %v",
			got, want, gitAdded, gitRemoved, old, new, added, removed)
	}
}

// gitDiffU0 returns `git diff -U0` from old to new, with the settings the
// merge's diff reproduces (Myers, no indent heuristic) and no user or
// system configuration.
func gitDiffU0(t *testing.T, dir string, old, new []byte) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "a"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b"), new, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "-c", "diff.indentHeuristic=false", "diff", "--no-index", "--no-color",
		"--diff-algorithm=myers", "-U0", "a", "b")
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_CEILING_DIRECTORIES=" + filepath.Dir(dir), "LC_ALL=C", "PATH=" + os.Getenv("PATH")}
	out, err := cmd.Output()
	var exitErr *exec.ExitError
	if err != nil && !(errors.As(err, &exitErr) && exitErr.ExitCode() == 1) {
		t.Fatalf("git diff: %v", err)
	}
	return string(out)
}

// rangesFromHunks reads the @@ headers of a diff without context as the
// added and removed ranges of a record.
func rangesFromHunks(t *testing.T, diff string) (added, removed []prsm.Range) {
	t.Helper()
	added, removed = []prsm.Range{}, []prsm.Range{}
	for _, l := range strings.SplitAfter(diff, "\n") {
		if !strings.HasPrefix(l, "@@ ") {
			continue
		}
		end := strings.Index(l[3:], " @@")
		if end < 0 {
			t.Fatalf("bad hunk header %q", l)
		}
		var ost, oc, nst, nc int
		if err := parseHunkHeader(l[:3+end+3]+"\n", &ost, &oc, &nst, &nc); err != nil {
			t.Fatal(err)
		}
		if oc > 0 {
			removed = append(removed, prsm.Range{StartLine: ost, EndLine: ost + oc - 1})
		}
		if nc > 0 {
			added = append(added, prsm.Range{StartLine: nst, EndLine: nst + nc - 1})
		}
	}
	return added, removed
}
