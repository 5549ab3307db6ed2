package engine

import (
	"sync/atomic"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/tracker"
)

// earlyExpiry bounds how long a tool call's early write waits for its
// complete: it holds its file's lock meanwhile, and an agent may never
// send the complete. Then complete starts the write itself, as it does
// when no write event came.
var earlyExpiry = 2 * time.Second

// writtenHook, when set, is called first by written: tests hold the
// watcher's write events with it.
var writtenHook atomic.Pointer[func(sessionID, rel string)]

// earlySlot is the early write of one captured tool call (auto mode, a
// file-changing tool naming a file): the watcher's first write event of
// that file starts it, once the capture's background work has read what
// the tracker knows of the file (before). Complete takes it, or starts it
// if nothing did. A slot is guarded by its session's earlyMu.
type earlySlot struct {
	s      *prsm.Session
	rel    string
	before *sync.Version
	// gen counts the file's write events: one that came before before
	// was known starts the write then, and a write that read the file
	// before the tool's last write (the first event of os.WriteFile is
	// its truncation) is known to be stale.
	gen uint64
	w   *earlyWrite
	// over: taken by complete, or expired; nothing starts it any more.
	over  bool
	timer *time.Timer
}

// registerEarly makes the slot of a tool call that names rel (called by
// the capture, under the session's lock). Only the first in-flight call
// naming a file is started by the watcher: the others' complete starts
// their writes.
func (cr *capturer) registerEarly(s *prsm.Session, st *sessionState, rel string) *earlySlot {
	slot := &earlySlot{s: s, rel: rel}
	st.earlyMu.Lock()
	defer st.earlyMu.Unlock()
	if _, taken := st.early[rel]; taken || cr.Watcher == nil {
		return slot
	}
	if st.early == nil {
		st.early = map[string]*earlySlot{}
	}
	st.early[rel] = slot
	slot.timer = time.AfterFunc(earlyExpiry, func() { cr.endEarly(st, slot) })
	return slot
}

// earlyKnown sets what the tracker knows of the slot's file, and starts
// the write if its write event came already.
func (cr *capturer) earlyKnown(st *sessionState, slot *earlySlot, before sync.Version) {
	st.earlyMu.Lock()
	defer st.earlyMu.Unlock()
	slot.before = &before
	cr.startWatched(st, slot)
}

// written is the watcher's callback for a file created or written in a
// session's worktree: it starts the early write of the tool call that
// names it. It does not block.
func (cr *capturer) written(sessionID, rel string) {
	if f := writtenHook.Load(); f != nil {
		(*f)(sessionID, rel)
	}
	st := cr.sessions.loaded(sessionID)
	if st == nil {
		return
	}
	st.earlyMu.Lock()
	defer st.earlyMu.Unlock()
	slot := st.early[rel]
	if slot == nil || slot.over {
		return
	}
	slot.gen++
	cr.startWatched(st, slot) // else started already, or earlyKnown starts it
}

// startWatched starts the slot's write for the watcher once both its
// write event came and its base is known, whichever is last (earlyMu
// held).
func (cr *capturer) startWatched(st *sessionState, slot *earlySlot) {
	if slot.gen > 0 && slot.before != nil && !slot.over && slot.w == nil {
		cr.startEarly(st, slot)
		cr.earlyWatched.Add(1)
	}
}

// claimEarly starts the slot's write for complete (under the session's
// lock) if nothing started it, so that it runs while complete looks for
// the changes. The slot stays open meanwhile: that look waits for the
// watcher, whose write events still count (see takeEarly).
func (cr *capturer) claimEarly(st *sessionState, slot *earlySlot) {
	st.earlyMu.Lock()
	defer st.earlyMu.Unlock()
	if !slot.over && slot.w == nil && slot.before != nil {
		cr.startEarly(st, slot)
	}
}

// takeEarly ends the slot once complete has looked for the changes (the
// watcher flushed, so every write event of the tool is counted) and
// returns its write, started anew if it may have read the file before
// the tool's last write; nil if the slot expired or before is not known.
// A write that saw later events is kept if what it read is the one
// change complete found (changes): the watcher reads a write's events
// together, so the first one usually starts the read after the whole
// write.
func (cr *capturer) takeEarly(st *sessionState, slot *earlySlot, changes []tracker.Change) *earlyWrite {
	st.earlyMu.Lock()
	if slot.over {
		st.earlyMu.Unlock()
		return nil
	}
	slot.end(st)
	w := slot.w
	stale := w != nil && w.readGen != 0 && w.readGen != slot.gen
	st.earlyMu.Unlock()
	// The slot is over: nothing else starts its write or changes it.
	if stale && !w.readOne(changes) {
		// Start anew (the new one waits for the old one's file lock).
		go w.Drop()
		cr.earlyRedone.Add(1)
		w = nil
	}
	if w == nil && slot.before != nil {
		st.earlyMu.Lock()
		cr.startEarly(st, slot)
		w = slot.w
		st.earlyMu.Unlock()
	}
	return w
}

