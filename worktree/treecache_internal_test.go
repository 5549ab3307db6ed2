package worktree

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/internal/testgit"

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

// openIn opens the object store of the repository at dir, with a cache
// of its own.
func openIn(t *testing.T, dir string) *Objects {
	t.Helper()
	repo, err := Discover(context.Background(), nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	o, err := repo.Objects()
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestWarmTrees: warming reads every tree of a commit into the cache (and
// nothing else), stops at its budget, and stops when told to.
func TestWarmTrees(t *testing.T) {
	testgit.Env(t)
	dir := testgit.Init(t, "r")
	for _, p := range []string{"a.txt", "d/e/f.txt", "d/g.txt", "x/y/z/w.txt", "x/v.txt"} {
		testgit.Write(t, dir, p, p+"\n", 0o644)
	}
	testgit.Git(t, dir, "add", "-A")
	testgit.Git(t, dir, "commit", "-qm", "one")
	commit := testgit.Git(t, dir, "rev-parse", "HEAD")
	want := map[string]bool{testgit.Git(t, dir, "rev-parse", "HEAD^{tree}"): true}
	for _, l := range strings.Split(testgit.Git(t, dir, "ls-tree", "-r", "-d", "--format=%(objectname)", "HEAD"), "\n") {
		want[l] = true
	}
	cached := func(o *Objects) map[string]bool {
		got := map[string]bool{}
		for h := range o.treeCache.m {
			got[h.String()] = true
		}
		return got
	}
	o := openIn(t, dir)
	o.WarmTrees(commit, 0, func() bool { return false })
	if got := cached(o); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("cached trees %v, want %v", got, want)
	}
	o = openIn(t, dir)
	o.WarmTrees(commit, 1, func() bool { return false })
	if got := cached(o); len(got) != 1 {
		t.Errorf("a budget of one entry cached %d trees, want the root only", len(got))
	}
	o = openIn(t, dir)
	o.WarmTrees(commit, 0, func() bool { return true })
	if got := cached(o); len(got) != 0 {
		t.Errorf("a stopped warm-up cached %d trees", len(got))
	}
}

// TestSupersededTreesLeaveTheCache: a tree built from a tree a batch built
// replaces it in the cache; the base commit's trees, read from the
// repository, stay.
func TestSupersededTreesLeaveTheCache(t *testing.T) {
	testgit.Env(t)
	dir := testgit.Init(t, "r")
	testgit.Write(t, dir, "d/a.txt", "a\n", 0o644)
	testgit.Write(t, dir, "b.txt", "b\n", 0o644)
	testgit.Git(t, dir, "add", "-A")
	testgit.Git(t, dir, "commit", "-qm", "one")
	base := testgit.Git(t, dir, "rev-parse", "HEAD^{tree}")
	baseDir := testgit.Git(t, dir, "rev-parse", "HEAD:d")
	o := openIn(t, dir)
	build := func(from, content string) string {
		t.Helper()
		b := o.NewBatch()
		id, err := b.BuildTree(from, []TreeChange{{Path: "d/a.txt", File: &File{Mode: 0o100644, Content: []byte(content)}}})
		if err != nil {
			t.Fatal(err)
		}
		o.Stage(b.Objects())
		return id
	}
	has := func(id string) bool { _, ok := o.treeCache.m[plumbing.NewHash(id)]; return ok }
	t1 := build(base, "one\n")
	t2 := build(t1, "two\n")
	if has(t1) {
		t.Errorf("the first built root is still cached after the second was built from it")
	}
	if !has(t2) || !has(base) || !has(baseDir) {
		t.Errorf("cached: new root %v, base root %v, base dir %v; want all", has(t2), has(base), has(baseDir))
	}
	// The dropped tree still reads (from the staged objects) when asked.
	if ok, err := o.HasFile(commitOf(t, o, t1), "d/a.txt"); err != nil || !ok {
		t.Errorf("the dropped tree no longer reads: %v %v", ok, err)
	}
}

// commitOf stages a commit of tree and returns its id.
func commitOf(t *testing.T, o *Objects, tree string) string {
	t.Helper()
	b := o.NewBatch()
	c, err := b.Commit(tree, "", "test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	o.Stage(b.Objects())
	return c
}
