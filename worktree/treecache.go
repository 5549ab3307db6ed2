package worktree

import (
	"cmp"
	"container/list"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// treeCacheEntries bounds the tree entries the cache holds (about 70 bytes
// each): every tree of a 100k-file repository fits.
const treeCacheEntries = 128 << 10

// treeCache keeps decoded trees by id, least recently used out first. A
// checkpoint reads the trees on its changed paths, and a base file's
// lookup the trees down to it; go-git decoded them again on every read
// (its path cache skips paths one directory deep), which was a third of a
// tool call's checkpoint. Trees are immutable, so an entry is never stale.
type treeCache struct {
	m       map[plumbing.Hash]*list.Element
	lru     list.List // of *cachedTree, most recent first
	entries int
	limit   int // entries held at most; 0: treeCacheEntries
}

type cachedTree struct {
	id      plumbing.Hash
	entries []object.TreeEntry // in the tree's order; never modified
	sorted  bool               // in git's order, as git writes them
	built   bool               // added by a batch, not read
}

// tree returns the decoded tree h. Callers hold o.mu and must not modify
// its entries.
func (o *Objects) tree(h plumbing.Hash) (*cachedTree, error) {
	c := &o.treeCache
	if el, ok := c.m[h]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*cachedTree), nil
	}
	t, err := object.GetTree(o.reader(), h)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	ct := &cachedTree{id: h, entries: t.Entries, sorted: slices.IsSortedFunc(t.Entries, gitCompare)}
	c.add(ct)
	return ct, nil
}

// add caches ct (not cached yet), evicting the least recently used trees
// past the bound. A tree a batch builds is added too: the next checkpoint
// starts from it.
func (c *treeCache) add(ct *cachedTree) {
	if c.m == nil {
		c.m = map[plumbing.Hash]*list.Element{}
	}
	c.m[ct.id] = c.lru.PushFront(ct)
	c.entries += len(ct.entries)
	c.trim()
}

// superseded drops tree h if a batch built it: a new version of its
// directory was just built from it, and the next checkpoint starts from
// that one. Without this, every checkpoint left its old trees in the cache
// and, in a large repository, pushed out the base trees still in use.
func (c *treeCache) superseded(h plumbing.Hash) {
	if el, ok := c.m[h]; ok && el.Value.(*cachedTree).built {
		c.lru.Remove(el)
		delete(c.m, h)
		c.entries -= len(el.Value.(*cachedTree).entries)
	}
}

// trim evicts the least recently used trees past the bound.
func (c *treeCache) trim() {
	limit := c.limit
	if limit == 0 {
		limit = treeCacheEntries
	}
	for c.entries > limit && c.lru.Len() > 1 {
		old := c.lru.Remove(c.lru.Back()).(*cachedTree)
		delete(c.m, old.id)
		c.entries -= len(old.entries)
	}
}

// gitCompare orders tree entries as git does: names compared as if
// directories ended in "/".
func gitCompare(a, b object.TreeEntry) int {
	n := min(len(a.Name), len(b.Name))
	if c := strings.Compare(a.Name[:n], b.Name[:n]); c != 0 {
		return c
	}
	next := func(e object.TreeEntry) byte {
		switch {
		case len(e.Name) > n:
			return e.Name[n]
		case e.Mode == filemode.Dir:
			return '/'
		}
		return 0
	}
	return cmp.Compare(next(a), next(b))
}

// find looks name up: a binary search for it as a file and as a
// directory, or a scan in a tree that is out of order.
func (t *cachedTree) find(name string) (object.TreeEntry, bool) {
	entries := t.entries
	if !t.sorted {
		for _, e := range entries {
			if e.Name == name {
				return e, true
			}
		}
		return object.TreeEntry{}, false
	}
	for _, mode := range []filemode.FileMode{filemode.Regular, filemode.Dir} {
		if i, ok := slices.BinarySearchFunc(entries, object.TreeEntry{Name: name, Mode: mode}, gitCompare); ok && entries[i].Name == name {
			return entries[i], true
		}
	}
	return object.TreeEntry{}, false
}

// WarmTrees reads the trees of commit into the tree cache, breadth first,
// until budget entries are cached or stop says so: the first lookup of a
// file in a directory then finds its tree decoded. It takes the lock for
// one tree at a time, so lookups go on meanwhile. Meant to run in the
// background when a session starts; errors end it early. A budget of 0
// is half the cache.
func (o *Objects) WarmTrees(commit string, budget int, stop func() bool) {
	if budget <= 0 {
		budget = treeCacheEntries / 2
	}
	o.mu.Lock()
	var root plumbing.Hash
	err := o.retry(func() error {
		c, err := object.GetCommit(o.reader(), plumbing.NewHash(commit))
		if err == nil {
			root = c.TreeHash
		}
		return err
	})
	o.mu.Unlock()
	if err != nil {
		return
	}
	queue := []plumbing.Hash{root}
	seen := 0
	for len(queue) > 0 && seen < budget && !stop() {
		h := queue[0]
		queue = queue[1:]
		o.mu.Lock()
		t, err := o.tree(h)
		o.mu.Unlock()
		if err != nil {
			return
		}
		seen += len(t.entries)
		for _, e := range t.entries {
			if e.Mode == filemode.Dir {
				queue = append(queue, e.Hash)
			}
		}
	}
}
