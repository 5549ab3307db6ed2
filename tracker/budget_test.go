package tracker

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/internal/bigfile"
	"github.com/prsm-dev/prsm/sync"
)

// Two sessions' looks share one content budget: the second waits for
// the first to let go of its large file, and a look that holds part of
// the budget reads a file that does not fit as a stub instead of
// waiting on another look.
func TestLooksShareTheContentBudget(t *testing.T) {
	defer bigfile.SetLimit(4 << 20)()
	defer SetLookBudget(4 << 20)()
	old := waitMore
	waitMore = 100 * time.Millisecond
	defer func() { waitMore = old }()

	a, _ := newTrackedSession(t)
	b, _ := newTrackedSession(t)
	three := bytes.Repeat([]byte("abc\n"), 3<<18) // 3 MiB
	half := bytes.Repeat([]byte("de\n"), 3<<19/3) // 1.5 MiB
	for _, s := range []*Session{a, b} {
		if err := os.WriteFile(filepath.Join(s.Worktree, "big.txt"), three, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"f1.txt", "f2.txt"} {
			if err := os.WriteFile(filepath.Join(s.Worktree, name), half, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer func() {
		a.EndLook()
		b.EndLook()
	}()

	a.NewLook()
	v, err := a.Current("big.txt")
	if err != nil || !bytes.Equal(v.Content, three) {
		t.Fatalf("a's big.txt: %d bytes, %v", len(v.Content), err)
	}
	if got := SharedUsed(); got != 3<<20 {
		t.Fatalf("the budget holds %d bytes after a's read; want %d", got, 3<<20)
	}

	// b holds nothing: it waits for a, however long that takes.
	b.NewLook()
	type read struct {
		v   sync.Version
		err error
	}
	done := make(chan read, 1)
	go func() {
		v, err := b.Current("big.txt")
		done <- read{v, err}
	}()
	// Its wait shows as the budget's wake channel; the read has not
	// happened while a holds the budget.
	deadline := time.Now().Add(time.Minute)
	for {
		shared.mu.Lock()
		waiting := shared.wake != nil
		shared.mu.Unlock()
		if waiting {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("b's read did not wait for the budget")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case r := <-done:
		t.Fatalf("b read %d bytes while a held the budget (%v)", len(r.v.Content), r.err)
	default:
	}
	a.EndLook()
	r := <-done
	if r.err != nil || !bytes.Equal(r.v.Content, three) {
		t.Fatalf("b's big.txt after a let go: %d bytes, %v", len(r.v.Content), r.err)
	}
	if got := SharedUsed(); got != 3<<20 {
		t.Fatalf("the budget holds %d bytes after b's read; want %d", got, 3<<20)
	}

	// b lets go; a and b read 1.5 MiB each. A second 1.5 MiB file fits
	// b's own look but not the shared budget: b, holding some, does not
	// wait on a. It reads the file as a stub.
	b.EndLook()
	a.NewLook()
	b.NewLook()
	for _, s := range []*Session{a, b} {
		v, err := s.Current("f1.txt")
		if err != nil || !bytes.Equal(v.Content, half) {
			t.Fatalf("f1.txt: %d bytes, %v", len(v.Content), err)
		}
	}
	v, err = b.Current("f2.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, big := v.Big(); !big {
		t.Fatalf("b's f2.txt past the shared budget: %d bytes read, not a stub", len(v.Content))
	}
	if got := SharedUsed(); got != 3<<20 {
		t.Fatalf("the budget holds %d bytes after b's stub; want %d", got, 3<<20)
	}
	a.EndLook()
	b.EndLook()
	if got := SharedUsed(); got != 0 {
		t.Fatalf("the budget holds %d bytes after both looks ended", got)
	}
}
