package engine

import (
	"context"
	"sort"
	stdsync "sync"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/tracker"
)

// wsWriter is the one writer of the user's workspace (the repository's
// working tree, e.Repo.Root): every file prsm creates, changes, removes,
// makes a link or changes the mode of there is written by its methods, and
// nothing else in engine writes there. Its guards are sync's: the path
// is joined by safepath (no escape from the root, no symlinked directory
// on the way), the new content is staged in a temporary file beside the
// old one and renamed over it, and a file the user changed meanwhile is
// merged with, or left as it is (Conflict). The callers hold the file's
// lock (fileLock).
type wsWriter struct{ root string }

// ws is the engine's workspace writer.
func (e *Engine) ws() wsWriter { return wsWriter{root: e.Repo.Root} }

// prepare merges base -> theirs into the workspace file rel and stages
// the result, not placed yet (sync.Prepare).
func (w wsWriter) prepare(rel string, base, theirs sync.Version) (*sync.Prepared, error) {
	return sync.Prepare(w.root, rel, base, theirs)
}

// apply merges base -> theirs into the workspace file rel, places it and
// syncs it to the disk (sync.Apply).
func (w wsWriter) apply(rel string, base, theirs sync.Version) (sync.Outcome, sync.Version, error) {
	return sync.Apply(w.root, rel, base, theirs)
}

// applyUnsynced is apply with the sync to the disk left to the caller
// (sync.ApplyUnsynced: the Prepared's Settle).
func (w wsWriter) applyUnsynced(rel string, base, theirs sync.Version) (sync.Outcome, sync.Version, *sync.Prepared, error) {
	return sync.ApplyUnsynced(w.root, rel, base, theirs)
}

// cleanTemp removes the temporary files of workspace writes a crash cut
// off (sync.CleanTemp: its own names only).
func (w wsWriter) cleanTemp() (int, error) {
	return sync.CleanTemp(w.root)
}

// workspaceWrites are the workspace writes of a tool call's records in
// auto mode, prepared (merged and written to temporary files) while the
// records are stored, and placed once they are. The workspace never shows
// a change whose record is not stored. The files stay locked from the
// read that prepares them to their placing, so no other session's write
// comes in between.
type workspaceWrites struct {
	e       *Engine
	s       *prsm.Session
	changes []tracker.Change
	preps   []*sync.Prepared
	errs    []error
	done    chan struct{}
	unlock  func()
	// early, when set, is the one change's write, started before the
	// change was known; settled by resolve.
	early *earlyWrite
	// order, when set, is the order in which the writes must go, one
	// after the other (pathOrder: a path lies inside another); each is
	// prepared when its turn comes, in place.
	order []int
	// chunked: more writes than maxHeldWrites and no order among them;
	// place prepares, places and settles them a chunk at a time.
	chunked bool
	// job, when set, counts the chunks placed (a large record's).
	job *job
	// news are the changes that create files, staged (chunked, where the
	// file system is synced whole: sync.CanSyncFS) while the records are
	// stored, with what failed by their index in news.
	news      []int
	staged    *sync.Staged
	stageErrs []error
}

// maxHeldWrites bounds the prepared writes held at once: each holds up to
// three file descriptors (its directory, its staged file, the file it
// replaces) until it is settled, and one tool call may change thousands
// of files (a git checkout, a codemod) under a limit of a few thousand
// descriptors. A larger batch is written a chunk at a time, each settled
// before the next, after its records are stored.
const maxHeldWrites = 128

// prepareWrites locks the files of changes and starts preparing their
// writes in the background. Call place or discard once. early (may be
// nil) is a write started before: it serves if changes is that one
// change, and is dropped otherwise.
func (e *Engine) prepareWrites(s *prsm.Session, changes []tracker.Change, early *earlyWrite) *workspaceWrites {
	w := &workspaceWrites{e: e, s: s, changes: changes, preps: make([]*sync.Prepared, len(changes)), done: make(chan struct{})}
	if early != nil {
		if len(changes) == 1 && changes[0].Rel == early.rel {
			// Whether it wrote the right content is known once it is
			// done: resolve decides, after the records are stored.
			w.early = early
			return w
		}
		// It holds its file's lock: drop it before taking locks in order.
		early.drop()
	}
	w.start()
	return w
}

