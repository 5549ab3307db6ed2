package sync_test

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/internal/memtest"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/sync/linediff"
)

// TestMerge3PastTheBounds: a merge of files past a diff's bounds is not
// clean (the caller leaves the file alone, as for a conflict) and costs
// no memory per line; with one side unchanged it still takes the other,
// byte for byte (a reject of the 10 MB change restores it), and
// Merge3Markers makes the whole file one conflict.
func TestMerge3PastTheBounds(t *testing.T) {
	pairs := linediff.MaxLines/4 + 1
	base := []byte(strings.Repeat("a\nb\n", pairs))
	theirs := bytes.ReplaceAll(base, []byte("b\n"), []byte("c\n"))
	ours := append([]byte("mine\n"), base...) // the user's edit, far from any of theirs

	var merged []byte
	var clean bool
	if alloc := memtest.Allocated(func() { merged, clean = sync.Merge3(base, ours, theirs) }); alloc > 64<<10 {
		t.Errorf("a merge past the line bound allocated %d bytes", alloc)
	}
	if clean || merged != nil {
		t.Fatalf("a merge past the line bound is clean: %d bytes", len(merged))
	}
	// One side unchanged: the other, whatever the size.
	if got, ok := sync.Merge3(theirs, theirs, base); !ok || !bytes.Equal(got, base) {
		t.Fatalf("reverse merge of an unchanged file: clean %v, %d bytes", ok, len(got))
	}
	if got, ok := sync.Merge3(base, theirs, theirs); !ok || !bytes.Equal(got, theirs) {
		t.Fatalf("both sides the same: clean %v, %d bytes", ok, len(got))
	}

	got := sync.Merge3Markers(base, ours, append(theirs, "last"...), "yours", "agent")
	want := "<<<<<<< yours\n" + string(ours) + "=======\n" + string(theirs) + "last\n>>>>>>> agent\n"
	if string(got) != want {
		t.Fatalf("markers past the bound: %d bytes, want %d (starts %q)", len(got), len(want), got[:40])
	}
	if !sync.HasConflictMarkers(got) {
		t.Error("the whole-file conflict's markers are not seen")
	}
}

// TestMerge3PastTheWork: lines of two values shuffled take a diff past
// its work bound; the merge is not clean rather than slow.
func TestMerge3PastTheWork(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	coin := func(n int) []byte {
		var b bytes.Buffer
		for range n {
			b.WriteString([]string{"a\n", "b\n"}[r.IntN(2)])
		}
		return b.Bytes()
	}
	base := coin(linediff.MaxLines/2 - 1) // with theirs, within the line bound
	ours := coin(linediff.MaxLines / 2)
	theirs := append(bytes.Clone(base), "one more\n"...)
	if merged, clean := sync.Merge3(base, ours, theirs); clean {
		t.Fatalf("a merge past the work bound is clean: %d bytes", len(merged))
	}
}

// TestHasConflictMarkersLines: markers count only as whole lines, CRLF or
// LF, the last one without a newline too.
func TestHasConflictMarkersLines(t *testing.T) {
	for in, want := range map[string]bool{
		"":                         false,
		"a\n=======\nb\n":          true,
		"a\r\n=======\r\nb":        true,
		"a\n========\n":            false,
		"x <<<<<<< y\n":            false,
		"a\n<<<<<<< ours":          true,
		"a\n>>>>>>> theirs\r\n":    true,
		"<<<<<<<\n":                false,
		strings.Repeat("x\n", 1e5): false,
	} {
		if got := sync.HasConflictMarkers([]byte(in)); got != want {
			t.Errorf("HasConflictMarkers(%.30q) = %v, want %v", in, got, want)
		}
	}
}
