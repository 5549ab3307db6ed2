package sync

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/prsm-dev/prsm/internal/safepath"
)

// Prepared is a change to a workspace file that Prepare decided and
// staged, and that nobody sees yet: for a file, the merged content is
// written to a temporary file beside it. Place makes it visible with a
// rename; Discard drops it. In between, the caller stores what the change
// is (its record), so the workspace never shows a change prsm has no
// record of. Settle, which the caller runs after its answer, makes the
// placed file durable: it syncs the file's content, then the directory.
// Apply is Prepare, Place and Settle at once.
//
// The content is synced after the rename, not before it as WriteFileAtomic
// does: the sync waits for the disk (the largest step of a tool call's
// write, docs/performance.md) and was the last thing a
// tool call's answer waited for. A killed process loses nothing either
// way: the written content is the kernel's, and the rename shows all of
// it or none. Only a power loss in the moment between Place and Settle
// could find the rename on disk before the content, on a file system that
// does not order the two itself (ext4's default auto_da_alloc writes such
// a file's data before the rename's metadata); the record, committed
// before Place, has the content.
//
// A Prepared is used by one goroutine, and the caller keeps other prsm
// writers away from the file until it is placed or discarded.
type Prepared struct {
	// outcome is what Place will do: Written, or nothing (Unchanged,
	// Conflict).
	outcome Outcome
	// result is the file after Place: the merge for Written, the file as
	// it is otherwise (Version{} when it is not a file).
	result Version

	root, path   string
	base, theirs Version
	ours         Version
	seen         fs.FileInfo // the file's lstat when read; nil: absent
	d            *os.Root    // the open parent, while a file is staged or placed
	tmp          string      // the staged file in d; "" once placed or dropped
	staged       *os.File    // the staged file, open and unsynced until Settle
	placed       bool
	// replaced is the file that Place replaces, held open from its read
	// to Settle. The rename then only unlinks a name: freeing the old
	// inode and its blocks, the most of what the rename cost, happens
	// when Settle closes it, after the caller's answer.
	replaced *os.File
}

// Prepare decides how base -> theirs comes into root/rel (a 3-way Merge
// with the file as it is now, as Apply does) and stages the result. The
// error is that of reading the file or of staging the result; nothing is
// left behind then.
func Prepare(root, rel string, base, theirs Version) (*Prepared, error) {
	p, err := safepath.Join(root, rel)
	if err != nil {
		return nil, err
	}
	w := &Prepared{root: root, path: p, base: base, theirs: theirs}
	if err := w.prepare(); err != nil {
		w.Discard()
		return nil, err
	}
	return w, nil
}

func (w *Prepared) prepare() error {
	w.ours, w.seen = Absent, nil
	d, err := openDirIn(w.root, filepath.Dir(w.path), false)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscallENOTDIR):
		d = nil // no parent yet: Place creates it with the file
	case err != nil:
		return err
	default:
		var like []byte
		if w.base.Present && !w.base.IsLink() {
			like = w.base.Content
		}
		w.ours, w.seen, w.replaced, err = readOpenLike(d, w.path, like)
		if errors.Is(err, ErrNotFile) {
			d.Close()
			w.outcome, w.result = Conflict, Version{}
			return nil
		}
		if err != nil {
			d.Close()
			return err
		}
	}
	result, ok := Merge(w.base, w.ours, w.theirs)
	switch {
	case !ok:
		w.outcome, w.result = Conflict, w.ours
	case Same(result, w.ours) && (!result.Present || result.Mode == w.ours.Mode):
		w.outcome, w.result = Unchanged, w.ours
	default:
		w.outcome, w.result = Written, result
	}
	if w.outcome != Written || d == nil || !result.Present || result.IsLink() {
		// Nothing to stage: a removal, a link and a file in a new
		// directory are written whole by Place.
		if d != nil {
			d.Close()
		}
		w.release()
		return nil
	}
	tmp, staged, err := stageFile(d, w.path, result.Content, os.FileMode(result.Mode&0o777))
	if err != nil {
		d.Close()
		w.release()
		return err
	}
	w.d, w.tmp, w.staged = d, tmp, staged
	return nil
}

// changed reports whether the file is no longer the one prepare read.
func (w *Prepared) changed() bool {
	if w.d == nil {
		return false
	}
	fi, err := w.d.Lstat(filepath.Base(w.path))
	if err != nil || w.seen == nil {
		return !(errors.Is(err, fs.ErrNotExist) && w.seen == nil)
	}
	return !os.SameFile(fi, w.seen) || fi.Size() != w.seen.Size() || !fi.ModTime().Equal(w.seen.ModTime()) ||
		fi.Mode() != w.seen.Mode()
}

