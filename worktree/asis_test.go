package worktree_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/worktree"
)

// TestSnapshotStoresUnconvertibleFilesAsIs: in a workspace of every kind
// of state, an agent's .gitattributes asks for UTF-16 in files that are
// not UTF-16, and `git add -A` refuses them. The snapshot still comes:
// those files as their bytes (named in the commit, placed back after the
// checkout), a real UTF-16 file and everything else as git converts
// them; the worktree equals the workspace; the user's index and HEAD are
// untouched. A later snapshot works the same.
func TestSnapshotStoresUnconvertibleFilesAsIs(t *testing.T) {
	testgit.Env(t)
	ctx := context.Background()
	dir := messyRepo(t)
	testgit.Write(t, dir, ".gitattributes", "*.txt working-tree-encoding=UTF-16\n", 0o644)
	testgit.Write(t, dir, "notes.txt", "plain, not UTF-16\n", 0o644)
	testgit.Write(t, dir, "deep/dir/more.txt", "more\n", 0o755)
	// A real UTF-16 file (with its byte order mark) converts fine.
	utf16 := "\xff\xfeh\x00i\x00\n\x00"
	testgit.Write(t, dir, "real16.txt", utf16, 0o644)
	before := testgit.State(t, dir)

	repo, err := worktree.Discover(ctx, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	commit, err := repo.Snapshot(ctx, "base")
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	if got := testgit.State(t, dir); got != before {
		t.Fatalf("user state changed:\n%s\nwant\n%s", got, before)
	}
	asIs, err := repo.AsIs(commit)
	if err != nil {
		t.Fatal(err)
	}
	// Tracked .txt files checked out before the attributes fail too.
	for _, p := range []string{"notes.txt", "deep/dir/more.txt", "new staged.txt", "untracked/naïve file.txt"} {
		if !asIs[p] || !repo.StoredAsIs(commit, p) {
			t.Errorf("%s not stored as is: %v", p, asIs)
		}
	}
	if asIs["real16.txt"] || asIs["README.md"] || len(asIs) != 4 {
		t.Errorf("stored as is: %v", asIs)
	}
	if got := testgit.Git(t, dir, "cat-file", "blob", commit+":notes.txt"); got != "plain, not UTF-16" {
		t.Errorf("notes.txt blob = %q", got)
	}
	if got := testgit.Git(t, dir, "cat-file", "blob", commit+":real16.txt"); got != "hi" {
		t.Errorf("real16.txt blob = %q, want git's UTF-8", got)
	}
	if got := testgit.Git(t, dir, "ls-tree", commit, "deep/dir/more.txt"); !strings.HasPrefix(got, "100755 ") {
		t.Errorf("exec bit lost: %s", got)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	if err := repo.AddWorktree(ctx, wt, "prsm/abc", commit); err != nil {
		t.Fatal(err)
	}
	placed, err := repo.PlaceAsIs(wt, commit)
	if err != nil {
		t.Fatal(err)
	}
	// The binary file is not UTF-8 either: git's checkout left it as it
	// is, and so does PlaceAsIs.
	if strings.Join(placed, ",") != "deep/dir/more.txt,new staged.txt,notes.txt" {
		t.Errorf("placed %q", placed)
	}
	want := testgit.Tree(t, dir, testgit.Ignored(t, dir))
	got := testgit.Tree(t, wt, nil)
	if d := testgit.Diff(want, got); d != "" {
		t.Fatalf("worktree differs from workspace:\n%s", d)
	}
	if entries, _ := os.ReadDir(filepath.Join(wt, "deep", "dir")); len(entries) != 1 {
		t.Errorf("temp files left: %v", entries)
	}
	// Again: a later session starts too, and an ordinary commit names
	// nothing.
	time.Sleep(10 * time.Millisecond)
	if _, err := repo.Snapshot(ctx, "again"); err != nil {
		t.Fatalf("second snapshot: %v", err)
	}
	head := testgit.Git(t, dir, "rev-parse", "HEAD")
	if set, err := repo.AsIs(head); err != nil || len(set) != 0 {
		t.Errorf("HEAD's as-is files: %v %v", set, err)
	}
}

// TestSnapshotOtherFailureStands: a `git add -A` that fails for another
// reason than a conversion (a repository with no commit inside the
// workspace) still fails the snapshot, with git's own error.
func TestSnapshotOtherFailureStands(t *testing.T) {
	testgit.Env(t)
	ctx := context.Background()
	dir := testgit.Init(t, "ws")
	testgit.Commit(t, dir, "init", map[string]string{"a.txt": "a\n"})
	testgit.Write(t, dir, ".gitattributes", "*.txt working-tree-encoding=UTF-16\n", 0o644)
	testgit.Git(t, dir, "init", "-q", "sub")
	repo, err := worktree.Discover(ctx, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Snapshot(ctx, "base"); err == nil || !strings.Contains(err.Error(), "'sub/' does not have a commit checked out") {
		t.Fatalf("snapshot with an empty repository inside: %v", err)
	}
}

// TestSnapshotFailingRequiredFilter: a required filter whose clean
// command fails, and another that rewrites content, are not run at all
// (prsm runs no filter driver: filters.go): their files go in as their
// bytes through git add, while a file whose built-in encoding fails
// after them is still stored as its bytes and named.
func TestSnapshotFailingRequiredFilter(t *testing.T) {
	testgit.Env(t)
	ctx := context.Background()
	dir := testgit.Init(t, "ws")
	testgit.Commit(t, dir, "init", map[string]string{"README.md": "hi\n"})
	testgit.Git(t, dir, "config", "filter.x.clean", "false")
	testgit.Git(t, dir, "config", "filter.x.smudge", "cat")
	testgit.Git(t, dir, "config", "filter.x.required", "true")
	testgit.Git(t, dir, "config", "filter.up.clean", "tr a-z A-Z")
	testgit.Git(t, dir, "config", "filter.up.smudge", "cat")
	testgit.Write(t, dir, ".gitattributes", "*.dat filter=x\n*.up filter=up\nz.txt working-tree-encoding=UTF-16\n", 0o644)
	for _, p := range []string{"a.dat", "b.dat", "m/c.dat", "it's \"odd\".dat"} {
		testgit.Write(t, dir, p, "raw "+p+"\n", 0o644)
	}
	testgit.Write(t, dir, "z.txt", "not UTF-16\n", 0o644)
	testgit.Write(t, dir, "shout.up", "quiet\n", 0o644)
	before := testgit.State(t, dir)
	repo, err := worktree.Discover(ctx, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	commit, err := repo.Snapshot(ctx, "base")
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	set, err := repo.AsIs(commit)
	if err != nil {
		t.Fatal(err)
	}
	if len(set) != 1 || !set["z.txt"] {
		t.Fatalf("stored as is: %v", set)
	}
	if got := testgit.Git(t, dir, "cat-file", "blob", commit+":m/c.dat"); got != "raw m/c.dat" {
		t.Errorf("m/c.dat blob = %q", got)
	}
	if got := testgit.Git(t, dir, "cat-file", "blob", commit+":shout.up"); got != "quiet" {
		t.Errorf("shout.up blob = %q, want its bytes, no clean filter run", got)
	}
	if got := testgit.State(t, dir); got != before {
		t.Fatalf("user state changed")
	}
}
