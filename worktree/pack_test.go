package worktree_test

import (
	"bytes"
	"fmt"
	"os"
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

func glob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestWriteObjectsPacksALargeFlush: PackMin new objects or more go into one
// pack git reads and verifies (no loose object, no temp file), and prsm
// reads them back through the same Objects; a smaller flush stays loose.
func TestWriteObjectsPacksALargeFlush(t *testing.T) {
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
	if len(all) < worktree.PackMin {
		t.Fatalf("only %d objects", len(all))
	}
	if err := objs.WriteObjects(all); err != nil {
		t.Fatal(err)
	}
	// git gc made one pack and its index; the flush, one more of each.
	fresh := newOnes(glob(t, filepath.Join(objDir, "pack", "pack-*")), before)
	if len(before) != 2 || len(fresh) != 2 || fresh[0] != strings.TrimSuffix(fresh[1], ".pack")+".idx" {
		t.Fatalf("new pack files %v (before %v)", fresh, before)
	}
	idx := fresh[0]
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
	if err := objs.SetRef("refs/prsm/s/head", c); err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, dir, "fsck", "--strict", "--no-dangling")
	if got := testgit.Git(t, dir, "cat-file", "-p", c+":d3/e7/f7.txt"); got != "file 7 packed" {
		t.Fatalf("blob through git = %q", got)
	}
	if n := len(strings.Split(testgit.Git(t, dir, "ls-tree", "-r", "--name-only", c), "\n")); n != 150 {
		t.Fatalf("ls-tree lists %d files, want 150", n)
	}
	for path, want := range map[string]string{"d0/e0/f0.txt": strings.Repeat("big line of text packed\n", 20000), "d1/e1/f1.txt": "", "d2/e2/f2.txt": "file 2 packed\n"} {
		f, err := objs.ReadFile(c, path)
		if err != nil || string(f.Content) != want {
			t.Fatalf("ReadFile(%s) = %d bytes, %v", path, len(f.Content), err)
		}
	}

	// A small flush on top: loose, and no second pack.
	b = objs.NewBatch()
	small, err := b.BuildTree(tree, []worktree.TreeChange{{Path: "d0/e0/f0.txt", File: &worktree.File{Mode: 0o100644, Content: []byte("small\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := objs.WriteObjects(b.Objects()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(objDir, small[:2], small[2:])); err != nil {
		t.Fatalf("small flush not loose: %v", err)
	}
	if packs := glob(t, filepath.Join(objDir, "pack", "pack-*.pack")); len(packs) != 2 {
		t.Fatalf("packs after a small flush: %v", packs)
	}
	if got := testgit.Git(t, dir, "cat-file", "-p", small+":d0/e0/f0.txt"); got != "small" {
		t.Fatalf("small blob = %q", got)
	}
}

// BenchmarkWriteObjects: a flush of 500 new objects (a Bash call that
// changed 400 files), as loose objects and as one pack.
func BenchmarkWriteObjects(b *testing.B) {
	for _, mode := range []string{"loose", "pack"} {
		b.Run(mode, func(b *testing.B) {
			testgit.Env(b)
			was := worktree.PackMin
			defer func() { worktree.PackMin = was }()
			if mode == "loose" {
				worktree.PackMin = 1 << 30
			}
			dir := testgit.Init(b, "r")
			objs := openObjects(b, dir)
			for i := 0; i < b.N; i++ {
				batch := objs.NewBatch()
				if _, err := batch.BuildTree("", manyFiles(400, fmt.Sprint(i))[2:]); err != nil {
					b.Fatal(err)
				}
				if err := objs.WriteObjects(batch.Objects()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
