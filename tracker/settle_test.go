package tracker

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/internal/bigfile"
)

// rewriter rewrites a file of n chunks in place, pass after pass, each
// pass with a letter of its own, its chunks in a random order with a
// pause between two: the file then only ever holds, for some pass k, the
// first t chunks of pass k's order in its letter and the others in the
// letter of pass k-1. A read that spans two writes may get a chunk of the
// new letter written after one it got in the old letter: bytes the file
// never held (a torn read).
type rewriter struct {
	path     string
	n, chunk int
	letters  []byte
	orders   [][]int
}

func newRewriter(path string, n, chunk, passes int) *rewriter {
	rw := &rewriter{path: path, n: n, chunk: chunk}
	r := rand.New(rand.NewPCG(7, 42))
	for k := 0; k <= passes; k++ {
		rw.letters = append(rw.letters, byte('a'+k%26))
		rw.orders = append(rw.orders, r.Perm(n))
	}
	return rw
}

// state is the file after pass k's first t writes.
func (rw *rewriter) state(k, t int) []byte {
	b := bytes.Repeat([]byte{rw.letters[max(k-1, 0)]}, rw.n*rw.chunk)
	for _, c := range rw.orders[k][:t] {
		copy(b[c*rw.chunk:(c+1)*rw.chunk], bytes.Repeat([]byte{rw.letters[k]}, rw.chunk))
	}
	return b
}

// held reports whether the file held b at some moment.
func (rw *rewriter) held(b []byte) bool {
	if len(b) != rw.n*rw.chunk {
		return false
	}
	for k := 1; k < len(rw.letters); k++ {
		newer := map[int]bool{}
		ok := true
		for c := 0; c < rw.n && ok; c++ {
			part := b[c*rw.chunk : (c+1)*rw.chunk]
			switch {
			case bytes.Count(part, []byte{rw.letters[k]}) == rw.chunk:
				newer[c] = true
			case bytes.Count(part, []byte{rw.letters[k-1]}) != rw.chunk:
				ok = false
			}
		}
		if !ok {
			continue
		}
		t := len(newer)
		prefix := true
		for _, c := range rw.orders[k][:t] {
			prefix = prefix && newer[c]
		}
		if prefix {
			return true
		}
	}
	return false
}

// run writes pass 1 and on, then closes done.
func (rw *rewriter) run(t *testing.T, done chan<- struct{}) {
	defer close(done)
	f, err := os.OpenFile(rw.path, os.O_WRONLY, 0)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	for k := 1; k < len(rw.letters); k++ {
		part := bytes.Repeat([]byte{rw.letters[k]}, rw.chunk)
		for _, c := range rw.orders[k] {
			if _, err := f.WriteAt(part, int64(c*rw.chunk)); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// TestDetectNeverRecordsATornRead: a file rewritten while a look reads
// it is never taken for a change with bytes the file never held, nor
// does it fail the look: it is unsettled, looked at again later. Files
// read whole and files over the size limit (hashed as they stream past)
// alike; once the writer stops, the file is found as it ends.
func TestDetectNeverRecordsATornRead(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int64
	}{{"read whole", 0}, {"over the size limit", 4 << 20}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.limit > 0 {
				defer bigfile.SetLimit(tc.limit)()
			}
			s, _ := newTrackedSession(t)
			rel := "big.bin"
			rw := newRewriter(filepath.Join(s.Worktree, rel), 12, 2<<20, 8)
			if err := os.WriteFile(rw.path, rw.state(0, 0), 0o644); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go rw.run(t, done)
			var whole, unsettled int
			for writing := true; writing; {
				select {
				case <-done:
					writing = false
				default:
				}
				changes, later, err := s.Detect([]string{rel}, noBlobs, 0)
				if err != nil {
					t.Fatalf("a file being written failed the look: %v", err)
				}
				unsettled += len(later)
				for _, ch := range changes {
					if _, big := ch.After.Big(); big {
						if ch.After.Size() != int64(rw.n*rw.chunk) {
							t.Fatalf("big file recorded at %d bytes", ch.After.Size())
						}
						continue
					}
					whole++
					if !rw.held(ch.After.Content) {
						t.Fatalf("a torn read was taken for a change (after %d whole reads)", whole)
					}
				}
			}
			t.Logf("%d whole reads, %d unsettled", whole, unsettled)
			final := rw.state(len(rw.letters)-1, rw.n)
			changes, later, err := s.Detect([]string{rel}, noBlobs, 0)
			if err != nil || len(later) != 0 || len(changes) != 1 {
				t.Fatalf("after the writes: changes %d, unsettled %v, err %v", len(changes), later, err)
			}
			got := changes[0].After
			if in, big := got.Big(); big {
				if in.ID != bigfile.HashBytes(final) {
					t.Fatalf("after the writes: the stub names another content")
				}
			} else if !bytes.Equal(got.Content, final) {
				t.Fatalf("after the writes: another content")
			}
		})
	}
}

// TestDetectQuiet: a look that asks for quiet leaves out a file changed
// less than that long before it (its writer may only pause), and reports
// it; a look without finds it; the file is found once it is quiet.
func TestDetectQuiet(t *testing.T) {
	s, _ := newTrackedSession(t)
	rel := "fresh.txt"
	if err := os.WriteFile(filepath.Join(s.Worktree, rel), []byte("part\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	changes, later, err := s.Detect([]string{rel, "src/a.txt"}, noBlobs, time.Hour)
	if err != nil || len(changes) != 0 || !slices.Equal(later, []string{rel}) {
		t.Fatalf("a look asking for an hour's quiet: changes %d, unsettled %v, err %v", len(changes), later, err)
	}
	if _, _, err := s.Differs(rel, noBlobs); err != nil {
		t.Fatalf("Differs: %v", err)
	}
	time.Sleep(50 * time.Millisecond) // quiet for the look below, whatever the load
	changes, later, err = s.Detect([]string{rel}, noBlobs, 50*time.Millisecond)
	if err != nil || len(later) != 0 || len(changes) != 1 || string(changes[0].After.Content) != "part\n" {
		t.Fatalf("once quiet: changes %v, unsettled %v, err %v", changes, later, err)
	}
	// Over the size limit, a file must be BigQuiet old for any look:
	// Differs refuses it now; Detect waits for it, once, and finds it.
	defer bigfile.SetLimit(1 << 10)()
	big := "big.bin"
	content := bytes.Repeat([]byte("big\n"), 1<<10)
	if err := os.WriteFile(filepath.Join(s.Worktree, big), content, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Differs(big, noBlobs); !errors.Is(err, ErrUnsettled) {
		t.Fatalf("Differs of a big file just written: %v, want ErrUnsettled", err)
	}
	changes, later, err = s.Detect([]string{big, rel}, noBlobs, 0)
	if err != nil || len(later) != 0 || len(changes) != 2 || changes[0].Rel != big || changes[1].Rel != rel {
		t.Fatalf("a look at a big file just written: changes %v, unsettled %v, err %v", changes, later, err)
	}
	if in, ok := changes[0].After.Big(); !ok || in.ID != bigfile.HashBytes(content) {
		t.Fatalf("the big file's change is not its stub: %q", changes[0].After.Content)
	}
}
