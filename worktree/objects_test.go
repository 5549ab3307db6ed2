package worktree_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/worktree"
)

// openObjects opens the object store of the repository at dir.
func openObjects(t testing.TB, dir string) *worktree.Objects {
	t.Helper()
	repo, err := worktree.Discover(context.Background(), nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := repo.Objects()
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestReadFileEqualsGit: ReadFile and HasFile answer what git does for
// files, directories, paths through files, missing paths and a submodule,
// read cold and again from the tree cache.
func TestReadFileEqualsGit(t *testing.T) {
	testgit.Env(t)
	dir := testgit.Init(t, "r")
	files := map[string]string{
		"a.txt": "a\n", "d/e/f.txt": "f\n", "d/g.txt": "g\n", "d-sibling": "s\n",
		"d.txt": "dot\n", "x/only.txt": "o\n", "run.sh": "#!/bin/sh\n",
	}
	for p, c := range files {
		mode := os.FileMode(0o644)
		if p == "run.sh" {
			mode = 0o755
		}
		testgit.Write(t, dir, p, c, mode)
	}
	testgit.Symlink(t, dir, "link", "a.txt")
	testgit.Git(t, dir, "add", "-A")
	testgit.Git(t, dir, "commit", "-qm", "one")
	head := testgit.Git(t, dir, "rev-parse", "HEAD")
	testgit.Git(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+head+",mod")
	testgit.Git(t, dir, "commit", "-qm", "with a submodule")
	commit := testgit.Git(t, dir, "rev-parse", "HEAD")

	objs := openObjects(t, dir)
	want := map[string]uint32{"a.txt": 0o100644, "d/e/f.txt": 0o100644, "d/g.txt": 0o100644, "d-sibling": 0o100644,
		"d.txt": 0o100644, "x/only.txt": 0o100644, "run.sh": 0o100755, "link": 0o120000}
	missing := []string{"d", "d/e", "x", "a.txt/x", "d/e/f.txt/z", "nope", "d/nope", "d/e/nope", "mod", "D.txt", "d-sibling/x"}
	for round := 0; round < 2; round++ {
		for p, mode := range want {
			f, err := objs.ReadFile(commit, p)
			if err != nil {
				t.Fatalf("round %d: ReadFile %s: %v", round, p, err)
			}
			gitContent := testgit.Git(t, dir, "cat-file", "-p", commit+":"+p)
			if f.Mode != mode || string(f.Content) != gitContent && string(f.Content) != gitContent+"\n" {
				t.Errorf("round %d: %s = %o %q, git has %o %q", round, p, f.Mode, f.Content, mode, gitContent)
			}
			if ok, err := objs.HasFile(commit, p); !ok || err != nil {
				t.Errorf("round %d: HasFile %s = %v %v", round, p, ok, err)
			}
		}
		for _, p := range missing {
			if _, err := objs.ReadFile(commit, p); !errors.Is(err, worktree.ErrNoFile) {
				t.Errorf("round %d: ReadFile %s: %v, want ErrNoFile", round, p, err)
			}
			if ok, err := objs.HasFile(commit, p); ok || err != nil {
				t.Errorf("round %d: HasFile %s = %v %v, want false", round, p, ok, err)
			}
		}
	}
}

// TestReadFileManyEntries: a directory of many entries, looked up by
// binary search, finds each of them and nothing else.
func TestReadFileManyEntries(t *testing.T) {
	testgit.Env(t)
	dir := testgit.Init(t, "r")
	for i := 0; i < 300; i++ {
		n := strconv.Itoa(i)
		testgit.Write(t, dir, "big/f"+n, n, 0o644)
		if i%7 == 0 {
			testgit.Write(t, dir, "big/f"+n+".d/x", "x"+n, 0o644)
		}
	}
	testgit.Git(t, dir, "add", "-A")
	testgit.Git(t, dir, "commit", "-qm", "many")
	commit := testgit.Git(t, dir, "rev-parse", "HEAD")
	objs := openObjects(t, dir)
	for i := 0; i < 300; i++ {
		n := strconv.Itoa(i)
		if f, err := objs.ReadFile(commit, "big/f"+n); err != nil || string(f.Content) != n {
			t.Fatalf("big/f%s: %q %v", n, f.Content, err)
		}
		ok, _ := objs.HasFile(commit, "big/f"+n+".d/x")
		if ok != (i%7 == 0) {
			t.Errorf("big/f%s.d/x: HasFile = %v", n, ok)
		}
		if ok, _ := objs.HasFile(commit, "big/f"+n+"x"); ok {
			t.Errorf("big/f%sx found", n)
		}
	}
}

// Extensions that leave objects and refs as git always stored them
// (worktreeConfig, which sparse-checkout sets; partialClone;
// preciousObjects) do not keep Objects from reading; SHA-256 object
// names, which go-git cannot read, are refused with a reason.
func TestObjectsRepositoryExtensions(t *testing.T) {
	testgit.Env(t)
	dir := testgit.Init(t, "r")
	testgit.Commit(t, dir, "one", map[string]string{"a.txt": "a\n"})
	testgit.Git(t, dir, "config", "core.repositoryFormatVersion", "1")
	testgit.Git(t, dir, "config", "extensions.worktreeConfig", "true")
	testgit.Git(t, dir, "config", "extensions.preciousObjects", "true")
	testgit.Git(t, dir, "config", "extensions.partialClone", "origin")
	f, err := openObjects(t, dir).ReadFile(testgit.Git(t, dir, "rev-parse", "HEAD"), "a.txt")
	if err != nil || string(f.Content) != "a\n" {
		t.Fatalf("ReadFile = %q, %v", f.Content, err)
	}

	sha := t.TempDir()
	testgit.Git(t, sha, "init", "-q", "--object-format=sha256")
	testgit.Commit(t, sha, "one", map[string]string{"a.txt": "a\n"})
	repo, err := worktree.Discover(context.Background(), nil, sha)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Objects(); err == nil || !strings.Contains(err.Error(), "SHA-1 repositories only") {
		t.Fatalf("Objects of a SHA-256 repository: %v", err)
	}
}
