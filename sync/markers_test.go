package sync_test

import (
	"testing"

	"github.com/prsm-dev/prsm/sync"
)

// A conflict merged with markers holds both sides between git's markers,
// and the clean parts merged; a clean merge has none.
func TestMerge3Markers(t *testing.T) {
	base := "a\nb\nc\nd\ne\nf\ng\n"
	ours := "a\nB mine\nc\nd\ne\nf\ng\n"
	theirs := "a\nB agent\nc\nd\ne\nf\nG agent"
	got := string(sync.Merge3Markers([]byte(base), []byte(ours), []byte(theirs), "yours", "agent"))
	want := "a\n<<<<<<< yours\nB mine\n=======\nB agent\n>>>>>>> agent\nc\nd\ne\nf\nG agent"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if !sync.HasConflictMarkers([]byte(got)) {
		t.Fatal("markers not seen")
	}
	clean := string(sync.Merge3Markers([]byte(base), []byte(ours), []byte("a\nb\nc\nd\ne\nf\nG\n"), "yours", "agent"))
	if clean != "a\nB mine\nc\nd\ne\nf\nG\n" || sync.HasConflictMarkers([]byte(clean)) {
		t.Fatalf("clean merge: %q", clean)
	}
}
