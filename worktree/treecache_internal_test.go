package worktree

import (
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestTreeCacheEvictsLeastRecentlyUsed: past its bound the cache drops
// the trees used longest ago, and counts what it holds exactly.
func TestTreeCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := &treeCache{limit: 5}
	tree := func(n byte, entries int) *cachedTree {
		ct := &cachedTree{id: plumbing.Hash{n}, sorted: true}
		for i := 0; i < entries; i++ {
			ct.entries = append(ct.entries, object.TreeEntry{Name: string(rune('a' + i)), Mode: filemode.Regular})
		}
		return ct
	}
	c.add(tree(1, 2))
	c.add(tree(2, 2))
	c.lru.MoveToFront(c.m[plumbing.Hash{1}]) // 1 used after 2
	c.add(tree(3, 2))                        // 6 entries: 2 goes
	if _, ok := c.m[plumbing.Hash{2}]; ok || c.entries != 4 || len(c.m) != 2 {
		t.Fatalf("after the third tree: %d trees, %d entries, tree 2 kept: %v", len(c.m), c.entries, ok)
	}
	c.add(tree(4, 9)) // larger than the bound alone: kept, everything else goes
	if len(c.m) != 1 || c.entries != 9 {
		t.Fatalf("after a tree over the bound: %d trees, %d entries", len(c.m), c.entries)
	}
}

// TestGitCompare: git's tree order, directories compared as if their
// names ended in "/".
func TestGitCompare(t *testing.T) {
	f := func(n string) object.TreeEntry { return object.TreeEntry{Name: n, Mode: filemode.Regular} }
	d := func(n string) object.TreeEntry { return object.TreeEntry{Name: n, Mode: filemode.Dir} }
	order := []object.TreeEntry{f("a"), f("a-b"), f("a.txt"), d("a"), f("a0"), d("b"), f("ba")}
	for i := 0; i+1 < len(order); i++ {
		a, b := order[i], order[i+1]
		if gitCompare(a, b) >= 0 || gitCompare(b, a) <= 0 {
			t.Errorf("%s (%v) should sort before %s (%v)", a.Name, a.Mode, b.Name, b.Mode)
		}
	}
	for _, e := range order {
		if gitCompare(e, e) != 0 {
			t.Errorf("%s does not equal itself", e.Name)
		}
	}
	ct := &cachedTree{entries: order, sorted: true}
	for _, e := range order {
		if got, ok := ct.find(e.Name); !ok || got.Name != e.Name {
			t.Errorf("find %s: %v %v", e.Name, got.Name, ok)
		}
	}
	for _, n := range []string{"", "a-", "a/", "b0", "c"} {
		if _, ok := ct.find(n); ok {
			t.Errorf("find %q found something", n)
		}
	}
}
