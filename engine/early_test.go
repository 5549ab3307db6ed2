package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	stdsync "sync"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
)

// wantEarlySynced checks that recs is the one synced record want names
// (as summary prints it), that the workspace's f.txt is content, and how
// many early writes were placed so far.
func (f *fixture) wantEarlySynced(recs []*prsm.Record, want, content string, placed int64) {
	f.t.Helper()
	if got := summary(recs); got != want {
		f.t.Fatalf("records:\n%s\nwant %s", got, want)
	}
	if got := read(f.t, f.ws, "f.txt"); got != content {
		f.t.Fatalf("workspace f.txt = %q, want %q", got, content)
	}
	if n := engine.EarlyPlaced(f.eng); n != placed {
		f.t.Fatalf("early writes placed = %d, want %d", n, placed)
	}
}

// wantParts checks what a record's costly parts gave it: the stored new
// content is after, and the line ranges are those of before -> after.
func (f *fixture) wantParts(r *prsm.Record, before, after string) {
	f.t.Helper()
	got, _, err := f.eng.Content(f.ctx, r.SessionID, r.ID, "after")
	if err != nil || string(got) != after {
		f.t.Fatalf("stored content after %s = %q, %v; want %q", r.ID, got, err, after)
	}
	added, removed := sync.LineRanges([]byte(before), []byte(after))
	if fmt.Sprint(r.AddedRanges, r.RemovedRanges) != fmt.Sprint(added, removed) {
		f.t.Fatalf("ranges of %s = %v %v, want %v %v", r.ID, r.AddedRanges, r.RemovedRanges, added, removed)
	}
}

// TestEarlyWriteServesAnEdit: an Edit's workspace write is started before
// complete knows the change, and is the one placed.
func TestEarlyWriteServesAnEdit(t *testing.T) {
	f := newFixture(t)
	s := f.start("auto")
	// Complete takes the early write's parts only if its read is done by
	// the time the record is built (it does not wait for them), which on a
	// loaded machine it may not be: up to five edits, each checked whole,
	// and at least one must have been made with the early write's parts.
	before := lines(20, "")
	for i := 1; i <= 5 && engine.EarlyParts(f.eng) == 0; i++ {
		id := fmt.Sprintf("e%d", i)
		want := replaceLine(before, 4+i, "agent")
		recs := f.tool(s, id, "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", want) })
		f.wantEarlySynced(recs, id+" modify f.txt pending/synced", want, int64(i))
		// The record's stored content and ranges, whoever made them, are
		// those of the change.
		f.wantParts(recs[0], before, want)
		before = want
	}
	if n := engine.EarlyParts(f.eng); n != 1 {
		t.Fatalf("records made with an early write's parts = %d after 5 edits, want 1", n)
	}
}

// TestEarlyWriteOfAStaleBaseIsDropped: two calls name the same file; the
// later one completes first and records it, so what the earlier one's
// capture knew of the file is stale. Its early write (made against that
// base, which would conflict) is dropped, and the write is made against
// what is known now.
func TestEarlyWriteOfAStaleBaseIsDropped(t *testing.T) {
	f := newFixture(t)
	s := f.start("auto")
	base := lines(20, "")
	f.capture(s, "a", "Edit", "f.txt")
	f.capture(s, "b", "Edit", "f.txt")
	v1 := replaceLine(base, 3, "by b")
	write(t, s.WorktreePath, "f.txt", v1)
	if got := summary(f.complete(s, "b")); got != "b modify f.txt pending/synced" {
		t.Fatalf("records of b:\n%s", got)
	}
	v2 := replaceLine(v1, 3, "by a")
	write(t, s.WorktreePath, "f.txt", v2)
	recs := f.complete(s, "a")
	if got := summary(recs); got != "a modify f.txt pending/synced" {
		t.Fatalf("records of a:\n%s", got)
	}
	if got := read(t, f.ws, "f.txt"); got != v2 {
		t.Fatalf("workspace f.txt = %q, want %q", got, v2)
	}
	if *recs[0].OldContent != v1 {
		t.Fatalf("record a's old content = %q, want b's %q", *recs[0].OldContent, v1)
	}
	if n := engine.EarlyPlaced(f.eng); n != 1 {
		t.Fatalf("early writes placed = %d, want 1 (b's only)", n)
	}
}

// TestEarlyWriteDroppedWhenMoreChanged: a tool that changed more than the
// file it names gets every change written, not just the early one.
func TestEarlyWriteDroppedWhenMoreChanged(t *testing.T) {
	f := newFixture(t)
	s := f.start("auto")
	want := replaceLine(lines(20, ""), 9, "agent")
	recs := f.tool(s, "e1", "Edit", "f.txt", func(wt string) {
		write(t, wt, "f.txt", want)
		write(t, wt, "keep.txt", "kept no more\n")
	})
	if got := summary(recs); got != "e1:0 modify f.txt pending/synced\ne1:1 modify keep.txt pending/synced" {
		t.Fatalf("records:\n%s", got)
	}
	if got := read(t, f.ws, "f.txt"); got != want {
		t.Fatalf("workspace f.txt = %q, want %q", got, want)
	}
	if got := read(t, f.ws, "keep.txt"); got != "kept no more\n" {
		t.Fatalf("workspace keep.txt = %q", got)
	}
	if n := engine.EarlyPlaced(f.eng); n != 0 {
		t.Fatalf("early writes placed = %d, want 0", n)
	}
}

