package worktree_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/worktree"
)

// TestBuildTreeEqualsGit: a tree built incrementally from changes has the
// same id git gives the same files through add -A and write-tree.
func TestBuildTreeEqualsGit(t *testing.T) {
	testgit.Env(t)
	dir := testgit.Init(t, "r")
	testgit.Write(t, dir, "a.txt", "a\n", 0o644)
	testgit.Write(t, dir, "d/e/f.txt", "f\n", 0o644)
	testgit.Write(t, dir, "d/g.txt", "g\n", 0o644)
	testgit.Write(t, dir, "d-sibling", "s\n", 0o644)
	testgit.Write(t, dir, "x/only.txt", "o\n", 0o644)
	testgit.Git(t, dir, "add", "-A")
	testgit.Git(t, dir, "commit", "-qm", "one")
	base := testgit.Git(t, dir, "rev-parse", "HEAD^{tree}")
	objs := openObjects(t, dir)
	changes := []worktree.TreeChange{
		{Path: "a.txt", File: &worktree.File{Mode: 0o100755, Content: []byte("a2\n")}},
		{Path: "d/e/f.txt"},  // delete: d/e becomes empty and goes
		{Path: "x/only.txt"}, // delete the only file of x
		{Path: "d/new dir/n.txt", File: &worktree.File{Mode: 0o100644, Content: []byte("n\n")}},
		{Path: "d.txt", File: &worktree.File{Mode: 0o100644, Content: []byte("sorts before d/\n")}},
		{Path: "link", File: &worktree.File{Mode: 0o120000, Content: []byte("a.txt")}},
	}
	got, err := buildTree(objs, base, changes)
	if err != nil {
		t.Fatal(err)
	}
	// The same by git.
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a2\n"), 0o755)
	os.Chmod(filepath.Join(dir, "a.txt"), 0o755)
	os.RemoveAll(filepath.Join(dir, "d/e"))
	os.RemoveAll(filepath.Join(dir, "x"))
	testgit.Write(t, dir, "d/new dir/n.txt", "n\n", 0o644)
	testgit.Write(t, dir, "d.txt", "sorts before d/\n", 0o644)
	testgit.Symlink(t, dir, "link", "a.txt")
	testgit.Git(t, dir, "add", "-A")
	want := testgit.Git(t, dir, "write-tree")
	if got != want {
		t.Fatalf("BuildTree = %s, git write-tree = %s\n%s", got, want, testgit.Git(t, dir, "ls-tree", "-r", got))
	}
	// Commit and ref; git sees a sound object graph.
	c, err := commitTree(objs, got, testgit.Git(t, dir, "rev-parse", "HEAD"), "cp", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := objs.SetRef("refs/prsm/s/head", c); err != nil {
		t.Fatal(err)
	}
	if tree := testgit.Git(t, dir, "rev-parse", "refs/prsm/s/head^{tree}"); tree != want {
		t.Errorf("ref tree %s", tree)
	}
	testgit.Git(t, dir, "fsck", "--strict", "--no-dangling")
	// Deleting everything gives the empty tree.
	empty, err := buildTree(objs, want, []worktree.TreeChange{{Path: "a.txt"}, {Path: "d/g.txt"}, {Path: "d/new dir/n.txt"}, {Path: "d.txt"}, {Path: "link"}, {Path: "d-sibling"}})
	if err != nil || empty != worktree.EmptyTree {
		t.Errorf("empty tree: %s %v", empty, err)
	}
	diffs, err := objs.DiffTrees(base, want)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, d := range diffs {
		paths = append(paths, fmt.Sprintf("%s %v %v", d.Path, d.From != nil, d.To != nil))
	}
	if got := fmt.Sprint(paths); got != "[a.txt true true d.txt false true d/e/f.txt true false d/new dir/n.txt false true link false true x/only.txt true false]" {
		t.Errorf("diff: %s", got)
	}
}

// TestBuildTreeWritesObjectsGitReads: the objects of a tree built from
// nothing are written by prsm alone (git wrote none of them), in a pack
// git reads and fsck accepts, read-only like git's own.
func TestBuildTreeWritesObjectsGitReads(t *testing.T) {
	testgit.Env(t)
	dir := testgit.Init(t, "r")
	objs := openObjects(t, dir)
	var changes []worktree.TreeChange
	for i := 0; i < 40; i++ {
		changes = append(changes, worktree.TreeChange{Path: fmt.Sprintf("p%d/q%d/f%d.txt", i%3, i%7, i),
			File: &worktree.File{Mode: 0o100644, Content: []byte(fmt.Sprintf("file %d\n", i))}})
	}
	tree, err := buildTree(objs, "", changes)
	if err != nil {
		t.Fatal(err)
	}
	if got := testgit.Git(t, dir, "cat-file", "-t", tree); got != "tree" {
		t.Fatalf("cat-file -t %s = %q", tree, got)
	}
	if got := testgit.Git(t, dir, "cat-file", "-p", tree+":p1/q3/f10.txt"); got != "file 10" {
		t.Fatalf("blob through git = %q", got)
	}
	if n := len(strings.Split(testgit.Git(t, dir, "ls-tree", "-r", "--name-only", tree), "\n")); n != 40 {
		t.Fatalf("ls-tree lists %d files, want 40", n)
	}
	packs := packFiles(t, dir)
	if len(packs) != 1 {
		t.Fatalf("packs: %v", packs)
	}
	for _, p := range []string{packs[0], strings.TrimSuffix(packs[0], ".pack") + ".idx"} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o444 {
			t.Fatalf("%s: %v %v", p, fi, err)
		}
	}
	c, err := commitTree(objs, tree, "", "cp", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := objs.SetRef("refs/prsm/s/head", c); err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, dir, "fsck", "--strict", "--no-dangling")
	if left, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "*", "tmp_*")); len(left) != 0 {
		t.Fatalf("temp files left: %v", left)
	}
	// Built again on top of itself with one change, only the path's objects
	// are new and the rest is reused.
	again, err := buildTree(objs, tree, []worktree.TreeChange{{Path: "p0/q0/f0.txt", File: &worktree.File{Mode: 0o100755, Content: []byte("x\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := testgit.Git(t, dir, "diff-tree", "-r", "--name-status", tree, again); got != "M\tp0/q0/f0.txt" {
		t.Fatalf("diff-tree = %q", got)
	}
}

// TestSetRefAtomic: refs/prsm/ refs are replaced through a lock file and a
// rename, so a reader never sees an empty ref; a lock file a crash left
// behind does not block the next write; other ref names are refused.
func TestSetRefAtomic(t *testing.T) {
	testgit.Env(t)
	dir := testgit.Init(t, "r")
	testgit.Write(t, dir, "a.txt", "a\n", 0o644)
	testgit.Git(t, dir, "add", "-A")
	testgit.Git(t, dir, "commit", "-qm", "one")
	one := testgit.Git(t, dir, "rev-parse", "HEAD")
	testgit.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "two")
	two := testgit.Git(t, dir, "rev-parse", "HEAD")
	objs := openObjects(t, dir)
	if err := objs.SetRef("refs/prsm/s/head", one); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(dir, ".git", "refs", "prsm", "s", "head")
	// A crash's leftover lock.
	if err := os.WriteFile(ref+".lock", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := objs.SetRef("refs/prsm/s/head", two); err != nil {
		t.Fatalf("stale lock blocked the ref: %v", err)
	}
	if got := testgit.Git(t, dir, "rev-parse", "refs/prsm/s/head"); got != two {
		t.Fatalf("ref = %s, want %s", got, two)
	}
	if b, _ := os.ReadFile(ref); string(b) != two+"\n" {
		t.Fatalf("ref file %q", b)
	}
	if _, err := os.Stat(ref + ".lock"); !os.IsNotExist(err) {
		t.Fatalf("lock file left: %v", err)
	}
	for _, bad := range []string{"refs/heads/main", "HEAD", "refs/prsm/../heads/main"} {
		if err := objs.SetRef(bad, two); err == nil {
			t.Errorf("SetRef(%q) was allowed", bad)
		}
	}
	if got := testgit.Git(t, dir, "rev-parse", "HEAD"); got != two {
		t.Fatalf("HEAD moved: %s", got)
	}
	testgit.Git(t, dir, "fsck", "--strict", "--no-dangling")
}

// TestDiffTreesEqualsGit: DiffTrees lists exactly the files git diff-tree
// does, with the right sides, across file <-> directory swaps, mode
// changes, symlinks and nested additions and deletions.
func TestDiffTreesEqualsGit(t *testing.T) {
	testgit.Env(t)
	dir := testgit.Init(t, "r")
	for rel, c := range map[string]string{
		"same.txt": "same\n", "mod.txt": "one\n", "gone/deep/f.txt": "f\n", "gone/g.txt": "g\n",
		"becomes-dir": "file\n", "dir-becomes-file/x.txt": "x\n", "run.sh": "#!/bin/sh\n", "keep/k.txt": "k\n",
	} {
		testgit.Write(t, dir, rel, c, 0o644)
	}
	testgit.Git(t, dir, "add", "-A")
	testgit.Git(t, dir, "commit", "-qm", "a")
	a := testgit.Git(t, dir, "rev-parse", "HEAD^{tree}")
	os.WriteFile(filepath.Join(dir, "mod.txt"), []byte("two\n"), 0o644)
	os.RemoveAll(filepath.Join(dir, "gone"))
	os.Remove(filepath.Join(dir, "becomes-dir"))
	testgit.Write(t, dir, "becomes-dir/inner.txt", "inner\n", 0o644)
	os.RemoveAll(filepath.Join(dir, "dir-becomes-file"))
	testgit.Write(t, dir, "dir-becomes-file", "now a file\n", 0o644)
	os.Chmod(filepath.Join(dir, "run.sh"), 0o755)
	testgit.Write(t, dir, "new/a/b/c.txt", "c\n", 0o644)
	testgit.Symlink(t, dir, "link", "same.txt")
	testgit.Git(t, dir, "add", "-A")
	testgit.Git(t, dir, "commit", "-qm", "b")
	b := testgit.Git(t, dir, "rev-parse", "HEAD^{tree}")

	objs := openObjects(t, dir)
	diffs, err := objs.DiffTrees(a, b)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range diffs {
		st := "M"
		switch {
		case d.From == nil:
			st = "A"
		case d.To == nil:
			st = "D"
		}
		got = append(got, st+"\t"+d.Path)
	}
	want := testgit.Git(t, dir, "diff-tree", "-r", "--no-renames", "--name-status", a, b)
	if strings.Join(got, "\n") != want {
		t.Fatalf("DiffTrees:\n%s\ngit diff-tree:\n%s", strings.Join(got, "\n"), want)
	}
	for _, d := range diffs {
		if d.Path == "run.sh" && (d.From.Mode != 0o100644 || d.To.Mode != 0o100755) {
			t.Errorf("run.sh modes %o -> %o", d.From.Mode, d.To.Mode)
		}
		if d.Path == "link" && (d.To.Mode != 0o120000 || string(d.To.Content) != "same.txt") {
			t.Errorf("link: %o %q", d.To.Mode, d.To.Content)
		}
	}
	if back, err := objs.DiffTrees(b, a); err != nil || len(back) != len(diffs) {
		t.Errorf("reverse diff: %d files, %v", len(back), err)
	}
	if none, err := objs.DiffTrees(a, a); err != nil || len(none) != 0 {
		t.Errorf("a tree against itself: %d files, %v", len(none), err)
	}
}

// buildTree builds a tree in a batch and writes its objects, as a
// checkpoint and its flush do.
func buildTree(objs *worktree.Objects, base string, changes []worktree.TreeChange) (string, error) {
	b := objs.NewBatch()
	tree, err := b.BuildTree(base, changes)
	if err != nil {
		return "", err
	}
	return tree, objs.WriteObjects(b.Objects())
}

// commitTree writes a commit of tree, as a checkpoint and its flush do.
func commitTree(objs *worktree.Objects, tree, parent, message string, when time.Time) (string, error) {
	b := objs.NewBatch()
	c, err := b.Commit(tree, parent, message, when)
	if err != nil {
		return "", err
	}
	return c, objs.WriteObjects(b.Objects())
}

// TestBatchWritesLargeBlobsAtOnce: a blob larger than a few MiB goes into
// the object store as the batch builds the tree, not into the batch's
// objects (which a pending row would hold, copied), in a pack of its own
// kept until its tree is flushed (ReleaseLarge); a git gc in between
// keeps it, and git reads it back whole. Small ones wait in the batch.
func TestBatchWritesLargeBlobsAtOnce(t *testing.T) {
	testgit.Env(t)
	dir := testgit.Init(t, "r")
	testgit.Write(t, dir, "a.txt", "a\n", 0o644)
	testgit.Git(t, dir, "add", "-A")
	testgit.Git(t, dir, "commit", "-qm", "one")
	objs := openObjects(t, dir)
	large := []byte(strings.Repeat("large line of text\n", 400_000)) // 7.6 MB
	b := objs.NewBatch()
	tree, err := b.BuildTree(testgit.Git(t, dir, "rev-parse", "HEAD^{tree}"), []worktree.TreeChange{
		{Path: "big.txt", File: &worktree.File{Mode: 0o100644, Content: large}},
		{Path: "small.txt", File: &worktree.File{Mode: 0o100644, Content: []byte("small\n")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, ob := range b.Objects() {
		if len(ob.Body) == len(large) {
			t.Fatal("the large blob waits in the batch")
		}
	}
	keeps := glob(t, filepath.Join(dir, ".git", "objects", "pack", "*.keep"))
	if len(keeps) != 1 {
		t.Fatalf(".keep files after the build: %v", keeps)
	}
	testgit.Git(t, dir, "gc", "-q", "--prune=now")
	// The same blob in another batch shares the kept pack.
	again := objs.NewBatch()
	if _, err := again.BuildTree("", []worktree.TreeChange{{Path: "copy.txt", File: &worktree.File{Mode: 0o100644, Content: large}}}); err != nil {
		t.Fatal(err)
	}
	if n := len(packFiles(t, dir)); n != 2 { // git's, and the large blob's
		t.Fatalf("packs after the second build: %d", n)
	}
	if err := objs.WriteObjects(b.Objects()); err != nil {
		t.Fatal(err)
	}
	if err := objs.ReleaseLarge(b.Objects()); err != nil {
		t.Fatal(err)
	}
	if keeps := glob(t, filepath.Join(dir, ".git", "objects", "pack", "*.keep")); len(keeps) != 0 {
		t.Fatalf(".keep files once the tree is flushed: %v", keeps)
	}
	// Built again (the file edited back to it): its pack is kept again,
	// not written again.
	packs := len(packFiles(t, dir))
	back := objs.NewBatch()
	if _, err := back.BuildTree("", []worktree.TreeChange{{Path: "back.txt", File: &worktree.File{Mode: 0o100644, Content: large}}}); err != nil {
		t.Fatal(err)
	}
	if k := glob(t, filepath.Join(dir, ".git", "objects", "pack", "*.keep")); len(k) != 1 || k[0] != keeps[0] {
		t.Fatalf(".keep files after building the large blob again: %v (first %v)", k, keeps)
	}
	if n := len(packFiles(t, dir)); n != packs {
		t.Fatalf("packs after building the large blob again: %d, before %d", n, packs)
	}
	if err := objs.ReleaseLarge(back.Objects()); err != nil {
		t.Fatal(err)
	}
	blob := testgit.Git(t, dir, "rev-parse", tree+":big.txt")
	if got := testgit.Git(t, dir, "cat-file", "-s", blob); got != fmt.Sprint(len(large)) {
		t.Errorf("git reads %s bytes of the large blob", got)
	}
	f, err := objs.ReadFile(commitOf(t, objs, dir, tree), "big.txt")
	if err != nil || string(f.Content) != string(large) {
		t.Fatalf("ReadFile of the large blob: %d bytes, %v", len(f.Content), err)
	}
}

func commitOf(t *testing.T, objs *worktree.Objects, dir, tree string) string {
	t.Helper()
	c, err := commitTree(objs, tree, testgit.Git(t, dir, "rev-parse", "HEAD"), "cp", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return c
}