// placeTries bounds how often Place merges anew a file that keeps
// changing under it; then it gives up with a conflict, writing nothing.
const placeTries = 3

// Place makes the prepared change visible and returns what it did and the
// file after it. If the file changed since it was read (the user saved in
// between), the merge is done again with the new content first, so an
// edit is never overwritten; the outcome may then differ from the one Prepare decided.
// On an error nothing was written, and the outcome is Conflict.
func (w *Prepared) Place() (Outcome, Version, error) {
	if w.outcome != Written {
		return w.outcome, w.result, nil
	}
	for try := 0; w.changed(); try++ {
		w.drop()
		if try == placeTries {
			w.outcome, w.result = Conflict, w.ours
			return Conflict, w.ours, nil
		}
		if err := w.prepare(); err != nil {
			return Conflict, w.ours, err
		}
		if w.outcome != Written {
			return w.outcome, w.result, nil
		}
	}
	if w.tmp == "" {
		if err := writeVersion(w.root, w.path, w.result); err != nil {
			return Conflict, w.ours, err
		}
		w.placed = true
		return Written, w.result, nil
	}
	tmp := w.tmp
	w.tmp = ""
	if err := placeStaged(w.d, tmp, w.path); err != nil {
		return Conflict, w.ours, err
	}
	w.placed = true
	return Written, w.result, nil
}

// Settle makes a placed file durable (it syncs the file's content, then
// the directory's rename) and releases the Prepared. Call it once, after
// Place. A nil Prepared (WriteUnsynced's for a removal or a link) has
// nothing to settle. An error means the new content is in place but perhaps not yet
// on the disk.
func (w *Prepared) Settle() error {
	if w == nil || w.d == nil {
		return nil
	}
	defer w.drop()
	if !w.placed {
		return nil
	}
	if w.staged != nil { // drop closes it
		if err := syncStaged(w.staged, w.path); err != nil {
			return fmt.Errorf("replaced %s: %w", w.path, err)
		}
	}
	if err := syncRoot(w.d); err != nil {
		return fmt.Errorf("replaced %s: %w", w.path, err)
	}
	return nil
}

// release closes the file Place replaces, if it is held.
func (w *Prepared) release() {
	if w.replaced != nil {
		w.replaced.Close()
		w.replaced = nil
	}
}

// Discard drops a change that is not placed (its staged file is removed)
// and releases the Prepared. It may follow Place and Settle.
func (w *Prepared) Discard() { w.drop() }

func (w *Prepared) drop() {
	w.release()
	if w.staged != nil {
		w.staged.Close()
		w.staged = nil
	}
	if w.d == nil {
		return
	}
	if w.tmp != "" {
		w.d.Remove(w.tmp)
		w.tmp = ""
	}
	w.d.Close()
	w.d = nil
}

// WriteUnsynced is Write for a caller that places many files and syncs
// them later, all at once or after its answer: a regular file's content
// is staged and renamed into place, and its syncs to the disk (the
// content, then the directory's rename) are left to the returned
// Prepared's Settle, with the same guarantees as a placed Prepare. A
// removal or a symlink is written and synced at once, and the Prepared is
// nil. On an error nothing was written.
func WriteUnsynced(root, rel string, v Version) (*Prepared, error) {
	p, err := safepath.Join(root, rel)
	if err != nil {
		return nil, err
	}
	if !v.Present || v.IsLink() {
		return nil, writeVersion(root, p, v)
	}
	d, err := openDirIn(root, filepath.Dir(p), true)
	if err != nil {
		return nil, fmt.Errorf("create parent of %s: %w", p, err)
	}
	tmp, f, err := stageFile(d, p, v.Content, os.FileMode(v.Mode&0o777))
	if err != nil {
		d.Close()
		return nil, err
	}
	if err := placeStaged(d, tmp, p); err != nil {
		f.Close()
		d.Close()
		return nil, err
	}
	return &Prepared{outcome: Written, result: v, root: root, path: p, d: d, staged: f, placed: true}, nil
}

// ApplyUnsynced is Apply without the syncs to the disk: the change is in
// place (or found unchanged, or in conflict) when it returns, and the
// returned Prepared's Settle, which the caller must run, makes it durable.
// On an error nothing was written and there is nothing to settle.
func ApplyUnsynced(root, rel string, base, theirs Version) (Outcome, Version, *Prepared, error) {
	w, err := Prepare(root, rel, base, theirs)
	if err != nil {
		return Conflict, Version{}, nil, err
	}
	out, v, err := w.Place()
	if err != nil {
		w.Discard()
		return out, v, nil, err
	}
	return out, v, w, nil
}
