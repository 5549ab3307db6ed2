package worktree_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/worktree"
)

// manyFiles is n changes of new files in a few directories, one of them
// large enough that its size header takes several bytes, one empty.
func manyFiles(n int, tag string) []worktree.TreeChange {
	var changes []worktree.TreeChange
	for i := 0; i < n; i++ {
		content := []byte(fmt.Sprintf("file %d %s\n", i, tag))
		switch i {
		case 0:
			content = bytes.Repeat([]byte("big line of text "+tag+"\n"), 20000)
		case 1:
			content = nil
		}
		changes = append(changes, worktree.TreeChange{Path: fmt.Sprintf("d%d/e%d/f%d.txt", i%4, i%9, i),
			File: &worktree.File{Mode: 0o100644, Content: content}})
	}
	return changes
}

// newOnes is paths less those in old.
func newOnes(paths, old []string) []string {
	var out []string
	for _, p := range paths {
		found := false
		for _, o := range old {
			found = found || o == p
		}
		if !found {
			out = append(out, p)
		}
	}
	return out
}

func glob(t testing.TB, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// packFiles lists the repository's packs (their .pack files).
func packFiles(t testing.TB, dir string) []string {
	t.Helper()
	return glob(t, filepath.Join(dir, ".git", "objects", "pack", "pack-*.pack"))
}

// TestWriteKeptPacksAFlush: a flush's objects go into one pack git reads
// and verifies (no loose object, no temp file), kept by a .keep file
// that names prsm until Release; prsm reads them back through the same
// Objects at once. A `git gc --prune=now` before the ref is set keeps
// them; one after a Release without a ref deletes them.
func TestWriteKeptPacksAFlush(t *testing.T) {
	testgit.Env(t)
	dir := testgit.Init(t, "r")
	testgit.Write(t, dir, "a.txt", "a\n", 0o644)
	testgit.Git(t, dir, "add", "a.txt")
	testgit.Git(t, dir, "commit", "-qm", "one")
	testgit.Git(t, dir, "gc", "-q", "--prune=now")
	objs := openObjects(t, dir)
	objDir := filepath.Join(dir, ".git", "objects")
	// A read of the packed commit before the new pack exists: go-git's
	// index of packs is loaded then, and the reads below must find the
	// new pack all the same.
	if f, err := objs.ReadFile(testgit.Git(t, dir, "rev-parse", "HEAD"), "a.txt"); err != nil || string(f.Content) != "a\n" {
		t.Fatalf("read of a.txt = %q, %v", f.Content, err)
	}
	before := glob(t, filepath.Join(objDir, "pack", "pack-*"))

	b := objs.NewBatch()
	tree, err := b.BuildTree("", manyFiles(150, "packed"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := b.Commit(tree, "", "many", time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	all := b.Objects()
	kept, err := objs.WriteKept(all)
	if err != nil {
		t.Fatal(err)
	}
	// git gc made one pack and its index; the flush, one more of each,
	// and its .keep.
	fresh := newOnes(glob(t, filepath.Join(objDir, "pack", "pack-*")), before)
	if len(before) != 2 || len(fresh) != 3 || fresh[0] != strings.TrimSuffix(fresh[1], ".keep")+".idx" ||
		fresh[2] != strings.TrimSuffix(fresh[1], ".keep")+".pack" {
		t.Fatalf("new pack files %v (before %v)", fresh, before)
	}
	idx, keep := fresh[0], fresh[1]
	if b, err := os.ReadFile(keep); err != nil || !strings.HasPrefix(string(b), "prsm checkpoint objects of ") {
		t.Fatalf(".keep file: %q %v", b, err)
	}
	if tmp := glob(t, filepath.Join(objDir, "pack", "tmp_*")); len(tmp) != 0 {
		t.Fatalf("temp files left: %v", tmp)
	}
	for _, ob := range all {
		h := ob.Hash.String()
		if _, err := os.Lstat(filepath.Join(objDir, h[:2], h[2:])); err == nil {
			t.Fatalf("object %s written loose too", h)
		}
	}
	verify := testgit.Git(t, dir, "verify-pack", "-v", idx)
	if !strings.Contains(verify, fmt.Sprintf("non delta: %d objects", len(all))) {
		t.Fatalf("verify-pack:\n%s", verify)
	}
	for path, want := range map[string]string{"d0/e0/f0.txt": strings.Repeat("big line of text packed\n", 20000), "d1/e1/f1.txt": "", "d2/e2/f2.txt": "file 2 packed\n"} {
		f, err := objs.ReadFile(c, path)
		if err != nil || string(f.Content) != want {
			t.Fatalf("ReadFile(%s) = %d bytes, %v", path, len(f.Content), err)
		}
	}
	// No ref reaches them yet: the .keep is all that holds them.
	testgit.Git(t, dir, "gc", "-q", "--prune=now")
	if got := testgit.Git(t, dir, "cat-file", "-p", c+":d3/e7/f7.txt"); got != "file 7 packed" {
		t.Fatalf("blob through git after a gc = %q", got)
	}
	if err := objs.SetRef("refs/prsm/s/head", c); err != nil {
		t.Fatal(err)
	}
	if err := kept.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(keep); err == nil {
		t.Fatal(".keep file left by Release")
	}
	testgit.Git(t, dir, "fsck", "--strict", "--no-dangling")
	if n := len(strings.Split(testgit.Git(t, dir, "ls-tree", "-r", "--name-only", c), "\n")); n != 150 {
		t.Fatalf("ls-tree lists %d files, want 150", n)
	}

	// Released with no ref to them, objects are garbage to git's gc: the
	// .keep is what held the others.
	b = objs.NewBatch()
	lost, err := b.BuildTree("", []worktree.TreeChange{{Path: "lost.txt", File: &worktree.File{Mode: 0o100644, Content: []byte("no ref\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := objs.WriteObjects(b.Objects()); err != nil {
		t.Fatal(err)
	}
	if got := testgit.Git(t, dir, "cat-file", "-t", lost); got != "tree" {
		t.Fatalf("released tree: %q", got)
	}
	testgit.Git(t, dir, "gc", "-q", "--prune=now")
	if err := exec.Command("git", "-C", dir, "cat-file", "-e", lost).Run(); err == nil {
		t.Errorf("an unreachable released object survived git gc --prune=now: is the test's gc real?")
	}
	if got := testgit.Git(t, dir, "cat-file", "-p", c+":d2/e2/f2.txt"); got != "file 2 packed" {
		t.Fatalf("blob through git after the last gc = %q", got)
	}
	// git's gc took prsm's packs in and deleted them; prsm reads on,
	// from its open file and, once the next flush forgot it, from git's
	// pack.
	if f, err := objs.ReadFile(c, "d2/e2/f2.txt"); err != nil || string(f.Content) != "file 2 packed\n" {
		t.Fatalf("ReadFile after git gc = %q, %v", f.Content, err)
	}
	b = objs.NewBatch()
	if _, err := b.BuildTree("", []worktree.TreeChange{{Path: "next.txt", File: &worktree.File{Mode: 0o100644, Content: []byte("next\n")}}}); err != nil {
		t.Fatal(err)
	}
	if err := objs.WriteObjects(b.Objects()); err != nil {
		t.Fatal(err)
	}
	if f, err := objs.ReadFile(c, "d3/e7/f7.txt"); err != nil || string(f.Content) != "file 7 packed\n" {
		t.Fatalf("ReadFile after the next flush = %q, %v", f.Content, err)
	}
	if n := len(packFiles(t, dir)); n != 2 {
		t.Errorf("packs after git gc and a flush: %d, want git's and the flush's", n)
	}
}

// TestFlushesFoldIntoFewPacks: many small flushes, each reached by a ref
// as the flusher sets them, leave a few packs, not one each: each flush
// folds prsm's smaller packs into its own. Every object stays readable,
// by git and by a new Objects, and fsck finds nothing wrong.
func TestFlushesFoldIntoFewPacks(t *testing.T) {
	testgit.Env(t)
	dir := testgit.Init(t, "r")
	testgit.Write(t, dir, "a.txt", "a\n", 0o644)
	testgit.Git(t, dir, "add", "a.txt")
	testgit.Git(t, dir, "commit", "-qm", "one")
	objs := openObjects(t, dir)
	head := testgit.Git(t, dir, "rev-parse", "HEAD")
	tree := testgit.Git(t, dir, "rev-parse", "HEAD^{tree}")
	parent := head
	const flushes = 64
	for i := 0; i < flushes; i++ {
		b := objs.NewBatch()
		var err error
		if tree, err = b.BuildTree(tree, []worktree.TreeChange{
			{Path: fmt.Sprintf("d%d/f%d.txt", i%3, i), File: &worktree.File{Mode: 0o100644, Content: []byte(fmt.Sprintf("flush %d\n", i))}},
		}); err != nil {
			t.Fatal(err)
		}
		if parent, err = b.Commit(tree, parent, fmt.Sprint("cp ", i), time.Unix(1700000000+int64(i), 0)); err != nil {
			t.Fatal(err)
		}
		kept, err := objs.WriteKept(b.Objects())
		if err != nil {
			t.Fatal(err)
		}
		if err := objs.SetRef("refs/prsm/s/head", parent); err != nil {
			t.Fatal(err)
		}
		if err := kept.Release(); err != nil {
			t.Fatal(err)
		}
	}
	n := len(packFiles(t, dir))
	t.Logf("%d flushes left %d packs", flushes, n)
	if n > 7 { // log2(64) + 1
		t.Errorf("%d flushes left %d packs", flushes, n)
	}
	if k := glob(t, filepath.Join(dir, ".git", "objects", "pack", "*.keep")); len(k) != 0 {
		t.Errorf(".keep files left: %v", k)
	}
	testgit.Git(t, dir, "fsck", "--strict", "--no-dangling")
	fresh := openObjects(t, dir)
	for i := 0; i < flushes; i++ {
		want := fmt.Sprintf("flush %d\n", i)
		for _, o := range []*worktree.Objects{objs, fresh} {
			f, err := o.ReadFile(parent, fmt.Sprintf("d%d/f%d.txt", i%3, i))
			if err != nil || string(f.Content) != want {
				t.Fatalf("flush %d: %q, %v", i, f.Content, err)
			}
		}
	}
	if got := testgit.Git(t, dir, "rev-list", "--count", parent); got != fmt.Sprint(flushes+1) {
		t.Errorf("rev-list --count = %s", got)
	}
}

// TestReleaseKeepsAtStart: a start releases the packs this workspace's
// prsm left kept (a crash between the objects and the refs), and no
// other .keep file: git's own, or another workspace's.
func TestReleaseKeepsAtStart(t *testing.T) {
	testgit.Env(t)
	dir := testgit.Init(t, "r")
	testgit.Write(t, dir, "a.txt", "a\n", 0o644)
	testgit.Git(t, dir, "add", "a.txt")
	testgit.Git(t, dir, "commit", "-qm", "one")
	objs := openObjects(t, dir)
	b := objs.NewBatch()
	if _, err := b.BuildTree("", manyFiles(3, "crash")); err != nil {
		t.Fatal(err)
	}
	if _, err := objs.WriteKept(b.Objects()); err != nil {
		t.Fatal(err)
	}
	packDir := filepath.Join(dir, ".git", "objects", "pack")
	theirs := map[string]string{"pack-0000000000000000000000000000000000000001.keep": "fetch-pack 12 on host\n",
		"pack-0000000000000000000000000000000000000002.keep": "prsm checkpoint objects of /another/workspace\n"}
	for name, content := range theirs {
		if err := os.WriteFile(filepath.Join(packDir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n, err := openObjects(t, dir).ReleaseKeeps()
	if err != nil || n != 1 {
		t.Fatalf("ReleaseKeeps = %d, %v", n, err)
	}
	left := glob(t, filepath.Join(packDir, "*.keep"))
	if len(left) != 2 {
		t.Fatalf(".keep files left: %v", left)
	}
	for _, k := range left {
		if _, ok := theirs[filepath.Base(k)]; !ok {
			t.Errorf("prsm's .keep left: %s", k)
		}
	}
}

// BenchmarkWriteObjects: a flush of 500 new objects (a Bash call that
// changed 400 files), and of 5 (an edit deep in a tree), each into a
// kept pack released at once.
func BenchmarkWriteObjects(b *testing.B) {
	for _, files := range []int{400, 2} {
		b.Run(fmt.Sprint(files, "files"), func(b *testing.B) {
			testgit.Env(b)
			dir := testgit.Init(b, "r")
			objs := openObjects(b, dir)
			for i := 0; i < b.N; i++ {
				batch := objs.NewBatch()
				if _, err := batch.BuildTree("", manyFiles(files+2, fmt.Sprint(i))[2:]); err != nil {
					b.Fatal(err)
				}
				if err := objs.WriteObjects(batch.Objects()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestWriteLooseGitReads: WriteLoose's objects are loose objects git reads
// (a tree of files in directories, and a commit of it), with no pack
// written; an object already there is left as it was.
func TestWriteLooseGitReads(t *testing.T) {
	testgit.Env(t)
	dir := testgit.Init(t, "ws")
	testgit.Commit(t, dir, "init", map[string]string{"a.txt": "a\n"})
	objs := openObjects(t, dir)
	objDir := filepath.Join(dir, ".git", "objects")
	aBlob := testgit.Git(t, dir, "rev-parse", "HEAD:a.txt")
	aPath := filepath.Join(objDir, aBlob[:2], aBlob[2:])
	aBefore, err := os.Stat(aPath)
	if err != nil {
		t.Fatal(err)
	}
	b := objs.NewBatch()
	tree, err := b.BuildTree("", append(manyFiles(5, "loose"),
		worktree.TreeChange{Path: "a.txt", File: &worktree.File{Mode: 0o100644, Content: []byte("a\n")}}))
	if err != nil {
		t.Fatal(err)
	}
	c, err := b.Commit(tree, "", "loose", time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := objs.WriteLoose(b.Objects()); err != nil {
		t.Fatal(err)
	}
	if packs := glob(t, filepath.Join(objDir, "pack", "pack-*")); len(packs) != 0 {
		t.Errorf("WriteLoose wrote packs: %v", packs)
	}
	testgit.Git(t, dir, "fsck", "--no-dangling")
	want := testgit.Git(t, dir, "ls-tree", "-r", "--name-only", c)
	if n := len(strings.Fields(want)); n != 6 {
		t.Fatalf("the commit's tree lists %d files:\n%s", n, want)
	}
	for _, f := range manyFiles(5, "loose") {
		if got := testgit.Git(t, dir, "cat-file", "blob", c+":"+f.Path); got != strings.TrimRight(string(f.File.Content), "\n") {
			t.Errorf("%s = %q, want %q", f.Path, got, f.File.Content)
		}
	}
	if aAfter, err := os.Stat(aPath); err != nil || !os.SameFile(aBefore, aAfter) || !aAfter.ModTime().Equal(aBefore.ModTime()) {
		t.Errorf("the object git had was rewritten: %v", err)
	}
}
