package tracker

import (
	stdsync "sync"
	"time"
)

// Every session's looks share one content budget: the bytes of large
// files (sharedFrom and up) read whole and not yet let go. Without it,
// five sessions that each write two files at the size limit hold all
// ten at once, and the server's memory grows with the number of
// sessions. With it, a look that would pass the budget waits for
// another session's look to end; the look that holds nothing always
// gets its file, once the others let go, so one file at the size limit
// is always read whole. A look that holds some already waits at most
// waitMore, then reads the file as a big file's stub (its size and
// hash, synced as the bytes they are, without hunks): two looks that
// each hold part of the budget never wait on each other.
var shared contentBudget

// sharedFrom is the size from which a file's content counts against the
// shared budget. Small files, an npm install's, do not wait on anyone:
// their content is bounded by each look's own budget (LookBudget).
const sharedFrom = 1 << 20

var (
	// waitMore is how long a look that holds some of the budget waits
	// for room before it reads a file as a stub.
	waitMore = 5 * time.Second
	// waitEmpty is how long a look that holds none waits for room before
	// it reads the file anyway: another look that holds the budget that
	// long is stuck, and recording goes on.
	waitEmpty = 10 * time.Minute
)

// contentBudget counts the bytes the looks hold (used) against a limit
// given at each take.
type contentBudget struct {
	mu   stdsync.Mutex
	used int64
	// wake is closed, and replaced, whenever bytes are given back.
	wake chan struct{}
}

// take reserves n bytes when the budget has room for them under limit,
// or holds nothing at all, waiting up to wait for that. False: no room
// in time.
func (b *contentBudget) take(n, limit int64, wait time.Duration) bool {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		b.mu.Lock()
		if b.used == 0 || b.used+n <= limit {
			b.used += n
			b.mu.Unlock()
			return true
		}
		if b.wake == nil {
			b.wake = make(chan struct{})
		}
		wake := b.wake
		b.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(wait)
		}
		select {
		case <-wake:
		case <-timer.C:
			return false
		}
	}
}

// force reserves n bytes whatever the budget holds.
func (b *contentBudget) force(n int64) {
	b.mu.Lock()
	b.used += n
	b.mu.Unlock()
}

// give returns n bytes to the budget and wakes the looks that wait.
func (b *contentBudget) give(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	if b.wake != nil {
		close(b.wake)
		b.wake = nil
	}
	b.mu.Unlock()
}

// SharedUsed is the bytes of content every session's looks hold now, for tests.
func SharedUsed() int64 {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	return shared.used
}

// reserve takes size bytes of the shared budget for a file this look is
// about to read whole, and says how many bytes of it the read may take
// (the per-look room, or 0: read it as a stub).
func (s *Session) reserve(size, room int64) (max, took int64) {
	if size < sharedFrom || size > room {
		return room, 0
	}
	if s.held == 0 {
		if !shared.take(size, LookBudget(), waitEmpty) {
			shared.force(size)
		}
	} else if !shared.take(size, LookBudget(), waitMore) {
		return 0, 0
	}
	s.held += size
	return room, size
}

// unreserve gives back took bytes of this look's reservation: the file
// was read as a stub, or not read.
func (s *Session) unreserve(took int64) {
	s.held -= took
	shared.give(took)
}

// EndLook gives back what the current look holds of the shared budget:
// its contents are recorded, or dropped. The engine calls it whenever it
// lets go of a session's lock, and it forgets the directories the look
// found (dirs). NewLook gives back the budget too.
func (s *Session) EndLook() {
	s.giveBack()
	s.dirs.Reset()
}

func (s *Session) giveBack() {
	shared.give(s.held)
	s.held = 0
}
