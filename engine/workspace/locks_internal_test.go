package workspace

import (
	"fmt"
	stdsync "sync"
	"testing"
	"time"
)

// held is how many file locks w keeps, and the most it kept since its
// map was made.
func held(w *Writer) (n, high int) {
	w.locks.mu.Lock()
	defer w.locks.mu.Unlock()
	return len(w.locks.files), w.locks.high
}

// TestLocksGoWhenLetGo: a file's lock serializes its writers, and once
// nobody holds or waits for it, it is gone: the locks of a record of
// many files (an npm install's) are not kept for the server's life.
func TestLocksGoWhenLetGo(t *testing.T) {
	w := New(t.TempDir(), nil, nil)
	unlock := w.Lock("a.txt")
	got := make(chan func())
	go func() { got <- w.Lock("a.txt") }()
	deadline := time.Now().Add(time.Minute)
	for {
		w.locks.mu.Lock()
		refs := w.locks.files["a.txt"].refs
		w.locks.mu.Unlock()
		if refs == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second Lock never waited")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case <-got:
		t.Fatal("a second writer took a held lock")
	default:
	}
	unlock()
	second := <-got
	if n, _ := held(w); n != 1 {
		t.Errorf("%d locks kept while one is held, want 1", n)
	}
	second()
	if n, _ := held(w); n != 0 {
		t.Errorf("%d locks kept after every unlock, want 0", n)
	}

	rels := make([]string, 1200)
	for i := range rels {
		rels[i] = fmt.Sprintf("gen/f%d.js", i%1000) // with repeats
	}
	unlockAll := w.LockAll(rels)
	if n, _ := held(w); n != 1000 {
		t.Errorf("LockAll of 1000 paths holds %d locks", n)
	}
	unlockAll()
	if n, high := held(w); n != 0 || high != 0 {
		t.Errorf("after LockAll's unlock: %d locks kept, high %d; want a new empty map", n, high)
	}
}

// waitFor polls cond under w's lock until it holds, for a minute at
// most.
func waitFor(t *testing.T, w *Writer, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		w.locks.mu.Lock()
		ok := cond()
		w.locks.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestClaimsOfManyFiles: a LockAll of many files takes one claim, no lock
// a file; it waits for a lock held on one of its files, and a Lock of a
// claimed file, or an overlapping claim, waits for it.
func TestClaimsOfManyFiles(t *testing.T) {
	w := New(t.TempDir(), nil, nil)
	many := func(from int) []string {
		rels := make([]string, claimFrom+1)
		for i := range rels {
			rels[i] = fmt.Sprintf("gen/f%05d.js", from+i)
		}
		return rels
	}
	one := w.Lock("gen/f00007.js")
	claimed := make(chan func())
	go func() { claimed <- w.LockAll(many(0)) }()
	waitFor(t, w, "the claim waits", func() bool { return w.locks.waiting == 1 })
	select {
	case <-claimed:
		t.Fatal("a claim took a file whose lock is held")
	default:
	}
	one()
	unlockAll := <-claimed
	if n, _ := held(w); n != 0 || len(w.locks.claims) != 1 {
		t.Errorf("a claim of %d files: %d locks, %d claims; want 0 and 1", claimFrom+1, n, len(w.locks.claims))
	}
	// A Lock of a file outside the claim goes at once; one inside and an
	// overlapping claim wait.
	w.Lock("elsewhere")()
	single := make(chan func())
	go func() { single <- w.Lock("gen/f00100.js") }()
	other := make(chan func())
	go func() { other <- w.LockAll(many(claimFrom)) }() // shares gen/f01024.js
	waitFor(t, w, "the second claim waits", func() bool { return w.locks.waiting == 1 })
	time.Sleep(10 * time.Millisecond) // a lock or claim taken wrongly would show now
	select {
	case <-single:
		t.Fatal("Lock took a claimed file")
	case <-other:
		t.Fatal("two claims hold one file")
	default:
	}
	unlockAll()
	(<-single)()
	(<-other)()
	if n, _ := held(w); n != 0 || len(w.locks.claims) != 0 {
		t.Errorf("after every unlock: %d locks, %d claims", n, len(w.locks.claims))
	}
}

// TestLocksExcludeUnderContention: writers of a few files, each holding
// its lock while it counts, never overlap on one file, and leave no lock
// behind.
func TestLocksExcludeUnderContention(t *testing.T) {
	w := New(t.TempDir(), nil, nil)
	inside := make([]int, 3)
	var mu stdsync.Mutex
	var wg stdsync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				f := (g + i) % len(inside)
				var unlock func()
				switch {
				case i%50 == 0:
					rels := []string{fmt.Sprint(f)}
					for k := range claimFrom {
						rels = append(rels, fmt.Sprintf("x%d", k))
					}
					unlock = w.LockAll(rels)
				case i%3 == 0:
					unlock = w.LockAll([]string{fmt.Sprint(f), fmt.Sprint((f + 1) % len(inside))})
				default:
					unlock = w.Lock(fmt.Sprint(f))
				}
				mu.Lock()
				inside[f]++
				n := inside[f]
				mu.Unlock()
				if n != 1 {
					t.Errorf("file %d has %d writers at once", f, n)
				}
				mu.Lock()
				inside[f]--
				mu.Unlock()
				unlock()
			}
		}()
	}
	wg.Wait()
	if n, _ := held(w); n != 0 {
		t.Errorf("%d locks kept after every writer let go", n)
	}
}
