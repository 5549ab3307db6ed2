package workspace

import (
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/tracker"
)

// Batch is the workspace writes of a tool call's records in auto mode,
// prepared (merged and written to temporary files) while the records are
// stored, and placed once they are. The workspace never shows a change
// whose record is not stored. The files stay locked from the read that
// prepares them to their placing, so no other session's write comes in
// between.
type Batch struct {
	w         *Writer
	sessionID string
	changes   []tracker.Change
	preps     []*sync.Prepared
	errs      []error
	done      chan struct{}
	unlock    func()
	// early, when set, is the one change's write, started before the
	// change was known; settled by resolve.
	early Early
	// order, when set, is the order in which the writes must go, one
	// after the other (PathOrder: a path lies inside another); each is
	// prepared when its turn comes, in place.
	order []int
	// chunked: more writes than maxHeldWrites and no order among them;
	// Place prepares, places and settles them a chunk at a time.
	chunked bool
	// progress, when set, counts the files placed (a large record's job).
	progress func(n int)
	// news are the changes that create files, staged (chunked, where the
	// file system is synced whole: sync.CanSyncFS) while the records are
	// stored, with what failed by their index in news.
	news      []int
	staged    *sync.Staged
	stageErrs []error
}

// Early is a workspace write of one file started before its change was
// known (the engine's early write of the file a tool call names).
type Early interface {
	// Rel is the file it writes.
	Rel() string
	// Take waits for the write and, if it wrote exactly ch, hands its
	// staged file and its file lock over to the caller (ok true).
	Take(ch tracker.Change) (prep *sync.Prepared, unlock func(), ok bool)
	// Drop waits for the write, removes what it staged and lets its file
	// go, unless it was taken.
	Drop()
}

// maxHeldWrites bounds the prepared writes held at once: each holds up to
// three file descriptors (its directory, its staged file, the file it
// replaces) until it is settled, and one tool call may change thousands
// of files (a git checkout, a codemod) under a limit of a few thousand
// descriptors. A larger batch is written a chunk at a time, each settled
// before the next, after its records are stored.
const maxHeldWrites = 128

// Batch locks the files of changes and starts preparing their writes in
// the background. Call Place or Discard once. early (may be nil) is a
// write started before: it serves if changes is that one change, and is
// dropped otherwise.
func (w *Writer) Batch(sessionID string, changes []tracker.Change, early Early) *Batch {
	b := &Batch{w: w, sessionID: sessionID, changes: changes, preps: make([]*sync.Prepared, len(changes)), done: make(chan struct{})}
	if early != nil {
		if len(changes) == 1 && changes[0].Rel == early.Rel() {
			// Whether it wrote the right content is known once it is
			// done: resolve decides, after the records are stored.
			b.early = early
			return b
		}
		// It holds its file's lock: drop it before taking locks in order.
		early.Drop()
	}
	b.start()
	return b
}

// OnProgress makes Place report the files it placed to fn, as it goes.
func (b *Batch) OnProgress(fn func(n int)) { b.progress = fn }

func (b *Batch) report(n int) {
	if b.progress != nil {
		b.progress(n)
	}
}

// start locks the files of the changes and prepares their writes in the
// background (done closes when they are ready).
func (b *Batch) start() {
	rels := make([]string, len(b.changes))
	for i, ch := range b.changes {
		rels[i] = ch.Rel
	}
	b.unlock = b.w.LockAll(rels)
	b.order = PathOrder(len(b.changes), func(i int) string { return b.changes[i].Rel },
		func(i int) bool { return !b.changes[i].After.Present })
	if b.order != nil || len(b.changes) > maxHeldWrites {
		b.chunked = b.order == nil
		b.errs = make([]error, len(b.changes))
		if !b.chunked || !sync.CanSyncFS {
			close(b.done)
			return
		}
		// The new files among them are staged while the records are
		// stored, a directory at a time, and placed once they are.
		for i, ch := range b.changes {
			if !ch.Before.Present && ch.After.Present && !ch.After.IsLink() {
				b.news = append(b.news, i)
			}
		}
		go func() {
			defer close(b.done)
			b.staged, b.stageErrs = sync.StageAll(b.w.root, len(b.news), func(k int) sync.Creation {
				ch := &b.changes[b.news[k]]
				return sync.Creation{Rel: ch.Rel, V: ch.After}
			})
		}()
		return
	}
	go func() {
		defer close(b.done)
		b.errs = Parallel(len(b.changes), func(i int) error {
			var err error
			ch := b.changes[i]
			b.preps[i], err = b.w.PrepareLocked(ch.Rel, ch.Before, ch.After)
			return err
		})
	}()
}

// resolve waits for the writes: an early write is taken as the change's
// write if it wrote what the change is; else it is dropped and the write
// prepared now.
func (b *Batch) resolve() {
	if early := b.early; early != nil {
		b.early = nil
		if prep, unlock, ok := early.Take(b.changes[0]); ok {
			b.preps[0], b.errs, b.unlock = prep, []error{nil}, unlock
			b.w.EarlyPlaced.Add(1)
			return
		}
		early.Drop()
		b.start()
	}
	<-b.done
}