// start locks the files of the changes and prepares their writes in the
// background (done closes when they are ready).
func (w *workspaceWrites) start() {
	rels := make([]string, len(w.changes))
	for i, ch := range w.changes {
		rels[i] = ch.Rel
	}
	w.unlock = w.e.fileLocks(rels)
	w.order = pathOrder(len(w.changes), func(i int) string { return w.changes[i].Rel },
		func(i int) bool { return !w.changes[i].After.Present })
	if w.order != nil || len(w.changes) > maxHeldWrites {
		w.chunked = w.order == nil
		w.errs = make([]error, len(w.changes))
		if !w.chunked || !sync.CanSyncFS {
			close(w.done)
			return
		}
		// The new files among them are staged while the records are
		// stored, a directory at a time, and placed once they are.
		var items []sync.Creation
		for i, ch := range w.changes {
			if !ch.Before.Present && ch.After.Present && !ch.After.IsLink() {
				w.news = append(w.news, i)
				items = append(items, sync.Creation{Rel: ch.Rel, V: ch.After})
			}
		}
		go func() {
			defer close(w.done)
			w.staged, w.stageErrs = sync.StageAll(w.e.Repo.Root, items)
		}()
		return
	}
	go func() {
		defer close(w.done)
		w.errs = parallel(len(w.changes), func(i int) error {
			var err error
			ch := w.changes[i]
			w.preps[i], err = w.e.ws().prepare(ch.Rel, ch.Before, ch.After)
			return err
		})
	}()
}

// resolve waits for the writes: an early write is taken as the change's
// write if it wrote what the change is; else it is dropped and the write
// prepared now.
func (w *workspaceWrites) resolve() {
	if early := w.early; early != nil {
		w.early = nil
		<-early.done
		if early.serves(w.changes[0]) {
			early.settled = true // the writes own its staged file and lock now
			w.preps[0], w.errs, w.unlock = early.prep, []error{nil}, early.unlock
			w.e.earlyPlaced.Add(1)
			return
		}
		early.drop()
		w.start()
	}
	<-w.done
}

// discard drops every prepared write (the records were not stored).
func (w *workspaceWrites) discard() {
	if w.early != nil {
		w.early.drop()
		w.early = nil
		return
	}
	<-w.done
	for _, p := range w.preps {
		if p != nil {
			p.Discard()
		}
	}
	if w.staged != nil {
		w.staged.Discard()
	}
	w.unlock()
}

