package worktree

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// ErrIndexNotPlain means an index that IndexOfTree leaves to git: one
// go-git cannot read (a split or a sparse index), or one with unmerged
// entries.
var ErrIndexNotPlain = errors.New("index not plain")

// IndexOfTree writes to dst (a new file) the index that `git read-tree
// -m -i TREE` makes from the index file src (which may not exist): the
// files of tree, each with the stat data of src's entry where that entry
// has the same blob and mode (git's next refresh then need not hash that
// file again), and none elsewhere. It saves prsm commit a git process.
// An index it cannot take is ErrIndexNotPlain: run git read-tree then.
func (o *Objects) IndexOfTree(src, dst, tree string) error {
	old := &index.Index{Version: 2}
	if b, err := os.ReadFile(src); err == nil {
		if err := index.NewDecoder(bytes.NewReader(b)).Decode(old); err != nil {
			return fmt.Errorf("%w: %v", ErrIndexNotPlain, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	had := make(map[string]*index.Entry, len(old.Entries))
	for _, e := range old.Entries {
		if e.Stage != 0 { // go-git reads git's stage bits as they are: 0 is merged
			return fmt.Errorf("%w: %s is unmerged", ErrIndexNotPlain, e.Name)
		}
		had[e.Name] = e
	}
	var entries []*index.Entry
	o.mu.Lock()
	err := o.retry(func() error {
		entries = entries[:0]
		return o.walkTree(plumbing.NewHash(tree), "", func(name string, mode filemode.FileMode, h plumbing.Hash) {
			e := &index.Entry{Name: name, Mode: mode, Hash: h}
			if p := had[name]; p != nil && p.Hash == h && p.Mode == mode && !p.IntentToAdd {
				e.CreatedAt, e.ModifiedAt, e.Dev, e.Inode, e.UID, e.GID, e.Size = p.CreatedAt, p.ModifiedAt, p.Dev, p.Inode, p.UID, p.GID, p.Size
			}
			entries = append(entries, e)
		})
	})
	o.mu.Unlock()
	if err != nil {
		return err
	}
	// The index is in byte order of the paths, which a walk of git's
	// trees gives already (a tree orders a directory as if its name
	// ended in "/"), but for a tree git would not have written.
	slices.SortFunc(entries, func(a, b *index.Entry) int { return strings.Compare(a.Name, b.Name) })
	var buf bytes.Buffer
	if err := index.NewEncoder(&buf).Encode(&index.Index{Version: 2, Entries: entries}); err != nil {
		return err
	}
	return os.WriteFile(dst, buf.Bytes(), 0o600)
}

// walkTree calls fn for every file of tree h (its path under prefix, its
// mode and blob), submodules included, directories descended. Callers
// hold o.mu.
func (o *Objects) walkTree(h plumbing.Hash, prefix string, fn func(string, filemode.FileMode, plumbing.Hash)) error {
	t, err := o.tree(h)
	if err != nil {
		return err
	}
	for _, e := range t.entries {
		if e.Mode == filemode.Dir {
			if err := o.walkTree(e.Hash, prefix+e.Name+"/", fn); err != nil {
				return err
			}
			continue
		}
		fn(prefix+e.Name, e.Mode, e.Hash)
	}
	return nil
}