// Discard drops every prepared write (the records were not stored).
func (b *Batch) Discard() {
	if b.early != nil {
		b.early.Drop()
		b.early = nil
		return
	}
	<-b.done
	for _, p := range b.preps {
		if p != nil {
			p.Discard()
		}
	}
	if b.staged != nil {
		b.staged.Discard()
	}
	b.unlock()
}

// Place puts the prepared writes in place and returns each change's sync
// state and error (Writer.State). The syncs to the disk (each file's
// content, then its directory: sync.Prepared.Settle) run in the
// background, after the caller's answer: a killed server leaves the old
// file or the new one either way, never a torn one.
func (b *Batch) Place() ([]string, []error) {
	b.resolve()
	states := make([]string, len(b.preps))
	// place places write i; unsynced leaves its syncs to the caller
	// (sync.PlaceUnsynced).
	place := func(i int, unsynced bool) error {
		out, err := sync.Conflict, b.errs[i]
		switch {
		case err == nil && unsynced:
			out, _, err = b.preps[i].PlaceUnsynced()
		case err == nil:
			out, _, err = b.preps[i].Place()
		}
		states[i], err = b.w.State(b.sessionID, b.changes[i].Rel, out, err)
		return err
	}
	prepare := func(i int) {
		ch := b.changes[i]
		if b.preps[i], b.errs[i] = b.w.PrepareLocked(ch.Rel, ch.Before, ch.After); b.errs[i] != nil {
			b.preps[i] = nil
		}
	}
	var errs []error
	if b.chunked {
		// Many files: each chunk is placed unsynced and let go, and
		// all of them made durable by one sync of the file system (two
		// fsyncs a file cost more than git's whole add of them); file
		// by file where the system cannot.
		errs = make([]error, len(b.preps))
		rest := b.placeNew(states, errs)
		for lo := 0; lo < len(rest); lo += maxHeldWrites {
			chunk := rest[lo:min(lo+maxHeldWrites, len(rest))]
			Parallel(len(chunk), func(k int) error { prepare(chunk[k]); return nil })
			for _, i := range chunk {
				errs[i] = place(i, true)
			}
			if sync.CanSyncFS {
				for _, i := range chunk {
					b.preps[i].Release()
					b.preps[i] = nil
				}
			} else {
				Parallel(len(chunk), func(k int) error { b.settle(chunk[k]); return nil })
			}
			b.report(len(chunk))
		}
		if sync.CanSyncFS {
			b.syncFS()
		}
	} else {
		many := len(b.preps) > maxHeldWrites
		errs = RunInOrder(b.order, len(b.preps), func(i int) error {
			if b.order != nil {
				// In order, each write is prepared when its turn comes.
				prepare(i)
			}
			err := place(i, false)
			if many {
				b.settle(i)
			}
			return err
		})
	}
	b.unlock()
	b.w.background(func() {
		for i, p := range b.preps {
			if p == nil {
				continue
			}
			if err := p.Settle(); err != nil {
				b.w.log.Error("sync of a workspace file to the disk", "session", b.sessionID, "file", b.changes[i].Rel, "err", err)
			}
		}
	})
	return states, errs
}

// placeNew places the new files staged while the records were stored
// (sync.Staged.Place) where their paths still hold nothing, sets their
// states and errors, and returns the other changes, to be merged file by
// file: those the staging left out, and a new file whose path the user
// took meanwhile (merged with theirs, as any change is). Unsynced: the
// caller syncs the file system.
func (b *Batch) placeNew(states []string, errs []error) (rest []int) {
	done := make([]bool, len(b.changes))
	placed := 0
	if b.staged != nil {
		taken, perrs := b.staged.Place()
		for k, i := range b.news {
			err := b.stageErrs[k]
			if err == nil {
				err = perrs[k]
			}
			switch {
			case err != nil:
				states[i], errs[i] = b.w.State(b.sessionID, b.changes[i].Rel, sync.Conflict, err)
			case taken[k]:
				states[i], errs[i] = b.w.State(b.sessionID, b.changes[i].Rel, sync.Written, nil)
			default:
				continue
			}
			done[i] = true
			placed++
		}
		b.report(placed)
	}
	for i := range b.changes {
		if !done[i] {
			rest = append(rest, i)
		}
	}
	return rest
}

// syncFS makes the workspace writes placed unsynced durable.
func (b *Batch) syncFS() {
	if err := sync.SyncFS(b.w.root); err != nil {
		b.w.log.Error("sync of workspace files to the disk", "session", b.sessionID, "err", err)
	}
}

// settle syncs write i to the disk now and lets its descriptors go; the
// settling after the answer then skips it.
func (b *Batch) settle(i int) {
	p := b.preps[i]
	if p == nil {
		return
	}
	b.preps[i] = nil
	if err := p.Settle(); err != nil {
		b.w.log.Error("sync of a workspace file to the disk", "session", b.sessionID, "file", b.changes[i].Rel, "err", err)
	}
}
