package worktree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// TreeChange sets (File non-nil) or deletes (File nil) one file of a tree.
type TreeChange struct {
	Path string
	File *File
}

// EmptyTree is git's id of the tree with no entries.
const EmptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

func (o *Objects) buildTree(b *Batch, base string, changes []TreeChange) (string, error) {
	root := &dirChange{files: map[string]*File{}, dirs: map[string]*dirChange{}}
	for _, c := range changes {
		parts := strings.Split(c.Path, "/")
		d := root
		for _, p := range parts[:len(parts)-1] {
			sub, ok := d.dirs[p]
			if !ok {
				sub = &dirChange{files: map[string]*File{}, dirs: map[string]*dirChange{}}
				d.dirs[p] = sub
			}
			d = sub
		}
		d.files[parts[len(parts)-1]] = c.File
	}
	var baseHash plumbing.Hash
	if base != "" && base != EmptyTree {
		baseHash = plumbing.NewHash(base)
	}
	h, err := o.writeDir(b, baseHash, root)
	if err != nil {
		return "", err
	}
	if h.IsZero() {
		h = b.add(plumbing.TreeObject, nil) // the empty tree
	}
	return h.String(), nil
}

type dirChange struct {
	files map[string]*File // nil value: delete
	dirs  map[string]*dirChange
}

// writeDir applies d to the tree h and adds the result to b; a zero hash
// means the directory is now empty. The entries d does not touch are
// copied over in order; only the touched ones are looked at.
func (o *Objects) writeDir(b *Batch, h plumbing.Hash, d *dirChange) (plumbing.Hash, error) {
	var base []object.TreeEntry
	if !h.IsZero() {
		t, err := o.tree(h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		base = t.entries
	}
	list := make([]object.TreeEntry, 0, len(base)+len(d.files)+len(d.dirs))
	touched := map[string]object.TreeEntry{} // the current entries of touched names
	for _, e := range base {
		_, file := d.files[e.Name]
		_, dir := d.dirs[e.Name]
		if file || dir {
			touched[e.Name] = e
			continue
		}
		list = append(list, e)
	}
	for name, f := range d.files {
		if f == nil {
			delete(touched, name)
			continue
		}
		mode := filemode.Regular
		switch {
		case f.Mode&0o170000 == 0o120000:
			mode = filemode.Symlink
		case f.Mode&0o111 != 0:
			mode = filemode.Executable
		}
		touched[name] = object.TreeEntry{Name: name, Mode: mode, Hash: b.add(plumbing.BlobObject, f.Content)}
	}
	for name, sub := range d.dirs {
		var subHash plumbing.Hash
		if e, ok := touched[name]; ok && e.Mode == filemode.Dir {
			subHash = e.Hash
		}
		nh, err := o.writeDir(b, subHash, sub)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if nh.IsZero() {
			if e, ok := touched[name]; ok && e.Mode == filemode.Dir {
				delete(touched, name)
			}
			continue
		}
		touched[name] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: nh}
	}
	for _, e := range touched {
		list = append(list, e)
	}
	if len(list) == 0 {
		return plumbing.ZeroHash, nil
	}
	slices.SortFunc(list, gitCompare)
	id := b.add(plumbing.TreeObject, encodeTree(list))
	if _, ok := o.treeCache.m[id]; !ok {
		o.treeCache.add(&cachedTree{id: id, entries: list, sorted: true, built: true})
	}
	if h != id {
		o.treeCache.superseded(h)
	}
	return id, nil
}

// encodeTree is the body of a tree object of entries, which are in git's
// order (gitCompare).
func encodeTree(entries []object.TreeEntry) []byte {
	n := 0
	for _, e := range entries {
		n += 28 + len(e.Name)
	}
	b := make([]byte, 0, n)
	for _, e := range entries {
		b = strconv.AppendUint(b, uint64(e.Mode), 8)
		b = append(b, ' ')
		b = append(b, e.Name...)
		b = append(b, 0)
		b = append(b, e.Hash[:]...)
	}
	return b
}

// SetRef points the ref name (refs/prsm/...) at commit. The ref file is
// replaced atomically the way git does it (name.lock, then a rename):
// go-git truncates the ref and then writes it, so a kill in between left
// an empty ref, which git reports as broken and whose commit a gc could
// then prune.
func (o *Objects) SetRef(name, commit string) error {
	if !strings.HasPrefix(name, "refs/prsm/") || strings.Contains(name, "..") || !hexID.MatchString(commit) {
		return fmt.Errorf("set ref %s: refused (only refs/prsm/ refs to object ids)", name)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	// Only prsm writes refs/prsm/, one server per repository, under o.mu:
	// a lock file here is a crash's leftover.
	if err := o.writeRef(name, commit, true, nil); err != nil {
		return fmt.Errorf("set ref %s: %w", name, err)
	}
	return nil
}

// writeRef points the ref file of name (in the common git directory) at
// commit the way git does: it writes name.lock, then renames it in
// place. A lock found there is a crash's leftover, taken away, when
// stale; else the error is fs.ErrExist (git at work on the ref). check,
// when set, runs with the lock held and may refuse.
func (o *Objects) writeRef(name, commit string, stale bool, check func() error) error {
	p := filepath.Join(o.refDir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	lock := p + ".lock"
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) && stale {
		os.Remove(lock)
		f, err = os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	}
	if err != nil {
		return err
	}
	if check != nil {
		err = check()
	}
	if err == nil {
		_, err = f.WriteString(commit + "\n")
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(lock, p)
	}
	if err != nil {
		os.Remove(lock)
	}
	return err
}

// Ref is the commit the ref name (refs/heads/main, say) points at,
// read from the ref's file or packed-refs without a git process; "" when
// there is no such ref. A loose ref (git commit and git notes write one)
// is read without o.mu, which the engine's background writes may hold
// for a while: that wait was 10-20 ms of prsm commit.
func (o *Objects) Ref(name string) (string, error) {
	if strings.Contains(name, "..") {
		return "", fmt.Errorf("read ref %s: refused", name)
	}
	b, err := os.ReadFile(filepath.Join(o.refDir, filepath.FromSlash(name)))
	if id := strings.TrimSpace(string(b)); err == nil && hexID.MatchString(id) {
		return id, nil
	}
	// Packed, symbolic, or absent.
	o.mu.Lock()
	defer o.mu.Unlock()
	ref, err := storer.ResolveReference(o.storage, plumbing.ReferenceName(name))
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read ref %s: %w", name, err)
	}
	return ref.Hash().String(), nil
}

