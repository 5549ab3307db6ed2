package worktree_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/worktree"
)

// TestIndexOfTreeIsReadTrees: the index IndexOfTree writes is, entry for
// entry and stat for stat, the one git read-tree -m -i makes from the
// same index and tree: the user's staged change, an entry the tree
// changes, one it deletes, one it adds, an executable, a symlink and a
// submodule, in directories whose names sort around "/".
func TestIndexOfTreeIsReadTrees(t *testing.T) {
	testgit.Env(t)
	dir := testgit.Init(t, "ws")
	testgit.Commit(t, dir, "init", map[string]string{
		"a.txt": "a\n", "a/b.txt": "b\n", "a-c.txt": "c\n", "a0/d.txt": "d\n", "gone.txt": "g\n", "x/y/z.txt": "z\n",
	})
	testgit.Write(t, dir, "run.sh", "#!/bin/sh\n", 0o755)
	testgit.Symlink(t, dir, "link", "a.txt")
	sub := testgit.Init(t, "sub")
	testgit.Commit(t, sub, "sub", map[string]string{"s": "s\n"})
	testgit.Git(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "mod")
	testgit.Git(t, dir, "add", "-A")
	testgit.Git(t, dir, "commit", "-qm", "more")
	testgit.Write(t, dir, "a/b.txt", "staged\n", 0o644)
	testgit.Git(t, dir, "add", "a/b.txt")
	// The tree: HEAD with a-c.txt changed, gone.txt deleted, new/n.txt added.
	testgit.Write(t, dir, "a-c.txt", "changed\n", 0o644)
	testgit.Write(t, dir, "new/n.txt", "n\n", 0o644)
	tmpIdx := filepath.Join(t.TempDir(), "build")
	gitIn(t, dir, tmpIdx, "read-tree", "HEAD")
	gitIn(t, dir, tmpIdx, "add", "a-c.txt", "new/n.txt")
	gitIn(t, dir, tmpIdx, "rm", "-q", "--cached", "gone.txt")
	tree := gitIn(t, dir, tmpIdx, "write-tree")

	objs := openObjects(t, dir)
	src := filepath.Join(dir, ".git", "index")
	ours := filepath.Join(t.TempDir(), "ours")
	if err := objs.IndexOfTree(src, ours, tree); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(t.TempDir(), "theirs")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(theirs, b, 0o600)
	gitIn(t, dir, theirs, "read-tree", "-m", "-i", tree)
	list := func(idx string) string { return gitIn(t, dir, idx, "ls-files", "-s", "--debug") }
	if got, want := list(ours), list(theirs); got != want {
		t.Fatalf("IndexOfTree:\n%s\nread-tree -m -i:\n%s", got, want)
	}
	if !strings.Contains(list(ours), "ctime: 0:0") || !strings.Contains(list(ours), "size: 2\t") {
		t.Fatalf("the index has no entry with stat data, or none without:\n%s", list(ours))
	}
	if got := gitIn(t, dir, ours, "write-tree"); got != tree {
		t.Errorf("the index's tree is %s, want %s", got, tree)
	}
	// An unmerged index is left to git.
	blob := testgit.Git(t, dir, "rev-parse", "HEAD:a.txt")
	gitInStdin(t, dir, theirs, "100644 "+blob+" 1\ta.txt\n100644 "+blob+" 2\ta.txt\n", "update-index", "--index-info")
	if err := objs.IndexOfTree(theirs, filepath.Join(t.TempDir(), "x"), tree); !errors.Is(err, worktree.ErrIndexNotPlain) {
		t.Errorf("IndexOfTree of an unmerged index: %v, want ErrIndexNotPlain", err)
	}
}

// gitIn runs git in dir with the index file idx.
func gitIn(t *testing.T, dir, idx string, args ...string) string {
	t.Helper()
	return gitInStdin(t, dir, idx, "", args...)
}

// gitInStdin is gitIn with stdin; idx "" is the repository's own index.
func gitInStdin(t *testing.T, dir, idx, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	if idx != "" {
		cmd.Env = append(cmd.Env, "GIT_INDEX_FILE="+idx)
	}
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimRight(string(out), "\n")
}