// watchedEdit starts the watcher and an auto-mode session, and captures
// its Edit e1 of f.txt, the capture's background work done.
func (f *fixture) watchedEdit() *prsm.Session {
	f.t.Helper()
	f.watch()
	s := f.start("auto")
	f.capture(s, "e1", "Edit", "f.txt")
	engine.Settle(f.eng)
	return s
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestWatcherStartsEarlyWrite: with the watcher on, the tool's write
// starts the workspace write before complete comes; the workspace shows
// nothing until complete has stored the record, then the staged write is
// the one placed.
func TestWatcherStartsEarlyWrite(t *testing.T) {
	f := newFixture(t)
	s := f.watchedEdit()
	base := lines(20, "")
	want := replaceLine(base, 5, "agent")
	write(t, s.WorktreePath, "f.txt", want)
	waitFor(t, "the watcher to start the early write", func() bool { return engine.EarlyWatched(f.eng) == 1 })
	if got := read(t, f.ws, "f.txt"); got != base {
		t.Fatalf("workspace f.txt changed before complete: %q", got)
	}
	f.wantEarlySynced(f.complete(s, "e1"), "e1 modify f.txt pending/synced", want, 1)
}

// TestEarlyWriteExpires: an early write whose complete does not come lets
// its file go after earlyExpiry, so another session's write of the same
// file goes through; the late complete then writes against the file as
// it is, keeping both changes. The expiry runs from the capture, so it
// must leave the watcher time to start the write first: at 100 ms a
// loaded machine's watcher came after it (the write never started, and
// the wait for it failed, 1 run in 15).
func TestEarlyWriteExpires(t *testing.T) {
	defer engine.SetEarlyExpiry(5 * time.Second)()
	f := newFixture(t)
	f.watch()
	s1, s2 := f.start("auto"), f.start("auto")
	base := lines(20, "")
	f.capture(s1, "a", "Edit", "f.txt")
	engine.Settle(f.eng)
	byA := replaceLine(base, 2, "by a")
	write(t, s1.WorktreePath, "f.txt", byA)
	waitFor(t, "the watcher to start the early write", func() bool { return engine.EarlyWatched(f.eng) == 1 })

	done := make(chan []*prsm.Record, 1)
	go func() {
		done <- f.tool(s2, "b", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 18, "by b")) })
	}()
	select {
	case recs := <-done:
		if got := summary(recs); got != "b modify f.txt pending/synced" {
			t.Fatalf("records of b:\n%s", got)
		}
	case <-time.After(time.Minute):
		// The early write expires after 5 s; one that never does
		// keeps session 2 waiting for good (a minute: a loaded machine
		// takes seconds over b's own record).
		t.Fatal("session 2's write of f.txt waits for session 1's early write, which never expires")
	}
	if got := summary(f.complete(s1, "a")); got != "a modify f.txt pending/synced" {
		t.Fatalf("records of a:\n%s", got)
	}
	if got, want := read(t, f.ws, "f.txt"), replaceLine(byA, 18, "by b"); got != want {
		t.Fatalf("workspace f.txt = %q, want both changes %q", got, want)
	}
}

// TestCaptureStoresNamedFileBase: the capture stores the known content of
// the file an Edit names, so that complete's record need not.
func TestCaptureStoresNamedFileBase(t *testing.T) {
	f := newFixture(t)
	s := f.start("auto")
	base := lines(20, "")
	f.capture(s, "e1", "Edit", "f.txt")
	if ok, err := store.HasBlob(f.ctx, f.q(), store.HashBlob([]byte(base))); err != nil || !ok {
		t.Fatalf("f.txt's base stored at the capture: %v, %v; want true", ok, err)
	}
	write(t, s.WorktreePath, "f.txt", replaceLine(base, 7, "agent"))
	recs := f.complete(s, "e1")
	if got := summary(recs); got != "e1 modify f.txt pending/synced" || *recs[0].OldContent != base {
		t.Fatalf("records:\n%s", got)
	}
}