// place puts the prepared writes in place and returns each change's sync
// state and error, as syncToWorkspace does. The syncs to the disk (each
// file's content, then its directory: sync.Prepared.Settle) run in
// the background, after the caller's answer: a killed server leaves the
// old file or the new one either way, never a torn one.
func (w *workspaceWrites) place() ([]string, []error) {
	w.resolve()
	states := make([]string, len(w.preps))
	// place places write i; unsynced leaves its syncs to the caller
	// (sync.PlaceUnsynced).
	place := func(i int, unsynced bool) error {
		out, err := sync.Conflict, w.errs[i]
		switch {
		case err == nil && unsynced:
			out, _, err = w.preps[i].PlaceUnsynced()
		case err == nil:
			out, _, err = w.preps[i].Place()
		}
		states[i], err = w.e.syncState(w.s, w.changes[i].Rel, out, err)
		return err
	}
	prepare := func(i int) {
		ch := w.changes[i]
		if w.preps[i], w.errs[i] = w.e.ws().prepare(ch.Rel, ch.Before, ch.After); w.errs[i] != nil {
			w.preps[i] = nil
		}
	}
	var errs []error
	if w.chunked {
		// Many files: each chunk is placed unsynced and let go, and
		// every bulkSync of them made durable by one sync of the file
		// system (two fsyncs a file cost more than git's whole add of
		// them); file by file where the system cannot.
		errs = make([]error, len(w.preps))
		rest := w.placeNew(states, errs)
		for lo := 0; lo < len(rest); lo += maxHeldWrites {
			chunk := rest[lo:min(lo+maxHeldWrites, len(rest))]
			parallel(len(chunk), func(k int) error { prepare(chunk[k]); return nil })
			for _, i := range chunk {
				errs[i] = place(i, true)
			}
			if sync.CanSyncFS {
				for _, i := range chunk {
					w.preps[i].Release()
					w.preps[i] = nil
				}
			} else {
				parallel(len(chunk), func(k int) error { w.settle(chunk[k]); return nil })
			}
			w.e.progress(w.job, len(chunk), 0)
		}
		if sync.CanSyncFS {
			w.syncFS()
		}
	} else {
		many := len(w.preps) > maxHeldWrites
		errs = runInOrder(w.order, len(w.preps), func(i int) error {
			if w.order != nil {
				// In order, each write is prepared when its turn comes.
				prepare(i)
			}
			err := place(i, false)
			if many {
				w.settle(i)
			}
			return err
		})
	}
	w.unlock()
	w.e.background(func() {
		for i, p := range w.preps {
			if p == nil {
				continue
			}
			if err := p.Settle(); err != nil {
				w.e.Log.Error("sync of a workspace file to the disk", "session", w.s.ID, "file", w.changes[i].Rel, "err", err)
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
func (w *workspaceWrites) placeNew(states []string, errs []error) (rest []int) {
	done := make([]bool, len(w.changes))
	placed := 0
	if w.staged != nil {
		taken, perrs := w.staged.Place()
		for k, i := range w.news {
			err := w.stageErrs[k]
			if err == nil {
				err = perrs[k]
			}
			switch {
			case err != nil:
				states[i], errs[i] = w.e.syncState(w.s, w.changes[i].Rel, sync.Conflict, err)
			case taken[k]:
				states[i], errs[i] = w.e.syncState(w.s, w.changes[i].Rel, sync.Written, nil)
			default:
				continue
			}
			done[i] = true
			placed++
		}
		w.e.progress(w.job, placed, 0)
	}
	for i := range w.changes {
		if !done[i] {
			rest = append(rest, i)
		}
	}
	return rest
}

// syncFS makes the workspace writes placed unsynced durable.
func (w *workspaceWrites) syncFS() {
	if err := sync.SyncFS(w.e.Repo.Root); err != nil {
		w.e.Log.Error("sync of workspace files to the disk", "session", w.s.ID, "err", err)
	}
}

// settle syncs write i to the disk now and lets its descriptors go; the
// settling after the answer then skips it.
func (w *workspaceWrites) settle(i int) {
	p := w.preps[i]
	if p == nil {
		return
	}
	w.preps[i] = nil
	if err := p.Settle(); err != nil {
		w.e.Log.Error("sync of a workspace file to the disk", "session", w.s.ID, "file", w.changes[i].Rel, "err", err)
	}
}

// fileLocks locks the workspace files rels (in path order, so that two
// callers never wait for each other) and returns the unlock of them all.
func (e *Engine) fileLocks(rels []string) func() {
	rels = append([]string(nil), rels...)
	sort.Strings(rels)
	var unlocks []func()
	for i, rel := range rels {
		if i > 0 && rel == rels[i-1] {
			continue
		}
		unlocks = append(unlocks, e.fileLock(rel))
	}
	return func() {
		for _, u := range unlocks {
			u()
		}
	}
}

// fileLock serializes writes to one workspace file across sessions.
func (e *Engine) fileLock(rel string) func() {
	e.filesMu.Lock()
	mu, ok := e.files[rel]
	if !ok {
		mu = &stdsync.Mutex{}
		e.files[rel] = mu
	}
	e.filesMu.Unlock()
	mu.Lock()
	return mu.Unlock
}

// syncToWorkspace brings base -> theirs into the workspace file, merging
// with the user's edits; it returns the record's sync state.
func (e *Engine) syncToWorkspace(ctx context.Context, s *prsm.Session, rel string, base, theirs sync.Version) (string, error) {
	unlock := e.fileLock(rel)
	defer unlock()
	out, _, err := e.ws().apply(rel, base, theirs)
	return e.syncState(s, rel, out, err)
}

// placeInWorkspace is syncToWorkspace with the file's syncs to the disk
// left to syncs (sync.Prepared.Settle), for a caller that places many
// files and syncs them together.
func (e *Engine) placeInWorkspace(s *prsm.Session, rel string, base, theirs sync.Version, syncs *diskSyncs) (string, error) {
	unlock := e.fileLock(rel)
	defer unlock()
	out, _, w, err := e.ws().applyUnsynced(rel, base, theirs)
	if w != nil {
		syncs.add(w.Settle)
	}
	return e.syncState(s, rel, out, err)
}

// syncState is the sync state that a workspace write of rel, with outcome
// out and error err, gives its record.
func (e *Engine) syncState(s *prsm.Session, rel string, out sync.Outcome, err error) (string, error) {
	if err != nil {
		return prsm.SyncConflict, err
	}
	if out == sync.Conflict {
		e.Log.Warn("conflict: workspace file left as it is", "session", s.ID, "file", rel)
		return prsm.SyncConflict, nil
	}
	return prsm.SyncSynced, nil
}
