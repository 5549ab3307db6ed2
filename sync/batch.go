package sync

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	stdsync "sync"

	"github.com/prsm-dev/prsm/internal/safepath"
)

// Removal is one file RemoveAll takes out, if it still holds Base: the
// undoing of the file's creation.
type Removal struct {
	Rel  string
	Base Version
}

// RemoveAll brings each removal's change, Base -> absent, into root as
// Apply would: the file goes if it holds Base (Written), is left as it
// is if it holds anything else (Conflict), and is Unchanged if it is
// gone already; a removal prunes the directories it leaves empty. It
// serves bulk operations (a reject of 200k created files): the files of
// one directory are removed through that directory, opened once (as
// openDirIn opens it: no symlink on the way). The removals are made
// durable once, after the last of them: by one sync of the file system
// where the system has it (SyncFS), else of each directory.
// With a bin, each file that goes is renamed into it rather than
// unlinked (Bin), where the bin is on its file system; the caller deletes
// the bin after. The paths must not nest (a file and a directory of one
// name). It returns each removal's outcome and error, by index; a failing
// sync is the error of each file removed under it (removed, but not yet
// durable).
func RemoveAll(root string, items []Removal, bin *Bin) ([]Outcome, []error) {
	outs := make([]Outcome, len(items))
	errs := make([]error, len(items))
	root = filepath.Clean(root)
	names, byDir, err := byDirectory(root, len(items), func(i int) string { return items[i].Rel }, errs)
	if err != nil {
		for i := range items {
			outs[i], errs[i] = Conflict, err
		}
		return outs, errs
	}
	for i := range items {
		if errs[i] != nil {
			outs[i] = Conflict
		}
	}
	inDirs(byDir, func(dir string, idx []int) { removeIn(root, dir, idx, names, items, outs, errs, bin, !CanSyncFS) })
	if CanSyncFS {
		// One sync of the file system for all of them: a sync of each
		// directory is a commit of the file system's journal each, and
		// those waits were most of a bulk reject's time.
		var removed []int
		for i := range items {
			if outs[i] == Written && errs[i] == nil {
				removed = append(removed, i)
			}
		}
		if len(removed) > 0 {
			err := fault("sync", root)
			if err == nil {
				err = SyncFS(root)
			}
			if err != nil {
				for _, i := range removed {
					errs[i] = fmt.Errorf("removed %s: %w", items[i].Rel, err)
				}
			}
		}
	}
	return outs, errs
}

// byDirectory checks n relative paths (rel) under root and groups them
// by directory (absolute): names is each one's name in its directory, a
// part of the rel string, so that 200k files of an npm install hold no
// joined path each; join them where one is needed. A path is checked as
// safepath.Join checks it, but for the walk of its parents, which the
// open of each directory does once for all of its files (openDirIn: no
// symlink on the way); a bad one's error goes to errs.
func byDirectory(root string, n int, rel func(int) string, errs []error) (names []string, byDir map[string][]int, err error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, nil, err
	}
	names = make([]string, n)
	byDir = map[string][]int{}
	var lastRel, lastDir string // the path before's directory, most often this one's too
	for i := 0; i < n; i++ {
		r, err := safepath.Rel(abs, rel(i))
		if err == nil && len(abs)+1+len(r) > safepath.MaxPath {
			err = fmt.Errorf("path %.40q... is %d bytes under %s, over the system's %d: %w", r, len(r), root, safepath.MaxPath, safepath.ErrTooLong)
		}
		if err != nil {
			errs[i] = err
			continue
		}
		dirRel, name := path.Split(r)
		names[i] = name
		if dirRel != lastRel || lastDir == "" {
			lastRel, lastDir = dirRel, abs
			if dirRel != "" {
				lastDir = filepath.Join(abs, filepath.FromSlash(dirRel))
			}
		}
		byDir[lastDir] = append(byDir[lastDir], i)
	}
	return names, byDir, nil
}

// batchWorkers is how many directories a batch works in at once: its
// work is system calls and waits for the disk, which overlap.
const batchWorkers = 8