// DeleteRef removes the ref name.
func (o *Objects) DeleteRef(name string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.storage.RemoveReference(plumbing.ReferenceName(name))
}

// CommitTreeID returns the tree id of commit.
func (o *Objects) CommitTreeID(commit string) (tree string, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	err = o.retry(func() error {
		c, err := object.GetCommit(o.reader(), plumbing.NewHash(commit))
		if err != nil {
			return fmt.Errorf("read commit %s: %w", commit, err)
		}
		tree = c.TreeHash.String()
		return nil
	})
	return tree, err
}

// TreeDiff is one file that differs between two trees; a nil side is absent.
type TreeDiff struct {
	Path     string
	From, To *File
}

// DiffTrees lists the files that differ between trees a and b, in path
// order, with their contents.
func (o *Objects) DiffTrees(a, b string) (diffs []TreeDiff, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	err = o.retry(func() error {
		var err error
		diffs, err = o.diffTrees(a, b)
		return err
	})
	return diffs, err
}

func (o *Objects) diffTrees(a, b string) ([]TreeDiff, error) {
	id := func(s string) plumbing.Hash {
		if s == "" || s == EmptyTree {
			return plumbing.ZeroHash
		}
		return plumbing.NewHash(s)
	}
	var out []TreeDiff
	if err := o.diffDir("", id(a), id(b), &out); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// diffDir compares two trees of the same directory (a zero hash: absent)
// entry by entry, descending only into subtrees whose ids differ: its cost
// follows what differs, not the size of the trees. (go-git's merkletrie
// diff decoded every tree it met: half a 100-file rewind's CPU.)
func (o *Objects) diffDir(prefix string, ha, hb plumbing.Hash, out *[]TreeDiff) error {
	if ha == hb {
		return nil
	}
	entries := func(h plumbing.Hash) (map[string]object.TreeEntry, error) {
		m := map[string]object.TreeEntry{}
		if h.IsZero() {
			return m, nil
		}
		t, err := o.tree(h)
		if err != nil {
			return nil, err
		}
		for _, e := range t.entries {
			m[e.Name] = e
		}
		return m, nil
	}
	ea, err := entries(ha)
	if err != nil {
		return err
	}
	eb, err := entries(hb)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(ea)+len(eb))
	for n := range ea {
		names = append(names, n)
	}
	for n := range eb {
		if _, ok := ea[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		a, inA := ea[name]
		b, inB := eb[name]
		path := prefix + name
		dirA, dirB := inA && a.Mode == filemode.Dir, inB && b.Mode == filemode.Dir
		if dirA || dirB {
			var sa, sb plumbing.Hash
			if dirA {
				sa = a.Hash
			}
			if dirB {
				sb = b.Hash
			}
			if err := o.diffDir(path+"/", sa, sb, out); err != nil {
				return err
			}
		}
		fileA, fileB := inA && !dirA && a.Mode.IsFile(), inB && !dirB && b.Mode.IsFile()
		if !fileA && !fileB || fileA && fileB && a.Hash == b.Hash && a.Mode == b.Mode {
			continue
		}
		d := TreeDiff{Path: path}
		if fileA {
			if d.From, err = o.entryFile(a); err != nil {
				return err
			}
		}
		if fileB {
			if d.To, err = o.entryFile(b); err != nil {
				return err
			}
		}
		*out = append(*out, d)
	}
	return nil
}

func (o *Objects) entryFile(e object.TreeEntry) (*File, error) {
	if !e.Mode.IsFile() {
		return nil, nil
	}
	b, err := o.blobContent(e.Hash)
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", e.Hash, err)
	}
	return &File{Mode: uint32(e.Mode), Content: b}, nil
}

// DeleteRefs removes every ref whose name starts with prefix
// (refs/prsm/<session>/).
func (o *Objects) DeleteRefs(prefix string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	iter, err := o.storage.IterReferences()
	if err != nil {
		return err
	}
	var names []plumbing.ReferenceName
	iter.ForEach(func(r *plumbing.Reference) error {
		if strings.HasPrefix(r.Name().String(), prefix) {
			names = append(names, r.Name())
		}
		return nil
	})
	for _, n := range names {
		if err := o.storage.RemoveReference(n); err != nil {
			return err
		}
	}
	return nil
}
