// Package workspace is the one writer of the user's workspace (the
// repository's working tree): every file prsm creates, changes, removes,
// makes a link or changes the mode of there is written by a Writer, and
// no other package of prsm's engine writes there. Its guards are sync's:
// the path is joined by safepath (no escape from the root, no symlinked
// directory on the way), the new content is staged in a temporary file
// beside the old one and renamed over it, and a file the user changed
// meanwhile is merged with, or left as it is (Conflict).
//
// A Writer owns the per-file locks that serialize the writes of one file
// across sessions (Lock, LockAll); its writes take them, or the caller
// holds them (the Locked methods). It also reads a workspace file (Read),
// orders operations on nested paths (PathOrder) and runs independent
// file writes together (Parallel, DiskSyncs).
package workspace

import (
	"log/slog"
	"slices"
	stdsync "sync"
	"sync/atomic"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/sync"
)

// Writer writes the workspace at its root.
type Writer struct {
	root string
	log  *slog.Logger
	// background runs work after the caller's answer (the syncs to the
	// disk of a batch's placed files); the engine waits for it on Close.
	background func(func())

	// filesMu guards files, filesHigh and claims; freed is signalled
	// when a lock or a claim goes.
	filesMu stdsync.Mutex
	freed   *stdsync.Cond
	// files holds the locks held or waited for, by path; a lock nobody
	// holds goes.
	files map[string]*fileLock
	// filesHigh is the most locks files held since it was made: a map
	// keeps its size after deletes, so an empty one that grew large is
	// made anew.
	filesHigh int
	// claims are the held locks of many files at once (LockAll of more
	// than claimFrom), each its sorted paths: a lock each would be a map
	// entry and a mutex per file, 12 MB for an npm install's 200k.
	claims []*claim
	// claimsWaiting counts the claims waiting for files to be let go.
	claimsWaiting int

	// EarlyPlaced counts early writes that served as their change's
	// write (Early).
	EarlyPlaced atomic.Int64
}

// New is the writer of the workspace at root. background runs work after
// the caller's answer (nil: at once).
func New(root string, log *slog.Logger, background func(func())) *Writer {
	if background == nil {
		background = func(fn func()) { fn() }
	}
	w := &Writer{root: root, log: log, background: background, files: map[string]*fileLock{}}
	w.freed = stdsync.NewCond(&w.filesMu)
	return w
}

// Root is the workspace's root directory.
func (w *Writer) Root() string { return w.root }

// fileLock is one workspace file's lock, with how many hold or wait for
// it.
type fileLock struct {
	mu   stdsync.Mutex
	refs int
}

// claim is a LockAll of many files: its paths, sorted, each once.
type claim struct{ rels []string }

// covers reports whether c holds rel.
func (c *claim) covers(rel string) bool {
	_, ok := slices.BinarySearch(c.rels, rel)
	return ok
}

// claimed reports whether a held claim holds rel. The caller holds
// filesMu.
func (w *Writer) claimed(rel string) bool {
	for _, c := range w.claims {
		if c.covers(rel) {
			return true
		}
	}
	return false
}

// lockFile takes rel's lock, made if nobody holds it, once no claim
// holds rel.
func (w *Writer) lockFile(rel string) *fileLock {
	w.filesMu.Lock()
	for w.claimed(rel) {
		w.freed.Wait()
	}
	l, ok := w.files[rel]
	if !ok {
		l = &fileLock{}
		w.files[rel] = l
		w.filesHigh = max(w.filesHigh, len(w.files))
	}
	l.refs++
	w.filesMu.Unlock()
	l.mu.Lock()
	return l
}

// unlockFile lets rel's lock l go; the last one drops it.
func (w *Writer) unlockFile(rel string, l *fileLock) {
	l.mu.Unlock()
	w.filesMu.Lock()
	defer w.filesMu.Unlock()
	if l.refs--; l.refs > 0 {
		return
	}
	delete(w.files, rel)
	if len(w.files) == 0 && w.filesHigh > 256 {
		w.files, w.filesHigh = map[string]*fileLock{}, 0
	}
	if len(w.claims) > 0 || w.claimsWaiting > 0 {
		w.freed.Broadcast()
	}
}

// Lock serializes writes to one workspace file across sessions; it
// returns the unlock.
func (w *Writer) Lock(rel string) func() {
	l := w.lockFile(rel)
	return func() { w.unlockFile(rel, l) }
}

// claimFrom is the size from which LockAll takes its files by one claim.
const claimFrom = 1024