// inDirs runs fn for each directory of byDir and its items, batchWorkers
// directories at once.
func inDirs[T any](byDir map[string][]T, fn func(dir string, items []T)) {
	sem := make(chan struct{}, batchWorkers)
	var wg stdsync.WaitGroup
	for dir, idx := range byDir {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			fn(dir, idx)
		}()
	}
	wg.Wait()
}

// removeIn is RemoveAll's work in one directory, for the items idx, with
// bin (nil: none); syncDir: it syncs the directory after its removals.
func removeIn(root, dir string, idx []int, names []string, items []Removal, outs []Outcome, errs []error, bin *Bin, syncDir bool) {
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
	rm := d.Remove
	if bd := bin.in(d); bd != nil {
		defer bd.Close()
		rm = func(name string) error {
			if err := bin.take(bd, name); !errors.Is(err, errNoBin) {
				return err
			}
			return d.Remove(name)
		}
	}
	var removed []int
	for _, i := range idx {
		outs[i], errs[i] = removeOne(d, filepath.Join(dir, names[i]), items[i].Base, rm)
		if outs[i] == Written {
			removed = append(removed, i)
		}
	}
	if len(removed) > 0 && syncDir {
		if err := syncRoot(d); err != nil {
			for _, i := range removed {
				errs[i] = fmt.Errorf("removed %s: %w", filepath.Join(dir, names[i]), err)
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
// user saved meanwhile is read again, up to placeTries times. rm takes
// the file out, by its name in d.
func removeOne(d *os.Root, path string, base Version, rm func(name string) error) (Outcome, error) {
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
		if err := rm(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
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

// PlaceUnsynced is Place for a caller that places many files and then
// syncs the whole file system once (SyncFS) instead of each file: a file
// Prepare staged is placed as Place does, and one in a directory that was
// not there (which Place writes and syncs whole) is written and renamed
// into place unsynced. Either way the caller then runs Release, and
// SyncFS once for many, or Settle.
func (w *Prepared) PlaceUnsynced() (Outcome, Version, error) {
	if w.outcome != Written || w.tmp != "" || w.d != nil || !w.result.Present || w.result.IsLink() {
		return w.Place()
	}
	d, err := openDirIn(w.root, filepath.Dir(w.path), true)
	if err != nil {
		return Conflict, w.ours, fmt.Errorf("create parent of %s: %w", w.path, err)
	}
	tmp, f, err := stageFile(d, w.path, w.result.Content, os.FileMode(w.result.Mode&0o777))
	if err != nil {
		d.Close()
		return Conflict, w.ours, err
	}
	if err := placeStaged(d, tmp, w.path); err != nil {
		f.Close()
		d.Close()
		return Conflict, w.ours, err
	}
	w.d, w.staged, w.placed = d, f, true
	return Written, w.result, nil
}

// Release lets a placed file go, its descriptors closed, unsynced: the
// caller syncs its whole file system (SyncFS) after, for many files.
func (w *Prepared) Release() {
	if w != nil {
		w.drop()
	}
}

// Creation is a file CreateAll writes where none is: a new file of the
// agent's.
type Creation struct {
	Rel string
	V   Version // a regular file
}

// Staged are new files StageAll wrote beside their names: Place renames
// them into place, Discard takes them back.
type Staged struct {
	root  string
	n     int
	byDir map[string][]stagedFile
	// made is, by directory, the highest directory StageAll made for it
	// (absent: none): Discard takes back no directory of the user's.
	made map[string]string
}

// stagedFile is one file of Staged: the index of its Creation, its name
// in its directory (a part of the creation's Rel, no copy) and its
// temporary file's digits (tempName): 40 bytes a file, for an npm
// install's 200k.
type stagedFile struct {
	name string
	i    int32
	tmp  [tempDigits]byte
}

func newStagedFile(i int, name, tmp string) stagedFile {
	f := stagedFile{name: name, i: int32(i)}
	copy(f.tmp[:], tmp[len(TempPrefix):])
	return f
}

// tmpName is f's temporary file's name.
func (f *stagedFile) tmpName() string { return TempPrefix + string(f.tmp[:]) }

// StageAll writes the file of each of n creations (item(i) is the i-th)
// beside its name, in a temporary file of its directory (made if
// missing), as Apply stages what it writes, for Place to rename into
// place once the caller stored what the files are, and where nothing is
// there then: the agent's new files, which Apply(root, rel, Absent, V)
// would write. It serves bulk work (an npm install's 200k new files)
// while its records are stored: the files of one directory go through
// that directory, opened once (openDirIn: no symlink on the way), nothing
// is synced (the caller syncs the file system after Place: SyncFS), and
// no descriptor stays open. It returns the staged files and, by index,
// what failed; a creation that is not a regular file is not staged (nor
// an error).
func StageAll(root string, n int, item func(i int) Creation) (*Staged, []error) {
	errs := make([]error, n)
	root = filepath.Clean(root)
	st := &Staged{root: root, n: n, byDir: map[string][]stagedFile{}, made: map[string]string{}}
	names, byDir, err := byDirectory(root, n, func(i int) string { return item(i).Rel }, errs)
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return st, errs
	}
	var mu stdsync.Mutex
	inDirs(byDir, func(dir string, idx []int) {
		top := ""
		for d := dir; len(d) > len(root); d = filepath.Dir(d) {
			if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
				break
			}
			top = d
		}
		d, err := openDirIn(root, dir, true)
		if err != nil {
			for _, i := range idx {
				errs[i] = fmt.Errorf("create parent of %s: %w", filepath.Join(dir, names[i]), err)
			}
			return
		}
		defer d.Close()
		var files []stagedFile
		for _, i := range idx {
			v := item(i).V
			if !v.Present || v.IsLink() {
				continue
			}
			tmp, f, err := stage(d, filepath.Join(dir, names[i]), v.Content, os.FileMode(v.Mode&0o777), false)
			if err != nil {
				errs[i] = err
				continue
			}
			f.Close()
			files = append(files, newStagedFile(i, names[i], tmp))
		}
		mu.Lock()
		st.byDir[dir] = slices.Clip(files)
		if top != "" {
			st.made[dir] = top
		}
		mu.Unlock()
	})
	return st, errs
}

// Place renames the staged files into place where their paths still hold
// nothing, and returns, by the index of their creations, which it placed
// and what failed. A path that holds something now (the user made a file
// there since) keeps it: its staged file goes, and the caller merges
// with it (Prepare). Staged files are let go either way.
func (s *Staged) Place() (taken []bool, errs []error) {
	taken = make([]bool, s.n)
	errs = make([]error, s.n)
	inDirs(s.byDir, func(dir string, files []stagedFile) {
		d, err := openDirIn(s.root, dir, false)
		if err != nil {
			// Gone (or swapped) since: nothing is placed; the caller
			// merges each file anew.
			for _, f := range files {
				errs[f.i] = fmt.Errorf("place %s: %w", filepath.Join(dir, f.name), err)
			}
			return
		}
		defer d.Close()
		for _, f := range files {
			if _, err := d.Lstat(f.name); !errors.Is(err, fs.ErrNotExist) {
				d.Remove(f.tmpName())
				continue
			}
			if err := placeStaged(d, f.tmpName(), filepath.Join(dir, f.name)); err != nil {
				errs[f.i] = err
				continue
			}
			taken[f.i] = true
		}
	})
	s.byDir = nil
	return taken, errs
}

// Discard takes the staged files back (nothing was placed), and the
// directories StageAll made for them that are left empty.
func (s *Staged) Discard() {
	inDirs(s.byDir, func(dir string, files []stagedFile) {
		if d, err := openDirIn(s.root, dir, false); err == nil {
			for _, f := range files {
				d.Remove(f.tmpName())
			}
			d.Close()
			if top := s.made[dir]; top != "" {
				prune(filepath.Dir(top), dir)
			}
		}
	})
	s.byDir = nil
}
