// Package workspace is the one writer of the user's workspace (the
// repository's working tree): every file prsm creates, changes, removes,
// makes a link or changes the mode of there is written by a Writer, and
// no other package of prsm's engine writes there. Its guards are sync's:
// the path is joined by safepath (no escape from the root, no symlinked
// directory on the way), the new content is staged in a temporary file
// beside the old one and renamed over it, and a file the user changed
// meanwhile is merged with, or left as it is (Conflict).
//
// A Writer holds the per-file locks that serialize the writes of one file
// across sessions (Lock, LockAll; locks.go owns them); its writes take
// them, or the caller holds them (the Locked methods). It also reads a
// workspace file (Read), orders operations on nested paths (PathOrder)
// and runs independent file writes together (Parallel, DiskSyncs).
package workspace

import (
	"log/slog"
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

	// locks serialize the writes of one file across sessions.
	locks *fileLocks

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
	return &Writer{root: root, log: log, background: background, locks: newFileLocks()}
}

// Root is the workspace's root directory.
func (w *Writer) Root() string { return w.root }

// Lock serializes writes to one workspace file across sessions; it
// returns the unlock.
func (w *Writer) Lock(rel string) func() { return w.locks.lock(rel) }

// LockAll locks the workspace files rels and returns the unlock of them
// all (fileLocks.lockAll).
func (w *Writer) LockAll(rels []string) func() { return w.locks.lockAll(rels) }

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