// LockAll locks the workspace files rels and returns the unlock of them
// all. A few are locked one by one in path order, so that two callers
// never wait for each other; many are claimed at once, once no lock and
// no claim holds any of them (a claim waits holding nothing).
func (w *Writer) LockAll(rels []string) func() {
	rels = slices.Clone(rels)
	slices.Sort(rels)
	rels = slices.Compact(rels)
	if len(rels) > claimFrom {
		return w.claim(slices.Clip(rels))
	}
	locks := make([]*fileLock, len(rels))
	for i, rel := range rels {
		locks[i] = w.lockFile(rel)
	}
	return func() {
		for i, l := range locks {
			w.unlockFile(rels[i], l)
		}
	}
}

// claim holds the files rels (sorted, each once) at once, and returns
// the unlock.
func (w *Writer) claim(rels []string) func() {
	c := &claim{rels: rels}
	w.filesMu.Lock()
	w.claimsWaiting++
	for w.overlaps(c) {
		w.freed.Wait()
	}
	w.claimsWaiting--
	w.claims = append(w.claims, c)
	w.filesMu.Unlock()
	return func() {
		w.filesMu.Lock()
		w.claims = slices.DeleteFunc(w.claims, func(o *claim) bool { return o == c })
		w.freed.Broadcast()
		w.filesMu.Unlock()
	}
}

// overlaps reports whether a file of c is locked or claimed now. The
// caller holds filesMu.
func (w *Writer) overlaps(c *claim) bool {
	for rel := range w.files {
		if c.covers(rel) {
			return true
		}
	}
	for _, o := range w.claims {
		a, b := c.rels, o.rels
		for len(a) > 0 && len(b) > 0 {
			switch {
			case a[0] == b[0]:
				return true
			case a[0] < b[0]:
				a = a[1:]
			default:
				b = b[1:]
			}
		}
	}
	return false
}

// PrepareLocked merges base -> theirs into the workspace file rel and
// stages the result, not placed yet (sync.Prepare). The caller holds the
// file's lock.
func (w *Writer) PrepareLocked(rel string, base, theirs sync.Version) (*sync.Prepared, error) {
	return sync.Prepare(w.root, rel, base, theirs)
}

// Apply merges base -> theirs into the workspace file rel under its lock,
// places it and syncs it to the disk (sync.Apply).
func (w *Writer) Apply(rel string, base, theirs sync.Version) (sync.Outcome, error) {
	unlock := w.Lock(rel)
	defer unlock()
	return w.ApplyLocked(rel, base, theirs)
}

// ApplyLocked is Apply with the file's lock held by the caller.
func (w *Writer) ApplyLocked(rel string, base, theirs sync.Version) (sync.Outcome, error) {
	out, _, err := sync.Apply(w.root, rel, base, theirs)
	return out, err
}

// RemoveAll takes the files of items out of the workspace under their
// locks, each where it still holds its Base, into bin (sync.RemoveAll).
func (w *Writer) RemoveAll(items []sync.Removal, bin *sync.Bin) ([]sync.Outcome, []error) {
	rels := make([]string, len(items))
	for i, it := range items {
		rels[i] = it.Rel
	}
	unlock := w.LockAll(rels)
	defer unlock()
	return sync.RemoveAll(w.root, items, bin)
}

// CleanTemp removes the temporary files of workspace writes a crash cut
// off (sync.CleanTemp: its own names only).
func (w *Writer) CleanTemp() (int, error) {
	return sync.CleanTemp(w.root)
}

// Sync brings base -> theirs into the workspace file rel, merging with
// the user's edits, and returns the record's sync state (State).
func (w *Writer) Sync(sessionID, rel string, base, theirs sync.Version) (string, error) {
	out, err := w.Apply(rel, base, theirs)
	return w.State(sessionID, rel, out, err)
}

// SyncLater is Sync with the file's syncs to the disk left to syncs
// (sync.Prepared.Settle), for a caller that places many files and syncs
// them together.
func (w *Writer) SyncLater(sessionID, rel string, base, theirs sync.Version, syncs *DiskSyncs) (string, error) {
	unlock := w.Lock(rel)
	defer unlock()
	out, _, p, err := sync.ApplyUnsynced(w.root, rel, base, theirs)
	if p != nil {
		syncs.Add(p.Settle)
	}
	return w.State(sessionID, rel, out, err)
}

// State is the sync state that a workspace write of rel, with outcome
// out and error err, gives its record.
func (w *Writer) State(sessionID, rel string, out sync.Outcome, err error) (string, error) {
	if err != nil {
		return prsm.SyncConflict, err
	}
	if out == sync.Conflict {
		w.log.Warn("conflict: workspace file left as it is", "session", sessionID, "file", rel)
		return prsm.SyncConflict, nil
	}
	return prsm.SyncSynced, nil
}
