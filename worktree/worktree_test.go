package worktree_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/worktree"
)

// messyRepo builds a workspace with every kind of state a user has: commits,
// staged and unstaged edits, staged and unstaged deletions, untracked and
// ignored files, exec bits, symlinks and odd names.
func messyRepo(t *testing.T) string {
	t.Helper()
	dir := testgit.Init(t, "my repo ü")
	testgit.Write(t, dir, "README.md", "hello\n", 0o644)
	testgit.Write(t, dir, "src/main.go", "package main\n", 0o644)
	testgit.Write(t, dir, "run.sh", "#!/bin/sh\necho hi\n", 0o755)
	testgit.Write(t, dir, "gone.txt", "bye\n", 0o644)
	testgit.Write(t, dir, "staged-gone.txt", "bye\n", 0o644)
	testgit.Write(t, dir, ".gitignore", "*.log\nbuild/\n.env\n", 0o644)
	testgit.Symlink(t, dir, "link-to-readme", "README.md")
	testgit.Git(t, dir, "add", "-A")
	testgit.Git(t, dir, "commit", "-qm", "first")
	// staged change, then a further unstaged change on the same file
	testgit.Write(t, dir, "README.md", "hello\nstaged\n", 0o644)
	testgit.Git(t, dir, "add", "README.md")
	testgit.Write(t, dir, "README.md", "hello\nstaged\nunstaged\n", 0o644)
	testgit.Write(t, dir, "src/main.go", "package main\n\nfunc main() {}\n", 0o644)
	testgit.Write(t, dir, "new staged.txt", "staged new\n", 0o644)
	testgit.Git(t, dir, "add", "new staged.txt")
	testgit.Write(t, dir, "untracked/naïve file.txt", "untracked\x00binary\xff", 0o644)
	testgit.Write(t, dir, "tool.py", "print(1)\n", 0o755)
	testgit.Symlink(t, dir, "dangling", "does/not/exist")
	testgit.Write(t, dir, "debug.log", "ignored\n", 0o644)
	testgit.Write(t, dir, "build/out.bin", "ignored\n", 0o644)
	testgit.Write(t, dir, ".env", "SECRET=1\n", 0o600)
	if err := os.Remove(filepath.Join(dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, dir, "rm", "-q", "staged-gone.txt")
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestSnapshotWorktreeMatchesWorkspace(t *testing.T) {
	testgit.Env(t)
	ctx := context.Background()
	dir := messyRepo(t)
	before := testgit.State(t, dir)

	repo, err := worktree.Discover(ctx, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	commit, err := repo.Snapshot(ctx, "base")
	if err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	if err := repo.AddWorktree(ctx, wt, "prsm/abc", commit); err != nil {
		t.Fatal(err)
	}
	if got, want := testgit.State(t, dir), before; got != want {
		t.Fatalf("user state changed:\n%s\nwant\n%s", got, want)
	}
	want := testgit.Tree(t, dir, testgit.Ignored(t, dir))
	got := testgit.Tree(t, wt, nil)
	if d := testgit.Diff(want, got); d != "" {
		t.Fatalf("worktree differs from workspace:\n%s", d)
	}
	for _, p := range []string{"debug.log", "build/out.bin", ".env"} {
		if _, ok := got[p]; ok {
			t.Errorf("ignored file %s copied into worktree", p)
		}
	}
	if got["run.sh"] == "" || !strings.HasPrefix(got["tool.py"], "111 ") || !strings.HasPrefix(got["run.sh"], "0 ") {
		t.Errorf("exec bits not kept: run.sh=%q tool.py=%q", got["run.sh"], got["tool.py"])
	}
	if got["link-to-readme"] != "link README.md" || got["dangling"] != "link does/not/exist" {
		t.Errorf("symlinks not kept: %q %q", got["link-to-readme"], got["dangling"])
	}
	if b := testgit.Git(t, wt, "rev-parse", "--abbrev-ref", "HEAD"); b != "prsm/abc" {
		t.Errorf("worktree branch = %q", b)
	}
	if parent := testgit.Git(t, dir, "rev-parse", commit+"^"); parent != testgit.Git(t, dir, "rev-parse", "HEAD") {
		t.Errorf("base parent %s is not HEAD", parent)
	}
	if s := testgit.Git(t, wt, "status", "--porcelain"); s != "" {
		t.Errorf("fresh worktree is dirty:\n%s", s)
	}

	if err := repo.RemoveWorktree(ctx, wt, "prsm/abc"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(wt); !os.IsNotExist(err) {
		t.Errorf("worktree dir still there: %v", err)
	}
	if list := testgit.Git(t, dir, "worktree", "list", "--porcelain"); strings.Contains(list, "prsm/abc") || strings.Contains(list, wt) {
		t.Errorf("worktree still listed:\n%s", list)
	}
	if b := testgit.Git(t, dir, "branch", "--list", "prsm/*"); b != "" {
		t.Errorf("branch left behind: %q", b)
	}
	if got, want := testgit.State(t, dir), before; got != want {
		t.Fatalf("user state changed by removal")
	}
}

func TestSnapshotRepositoryWithoutCommits(t *testing.T) {
	testgit.Env(t)
	ctx := context.Background()
	dir := testgit.Init(t, "empty")
	testgit.Write(t, dir, "a.txt", "a\n", 0o644)
	testgit.Write(t, dir, "staged.txt", "s\n", 0o644)
	testgit.Git(t, dir, "add", "staged.txt")
	before := testgit.State(t, dir)
	repo, err := worktree.Discover(ctx, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := repo.Head(ctx); err != nil || h != "" {
		t.Fatalf("Head of empty repo = %q, %v", h, err)
	}
	commit, err := repo.Snapshot(ctx, "base")
	if err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	if err := repo.AddWorktree(ctx, wt, "prsm/e1", commit); err != nil {
		t.Fatal(err)
	}
	if d := testgit.Diff(testgit.Tree(t, dir, nil), testgit.Tree(t, wt, nil)); d != "" {
		t.Fatal(d)
	}
	if got := testgit.State(t, dir); got != before {
		t.Fatalf("user state changed:\n%s\nwant\n%s", got, before)
	}
	// Completely empty: no files, no index.
	empty := testgit.Init(t, "void")
	r2, err := worktree.Discover(ctx, nil, empty)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Snapshot(ctx, "base"); err != nil {
		t.Fatalf("empty repo snapshot: %v", err)
	}
}

func TestWorktreeInclude(t *testing.T) {
	testgit.Env(t)
	ctx := context.Background()
	dir := messyRepo(t)
	testgit.Write(t, dir, ".worktreeinclude", "# secrets\n.env\nconfig/*.local\n", 0o644)
	testgit.Write(t, dir, "config/app.local", "local\n", 0o644)
	testgit.Write(t, dir, ".gitignore", "*.log\nbuild/\n.env\n*.local\n", 0o644)
	repo, err := worktree.Discover(ctx, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	commit, err := repo.Snapshot(ctx, "base")
	if err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	if err := repo.AddWorktree(ctx, wt, "prsm/inc", commit); err != nil {
		t.Fatal(err)
	}
	copied, err := repo.CopyIncluded(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(copied, ","), ".env,config/app.local"; got != want {
		t.Errorf("copied %q, want %q", got, want)
	}
	b, err := os.ReadFile(filepath.Join(wt, ".env"))
	if err != nil || string(b) != "SECRET=1\n" {
		t.Errorf(".env = %q, %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(wt, ".env")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf(".env mode: %v %v", fi.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(wt, "debug.log")); !os.IsNotExist(err) {
		t.Errorf("debug.log copied though not included")
	}
}

func TestDiscover(t *testing.T) {
	testgit.Env(t)
	ctx := context.Background()
	dir := testgit.Init(t, "repo")
	testgit.Write(t, dir, "sub/x", "x", 0o644)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	a, err := worktree.Discover(ctx, nil, filepath.Join(dir, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := worktree.Discover(ctx, nil, link)
	if err != nil {
		t.Fatal(err)
	}
	if a.Identity != b.Identity || a.Root != b.Root {
		t.Errorf("symlinked path maps elsewhere: %s %s vs %s %s", a.Identity, a.Root, b.Identity, b.Root)
	}
	if !strings.HasPrefix(a.Identity, "repo-") || len(a.Identity) != len("repo-")+8 {
		t.Errorf("identity %q not <dirname>-<hash8>", a.Identity)
	}
	other := testgit.Init(t, "repo")
	c, err := worktree.Discover(ctx, nil, other)
	if err != nil {
		t.Fatal(err)
	}
	if c.Identity == a.Identity {
		t.Errorf("two repositories share identity %s", a.Identity)
	}

	if _, err := worktree.Discover(ctx, nil, t.TempDir()); !errors.Is(err, worktree.ErrNotRepo) {
		t.Errorf("plain dir: %v, want ErrNotRepo", err)
	}
	bare := filepath.Join(t.TempDir(), "bare.git")
	testgit.Git(t, filepath.Dir(bare), "init", "-q", "--bare", bare)
	if _, err := worktree.Discover(ctx, nil, bare); !errors.Is(err, worktree.ErrBare) {
		t.Errorf("bare repo: %v, want ErrBare", err)
	}
	if _, err := worktree.Discover(ctx, nil, filepath.Join(dir, ".git")); !errors.Is(err, worktree.ErrNotRepo) {
		t.Errorf("inside .git: %v, want ErrNotRepo", err)
	}
}

func TestRunnerEnvironmentAndErrors(t *testing.T) {
	testgit.Env(t)
	ctx := context.Background()
	dir := testgit.Init(t, "repo")
	elsewhere := testgit.Init(t, "elsewhere")
	// A GIT_DIR inherited from the environment must not redirect prsm.
	t.Setenv("GIT_DIR", filepath.Join(elsewhere, ".git"))
	t.Setenv("GIT_WORK_TREE", elsewhere)
	r := &worktree.Runner{}
	out, err := r.Output(ctx, worktree.NewCmd("rev-parse", "--show-toplevel").Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if out != real {
		t.Errorf("toplevel = %q, want %q (GIT_DIR leaked)", out, real)
	}
	// A revision that looks like an option stays a revision.
	_, err = r.Run(ctx, worktree.NewCmd("rev-parse", "--verify", "-q").Rev("--output=/tmp/x").Dir(dir))
	var ge *worktree.Error
	if !errors.As(err, &ge) || ge.ExitCode != 1 {
		t.Errorf("option-like revision: %v", err)
	}
	// Typed error with stderr.
	_, err = r.Run(ctx, worktree.NewCmd("cat-file", "-p").Rev("nosuchref").Dir(dir))
	if !errors.As(err, &ge) || ge.ExitCode != 128 || !strings.Contains(ge.Stderr, "nosuchref") {
		t.Errorf("error = %#v", err)
	}
	// Arg refuses dynamic options.
	if _, err := r.Run(ctx, worktree.NewCmd("commit-tree").Arg("-p").Dir(dir)); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Errorf("Arg(-p) = %v", err)
	}
	// Paths after --, literally.
	c := worktree.NewCmd("ls-files").Paths("*.go")
	if got := strings.Join(c.Args(), " "); got != "ls-files -- *.go" {
		t.Errorf("args = %q", got)
	}
}

func TestRunnerTimeout(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "git")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nexec sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &worktree.Runner{Git: fake, Timeout: 200 * time.Millisecond}
	_, err := r.Run(context.Background(), worktree.NewCmd("status").Dir(t.TempDir()))
	if !errors.Is(err, worktree.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}