// startEarly starts the slot's write (earlyMu held).
func (cr *capturer) startEarly(st *sessionState, slot *earlySlot) {
	slot.w = cr.prepareEarly(slot.s, slot.rel, *slot.before, func(w *earlyWrite) {
		st.earlyMu.Lock()
		w.readGen = slot.gen
		st.earlyMu.Unlock()
	})
}

// endEarly ends the slot and drops its write, if complete did not take
// it: it expired, or the capture failed.
func (cr *capturer) endEarly(st *sessionState, slot *earlySlot) {
	st.earlyMu.Lock()
	if slot.over {
		st.earlyMu.Unlock()
		return
	}
	slot.end(st)
	w := slot.w
	st.earlyMu.Unlock()
	if w != nil {
		w.Drop()
	}
}

// end marks the slot over and forgets it (earlyMu held).
func (slot *earlySlot) end(st *sessionState) {
	slot.over = true
	if slot.timer != nil {
		slot.timer.Stop()
	}
	if st.early[slot.rel] == slot {
		delete(st.early, slot.rel)
	}
}

// earlyWrite is the workspace write of the file a tool call names,
// started before the change is known (see earlySlot): the file is read
// from the worktree as the tool left it and staged (written and synced)
// against what the tracker knew of it, while the tool call's hook comes
// in and complete looks for changes and stores their records. If the one
// change found is exactly that (same content before and after), its write
// is ready when the records are stored; otherwise it is dropped and the
// write prepared as usual. It holds the file's lock from its start to its
// placing or dropping.
type earlyWrite struct {
	rel           string
	before, after sync.Version
	prep          *sync.Prepared
	ok            bool // read and staged without error
	done          chan struct{}
	// parts are the record's costly parts, made once the file is read
	// and before it is staged; partsDone closes then (and when the read
	// found no change).
	parts     recordParts
	partsDone chan struct{}
	unlock    func()
	// settled: dropped, or taken by the workspace writes that place it.
	settled bool
	// readGen is how many write events its slot had seen when it began
	// reading the file (set through atRead, under earlyMu), 0 until
	// then.
	readGen uint64
}

// prepareEarly starts the early write of rel, whose known version is
// before; atRead is called once the file's lock is held, just before the
// file is read.
func (cr *capturer) prepareEarly(s *prsm.Session, rel string, before sync.Version, atRead func(*earlyWrite)) *earlyWrite {
	w := &earlyWrite{rel: rel, before: before, done: make(chan struct{}), partsDone: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer func() {
			if !w.parts.made {
				close(w.partsDone) // no change read: no parts
			}
		}()
		w.unlock = cr.ws.Lock(rel)
		atRead(w)
		after, err := sync.ReadVersion(s.WorktreePath, rel)
		if err != nil || sync.Same(before, after) {
			return // complete finds this out itself, and says so
		}
		w.after = after
		// The record's parts first: complete's transaction needs them
		// before its placing needs the staged file.
		w.parts = makeRecordParts(before, after)
		if after.Present {
			b := store.EncodeBlob(after.Content)
			w.parts.blob = &b
		}
		close(w.partsDone)
		w.prep, err = cr.ws.PrepareLocked(rel, before, after)
		w.ok = err == nil
	}()
	return w
}

// serves reports whether the early write is the write of ch.
func (w *earlyWrite) serves(ch tracker.Change) bool {
	return w.ok && w.readAs(ch)
}

// readAs reports whether the early write read ch's new version against
// ch's base (its parts are made then). Call it once partsDone is closed.
func (w *earlyWrite) readAs(ch tracker.Change) bool {
	return w.parts.made && sameVersion(w.before, ch.Before) && sameVersion(w.after, ch.After)
}

// partsOf returns the record parts the early write made, if they are
// made and are those of ch; nil otherwise. It does not wait.
func (w *earlyWrite) partsOf(ch tracker.Change) *recordParts {
	select {
	case <-w.partsDone:
	default:
		return nil
	}
	if !w.readAs(ch) {
		return nil
	}
	return &w.parts
}

// readOne reports whether the early write read the one change of
// changes; it waits for the read (not for the staging).
func (w *earlyWrite) readOne(changes []tracker.Change) bool {
	<-w.partsDone
	return len(changes) == 1 && changes[0].Rel == w.rel && w.readAs(changes[0])
}

// sameVersion is sync.Same with the whole mode compared: the staged
// file must carry the change's permissions too.
func sameVersion(a, b sync.Version) bool {
	return sync.Same(a, b) && a.Mode == b.Mode
}

// Rel is the file the early write writes (workspace.Early).
func (w *earlyWrite) Rel() string { return w.rel }

// Take waits for the early write and, if it wrote exactly ch, hands its
// staged file and its file's lock to the caller, which settles them
// (workspace.Early).
func (w *earlyWrite) Take(ch tracker.Change) (*sync.Prepared, func(), bool) {
	<-w.done
	if !w.serves(ch) {
		return nil, nil, false
	}
	w.settled = true
	return w.prep, w.unlock, true
}

// Drop waits for the early write, removes what it staged and lets its
// file go, unless it is settled already (workspace.Early).
func (w *earlyWrite) Drop() {
	<-w.done
	if w.settled {
		return
	}
	w.settled = true
	if w.prep != nil {
		w.prep.Discard()
	}
	w.unlock()
}
