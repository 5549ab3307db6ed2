package engine

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/safepath"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
)

// selectorRewind is what a selector rewind will do: the records it undoes
// (newest first). A rewind plans with the same struct the checkpoint's
// exact worktree targets (asCheckedOut), then works as rewind.go says.
type selectorRewind struct {
	plan    *api.Plan
	undo    []*prsm.Record
	targets map[string]sync.Version // a rewind's exact worktree targets
	// from is, for a rewind, what each target path holds now as far as
	// prsm knows.
	from map[string]sync.Version
}

// delta is one record's change of a file.
type delta struct{ before, after sync.Version }

// deltas are the changes of recs, in their order.
func (rn *rewinder) deltas(ctx context.Context, recs []*prsm.Record) ([]delta, error) {
	ds := make([]delta, len(recs))
	for i, r := range recs {
		b, a, err := rn.rec.versions(ctx, r)
		if err != nil {
			return nil, err
		}
		ds[i] = delta{b, a}
	}
	return ds, nil
}

// sortedKeys are the keys of m, sorted.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// selectorPayload is a selector rewind's intent (SPEC rule 6):
// everything needed to finish it after a crash, decided before its first
// write. The worktree side is exact targets, so writing them again is
// harmless; the workspace side is the records to undo, and those already
// marked rejected are done. (A rewind has its own, rewindPayload. Intents
// of older versions may carry fields of rewinds that made records of
// their own; they are finished record by record.)
type selectorPayload struct {
	Safety   string                     `json:"safety"`   // the safety checkpoint taken first
	Undo     []string                   `json:"undo"`     // records it undoes, newest first
	Worktree map[string]store.FileState `json:"worktree"` // the exact target of every worktree path it writes
	Before   map[string]store.FileState `json:"before"`   // what those paths held before (as prsm knew them)
	// Unsynced are the undone records that had not reached the workspace
	// (review mode, a failed sync), with the status each had: the
	// workspace takes none of their deltas.
	Unsynced map[string]string `json:"unsynced,omitempty"`

	session string // the session's id, not stored
}

// stateVersion is the version a stored file state describes.
func (rn *rewinder) stateVersion(ctx context.Context, fs store.FileState) (sync.Version, error) {
	if !fs.Present {
		return sync.Absent, nil
	}
	b, err := store.GetBlob(ctx, rn.DB.Q(), fs.Hash)
	if err != nil {
		return sync.Version{}, err
	}
	return sync.Version{Present: true, Mode: fs.Mode, Content: b}, nil
}

func (rn *rewinder) stateVersions(ctx context.Context, m map[string]store.FileState) (map[string]sync.Version, error) {
	out := make(map[string]sync.Version, len(m))
	for rel, fs := range m {
		v, err := rn.stateVersion(ctx, fs)
		if err != nil {
			return nil, err
		}
		out[rel] = v
	}
	return out, nil
}

// fileAt reads rel under root (the worktree or the workspace) as a
// rewind compares it: a directory there holds no file of that name (its
// files are paths of their own, a link replaced by a directory in a later
// turn, say), so it reads as absent, and isDir says so. Anything else
// that is no file or link (a device) stays an error.
func fileAt(root, rel string) (v sync.Version, isDir bool, err error) {
	v, err = sync.ReadVersion(root, rel)
	if !errors.Is(err, sync.ErrNotFile) {
		return v, false, err
	}
	p, jerr := safepath.Join(root, rel)
	if jerr != nil {
		return v, false, err
	}
	if fi, lerr := os.Lstat(p); lerr == nil && fi.IsDir() {
		return sync.Absent, true, nil
	}
	return v, false, err
}

// emptiedBy reports whether every file and link below the directory rel
// of root is one that gone says the rewind removes: the directory then
// goes with them (sync.RemoveFile prunes it), and a file or link can take
// its place.
func emptiedBy(root, rel string, gone func(rel string) bool) bool {
	dir, err := safepath.Join(root, rel)
	if err != nil {
		return false
	}
	ok := true
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			ok = false
			return fs.SkipAll
		}
		if d.IsDir() {
			return nil
		}
		r, rerr := filepath.Rel(root, p)
		if rerr != nil || !gone(filepath.ToSlash(r)) {
			ok = false
			return fs.SkipAll
		}
		return nil
	})
	return ok
}
