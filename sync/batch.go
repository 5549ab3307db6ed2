package sync

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	stdsync "sync"

	"github.com/prsm-dev/prsm/internal/safepath"
)

// Removal is one file RemoveAll takes out, if it still holds Base: the
// undoing of the file's creation.
type Removal struct {
	Rel  string
	Base Version
}

// removeWorkers is how many directories RemoveAll works in at once: its
// work is system calls and waits for the disk, which overlap.
const removeWorkers = 8

// RemoveAll brings each removal's change, Base -> absent, into root as
// Apply would: the file goes if it holds Base (Written), is left as it
// is if it holds anything else (Conflict), and is Unchanged if it is
// gone already; a removal prunes the directories it leaves empty. It
// serves bulk operations (a reject of 200k created files): the files of
// one directory are removed through that directory, opened once (as
// openDirIn opens it: no symlink on the way), which is then synced to the
// disk once, after its last removal, instead of all of it once per file.
// The paths must not nest (a file and a directory of one name). It
// returns each removal's outcome and error, by index; a directory's
// failing sync is the error of each file removed in it (removed, but not
// yet durable).
func RemoveAll(root string, items []Removal) ([]Outcome, []error) {
	outs := make([]Outcome, len(items))
	errs := make([]error, len(items))
	root = filepath.Clean(root)
	byDir := map[string][]int{}
	var dirs []string
	paths := make([]string, len(items))
	for i, it := range items {
		p, err := safepath.Join(root, it.Rel)
		if err != nil {
			outs[i], errs[i] = Conflict, err
			continue
		}
		paths[i] = p
		d := filepath.Dir(p)
		if byDir[d] == nil {
			dirs = append(dirs, d)
		}
		byDir[d] = append(byDir[d], i)
	}
	sem := make(chan struct{}, removeWorkers)
	var wg stdsync.WaitGroup
	for _, dir := range dirs {
		wg.Add(1)
		sem <- struct{}{}
		go func(dir string, idx []int) {
			defer wg.Done()
			defer func() { <-sem }()
			removeIn(root, dir, idx, paths, items, outs, errs)
		}(dir, byDir[dir])
	}
	wg.Wait()
	return outs, errs
}

// removeIn is RemoveAll's work in one directory, for the items idx.
func removeIn(root, dir string, idx []int, paths []string, items []Removal, outs []Outcome, errs []error) {
	d, err := openDirIn(root, dir, false)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscallENOTDIR) {
		// No directory: every file of it is gone already (as Apply finds
		// a file absent whose parent is).
		for _, i := range idx {
			outs[i] = Unchanged
		}
		return
	}
	if err != nil {
		for _, i := range idx {
			outs[i], errs[i] = Conflict, err
		}
		return
	}
	var removed []int
	for _, i := range idx {
		outs[i], errs[i] = removeOne(d, paths[i], items[i].Base)
		if outs[i] == Written {
			removed = append(removed, i)
		}
	}
	if len(removed) > 0 {
		if err := syncRoot(d); err != nil {
			for _, i := range removed {
				errs[i] = fmt.Errorf("removed %s: %w", paths[i], err)
			}
		}
	}
	d.Close()
	if len(removed) > 0 {
		prune(root, dir)
	}
}

// removeOne removes path, in its open parent d, if it holds base (a 3-way
// merge of base -> absent with the file as it is, as Prepare decides),
// and only if it is still the file that was read when it goes: one the
// user saved meanwhile is read again, up to placeTries times.
func removeOne(d *os.Root, path string, base Version) (Outcome, error) {
	var like []byte
	if base.Present && !base.IsLink() {
		like = base.Content
	}
	name := filepath.Base(path)
	for try := 0; ; try++ {
		ours, seen, f, err := readOpenLike(d, path, like)
		if f != nil {
			f.Close()
		}
		if errors.Is(err, ErrNotFile) {
			return Conflict, nil // a directory where the file was: not prsm's
		}
		if err != nil {
			return Conflict, err
		}
		result, ok := Merge(base, ours, Absent)
		switch {
		case !ok:
			return Conflict, nil
		case Same(result, ours):
			return Unchanged, nil
		case result.Present:
			// Merge brings base -> absent to absent or to ours; anything
			// else is not a removal.
			return Conflict, fmt.Errorf("remove %s: the merge kept the file", path)
		}
		fi, err := d.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			return Unchanged, nil // gone since
		}
		if err != nil {
			return Conflict, fmt.Errorf("remove %s: %w", path, err)
		}
		if !os.SameFile(fi, seen) || fi.Size() != seen.Size() || !fi.ModTime().Equal(seen.ModTime()) || fi.Mode() != seen.Mode() {
			if try == placeTries {
				return Conflict, nil
			}
			continue
		}
		if err := fault("remove", path); err != nil {
			return Conflict, fmt.Errorf("remove %s: %w", path, err)
		}
		if err := d.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Conflict, fmt.Errorf("remove %s: %w", path, err)
		}
		return Written, nil
	}
}

// prune removes dir, and each parent of it up to root (not root itself),
// while they are empty: after a removal, nothing prsm took out leaves
// empty directories behind. Only real directories are pruned: removing a
// symlink to a directory would drop the link even if its target holds
// files. Each is looked at and removed relative to its opened parent.
func prune(root, dir string) {
	for d := dir; d != root && len(d) > len(root); d = filepath.Dir(d) {
		parent, err := openDirIn(root, filepath.Dir(d), false)
		if err != nil {
			return
		}
		info, err := parent.Lstat(filepath.Base(d))
		if err == nil && info.IsDir() {
			err = parent.Remove(filepath.Base(d))
		} else if err == nil {
			err = errors.New("not a directory")
		}
		parent.Close()
		if err != nil {
			return // not empty (or not ours to remove): stop pruning
		}
	}
}
