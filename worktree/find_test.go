package worktree_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/worktree"
)

// TestFindAgreesWithDiscover: where Find answers without git, its answer
// is Discover's (root, git directories, identity); where the layout is
// not plain (a linked worktree's .git file, core.worktree, an include, a
// bare repository on the way up, inside .git, a ceiling) it leaves the
// answer to Discover.
func TestFindAgreesWithDiscover(t *testing.T) {
	testgit.Env(t)
	ctx := context.Background()
	ws := testgit.Init(t, "ws")
	testgit.Commit(t, ws, "init", map[string]string{"a/b/c.txt": "c\n"})
	inner := filepath.Join(ws, "a", "inner")
	testgit.Git(t, ws, "init", "-q", inner)
	linked := filepath.Join(t.TempDir(), "linked")
	testgit.Git(t, ws, "worktree", "add", "-q", linked)
	moved := testgit.Init(t, "moved")
	testgit.Git(t, moved, "config", "core.worktree", moved)
	included := testgit.Init(t, "included")
	testgit.Git(t, included, "config", "include.path", "/dev/null")
	bareParent := testgit.Init(t, "bareparent")
	bare := filepath.Join(bareParent, "sub", "bare.git")
	testgit.Git(t, bareParent, "init", "-q", "--bare", bare)
	os.MkdirAll(filepath.Join(bare, "x"), 0o755)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(filepath.Join(ws, "a"), link); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		dir  string
		find bool
	}{
		{ws, true},
		{filepath.Join(ws, "a", "b"), true},
		{link, true},
		{inner, true},
		{filepath.Join(ws, ".git"), false},
		{filepath.Join(ws, ".git", "refs"), false},
		{linked, false},
		{moved, false},
		{included, false},
		{filepath.Join(bare, "x"), false},
		{t.TempDir(), false},
	} {
		got, ok := worktree.Find(nil, tc.dir)
		if ok != tc.find {
			t.Errorf("Find(%s) ok = %v, want %v", tc.dir, ok, tc.find)
			continue
		}
		if !ok {
			continue
		}
		want, err := worktree.Discover(ctx, nil, tc.dir)
		if err != nil {
			t.Fatalf("Discover(%s): %v", tc.dir, err)
		}
		if got.Root != want.Root || got.GitDir != want.GitDir || got.CommonDir != want.CommonDir || got.Identity != want.Identity {
			t.Errorf("Find(%s) = %s %s %s %s, Discover = %s %s %s %s", tc.dir,
				got.Root, got.GitDir, got.CommonDir, got.Identity, want.Root, want.GitDir, want.CommonDir, want.Identity)
		}
	}
	t.Setenv("GIT_CEILING_DIRECTORIES", ws)
	if _, ok := worktree.Find(nil, filepath.Join(ws, "a")); ok {
		t.Errorf("Find answered with GIT_CEILING_DIRECTORIES set")
	}
}