// TestEarlyWriteRedoneAfterLaterWrite: a write the watcher started that
// read the file before the tool wrote it again is started anew by
// complete, not dropped for the slow path: the early write placed is the
// second one. That holds too when the watcher's event of the last write
// reaches the engine only after complete has begun (late: it is held
// until then), as complete's look for changes waits for the watcher.
func TestEarlyWriteRedoneAfterLaterWrite(t *testing.T) {
	for _, late := range []bool{false, true} {
		t.Run(fmt.Sprintf("late=%v", late), func(t *testing.T) {
			f := newFixture(t)
			s := f.watchedEdit()
			base := lines(20, "")
			write(t, s.WorktreePath, "f.txt", replaceLine(base, 5, "half done"))
			waitFor(t, "the early write of the first content to be staged", func() bool {
				staged, _ := filepath.Glob(filepath.Join(f.ws, sync.TempPrefix+"*"))
				return len(staged) == 1
			})
			want := replaceLine(base, 5, "agent")
			if late {
				release := engine.HoldWritten()
				write(t, s.WorktreePath, "f.txt", want)
				go func() {
					time.Sleep(100 * time.Millisecond) // complete is underway
					release()
				}()
			} else {
				write(t, s.WorktreePath, "f.txt", want)
				if err := f.eng.Watcher.Flush(f.ctx, s.WorktreePath); err != nil {
					t.Fatal(err)
				}
			}
			recs := f.complete(s, "e1")
			f.wantEarlySynced(recs, "e1 modify f.txt pending/synced", want, 1)
			// The parts the first early write made of "half done" are
			// not the record's.
			f.wantParts(recs[0], base, want)
			if n := engine.EarlyWatched(f.eng); n != 1 {
				t.Fatalf("early writes the watcher started = %d, want 1", n)
			}
			if n := engine.EarlyRedone(f.eng); n != 1 {
				t.Fatalf("early writes started anew = %d, want 1", n)
			}
		})
	}
}

// TestEarlyWriteOfTheLastContentIsKept: write events that come after the
// early write began reading the file do not make complete start it anew
// when what it read is what the tool left: the tool's last write had
// landed before the watcher reported its first event (the usual case, the
// watcher reads a write's events together), or wrote the same bytes again.
func TestEarlyWriteOfTheLastContentIsKept(t *testing.T) {
	f := newFixture(t)
	s := f.watchedEdit()
	want := replaceLine(lines(20, ""), 5, "agent")
	// Moved into place whole: the early write cannot read a half-written
	// file, as it may after the first event of a write in place.
	write(t, s.WorktreePath, "g.txt", want)
	if err := os.Rename(filepath.Join(s.WorktreePath, "g.txt"), filepath.Join(s.WorktreePath, "f.txt")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the early write to be staged", func() bool {
		staged, _ := filepath.Glob(filepath.Join(f.ws, sync.TempPrefix+"*"))
		return len(staged) == 1
	})
	write(t, s.WorktreePath, "f.txt", want) // more write events, same bytes
	if err := f.eng.Watcher.Flush(f.ctx, s.WorktreePath); err != nil {
		t.Fatal(err)
	}
	f.wantEarlySynced(f.complete(s, "e1"), "e1 modify f.txt pending/synced", want, 1)
	if n := engine.EarlyRedone(f.eng); n != 0 {
		t.Fatalf("early writes started anew = %d, want 0", n)
	}
	if n := engine.EarlyWatched(f.eng); n != 1 {
		t.Fatalf("early writes the watcher started = %d, want 1", n)
	}
}

// TestEarlyWriteStartsBeforeCaptureStored: the tool's write starts the
// early write as soon as the capture knows the file's base, not once the
// capture (and its checkpoint) is stored: here the store is held up by
// another transaction until the write is seen started.
func TestEarlyWriteStartsBeforeCaptureStored(t *testing.T) {
	f := newFixture(t)
	f.watch()
	s := f.start("auto")
	held, hold := make(chan struct{}), make(chan struct{})
	var once stdsync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	go f.eng.DB.Tx(f.ctx, func(store.Querier) error {
		close(held)
		<-hold
		return nil
	})
	<-held
	f.capture(s, "e1", "Edit", "f.txt")
	want := replaceLine(lines(20, ""), 5, "agent")
	write(t, s.WorktreePath, "f.txt", want)
	waitFor(t, "the watcher to start the early write while the capture is stored", func() bool { return engine.EarlyWatched(f.eng) == 1 })
	release()
	f.wantEarlySynced(f.complete(s, "e1"), "e1 modify f.txt pending/synced", want, 1)
}

// TestEarlyPartsOnlyOfTheirChange: a record takes an early write's parts
// only once they are made, and only if the file it read is the change's
// new version.
func TestEarlyPartsOnlyOfTheirChange(t *testing.T) {
	for _, c := range []struct {
		read, changed string
		want          bool
	}{
		{"b\n", "b\n", true},
		{"b\n", "c\n", false}, // read before a later write
	} {
		whileReading, afterRead := engine.EarlyPartsOf("a\n", c.read, c.changed)
		if whileReading || afterRead != c.want {
			t.Errorf("read %q, changed %q: parts lent while reading %v, after %v; want false, %v",
				c.read, c.changed, whileReading, afterRead, c.want)
		}
	}
}
