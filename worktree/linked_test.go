//go:build unix

package worktree_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/worktree"
)

// sessionWorktree is a repository with a commit and a session worktree
// of it under a worktrees directory, as prsm makes them; the repository's
// runner is confined to that directory.
func sessionWorktree(t *testing.T) (repo *worktree.Repo, wt string) {
	t.Helper()
	testgit.Env(t)
	ctx := context.Background()
	ws := testgit.Init(t, "ws")
	testgit.Commit(t, ws, "one", map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n", ".gitattributes": "*.crlf text eol=crlf\n", "x.crlf": "one\ntwo\n"})
	repo, err := worktree.Discover(ctx, nil, ws)
	if err != nil {
		t.Fatal(err)
	}
	area := filepath.Join(t.TempDir(), "project", "worktrees")
	repo.ConfineWorktrees(area)
	head, err := repo.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wt = filepath.Join(area, "0123456789ab")
	if err := repo.AddWorktree(ctx, wt, "prsm/0123456789ab", head); err != nil {
		t.Fatal(err)
	}
	if wt, err = filepath.EvalSymlinks(wt); err != nil {
		t.Fatal(err)
	}
	return repo, wt
}

// fakeGitDir makes, inside wt, a git directory of the agent's (a copy of
// the repository's, and of git's entry for wt) whose config runs a
// script that appends to marker as core.fsmonitor, and points wt's .git
// at it: the attack of issue 31.
func fakeGitDir(t *testing.T, repo *worktree.Repo, wt, marker string) {
	t.Helper()
	admin := filepath.Join(repo.CommonDir, "worktrees", filepath.Base(wt))
	common := filepath.Join(wt, "fake-common")
	for _, cp := range [][2]string{{repo.CommonDir, common}, {admin, filepath.Join(wt, "fake-admin")}} {
		if out, err := exec.Command("cp", "-r", cp[0], cp[1]).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
	}
	testgit.Write(t, wt, "fake-admin/commondir", common+"\n", 0o644)
	testgit.Write(t, wt, "fake-common/fsmonitor.sh", "#!/bin/sh\necho \"ran $*\" >> '"+marker+"'\nexit 1\n", 0o755)
	cfg, err := os.OpenFile(filepath.Join(common, "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(cfg, "[core]\n\tfsmonitor = %s\n[filter \"evil\"]\n\tsmudge = \"sh -c 'echo smudge >> %s; cat'\"\n[prsm]\n\tplanted = agent\n", filepath.Join(common, "fsmonitor.sh"), marker)
	cfg.Close()
	testgit.Write(t, wt, ".git", "gitdir: "+filepath.Join(wt, "fake-admin")+"\n", 0o644)
}

// Every git call prsm makes in a session worktree names git's entry for
// it: with the worktree's .git pointing at the agent's git directory, no
// command of the agent's config runs, for status, check-ignore,
// cat-file --filters or a diff, and the answers are the repository's
// own. A plain Dir there is refused. The same plain call with an
// unconfined runner runs the agent's command: the attack is real.
func TestSessionWorktreeGitNeverReadsDotGit(t *testing.T) {
	repo, wt := sessionWorktree(t)
	ctx := context.Background()
	marker := filepath.Join(t.TempDir(), "marker")
	// Attributes the index does not hold: git takes the worktree's.
	testgit.Write(t, wt, "sub/.gitattributes", "*.txt filter=evil\n", 0o644)
	testgit.Write(t, wt, "new.txt", "n\n", 0o644)
	fakeGitDir(t, repo, wt, marker)

	l, err := repo.Linked(wt)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(repo.CommonDir, "worktrees", filepath.Base(wt)); l.GitDir != want || l.WorkTree != wt {
		t.Fatalf("Linked = %+v, want git dir %s", l, want)
	}
	st, err := repo.Status(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(st), "?? new.txt\x00") || !strings.Contains(string(st), "?? sub/.gitattributes\x00") {
		t.Errorf("status = %q", st)
	}
	ign, err := repo.RunIn(ctx, wt, worktree.NewCmd("check-ignore", "-z", "--stdin").Stdin([]byte("new.txt\x00")).
		Env("GIT_LITERAL_PATHSPECS=0"))
	if err != nil && worktree.ExitCode(err) != 1 {
		t.Fatal(err)
	}
	if len(ign) != 0 {
		t.Errorf("check-ignore = %q", ign)
	}
	head, _ := repo.Head(ctx)
	if got, err := repo.CheckoutContent(ctx, wt, head, "x.crlf", []byte("one\ntwo\n")); err != nil || string(got) != "one\r\ntwo\r\n" {
		t.Errorf("CheckoutContent = %q %v", got, err)
	}
	if got, err := repo.RunIn(ctx, wt, worktree.NewCmd("cat-file", "--filters").Rev(head+":sub/b.txt")); err != nil || string(got) != "b\n" {
		t.Errorf("cat-file --filters sub/b.txt: %q %v", got, err)
	}
	if _, err := repo.RunIn(ctx, wt, worktree.NewCmd("diff", "--name-only").Rev(head, "HEAD")); err != nil {
		t.Error(err)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("the agent's config ran:\n%s", b)
	}

	// A plain Dir in the confined worktrees directory is refused, and
	// runs nothing.
	if _, err := repo.Git().Run(ctx, worktree.NewCmd("status").Dir(wt)); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Errorf("plain Dir in a session worktree = %v, want a refusal", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the refused call ran the agent's config")
	}
	// What In keeps out. The user's own git in the worktree follows
	// the .git file and runs the agent's fsmonitor; prsm's runner
	// switches fsmonitor and filter drivers off for every call, but a
	// plain Dir still reads the agent's config.
	testgit.Git(t, wt, "status")
	if b, err := os.ReadFile(marker); err != nil || !strings.Contains(string(b), "ran") {
		t.Fatalf("the planted git directory is not effective, so this test proves nothing: %q %v", b, err)
	}
	os.Remove(marker)
	if got, err := (&worktree.Runner{}).Output(ctx, worktree.NewCmd("config", "--get", "prsm.planted").Dir(wt)); err != nil || got != "agent" {
		t.Fatalf("a plain Dir did not read the agent's config (%q %v): the runner's refusal guards nothing", got, err)
	}
	if _, err := (&worktree.Runner{}).Run(ctx, worktree.NewCmd("cat-file", "--filters").Rev(head+":sub/b.txt").Dir(wt)); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("the agent's smudge ran, even by a plain Dir: %q", b)
	}
}

// RepairDotGit leaves a worktree whose .git holds what git wrote alone
// (absolute or relative), and otherwise puts it back, moving whatever
// stood there (a rewritten file, a directory, a symlink, a FIFO) into the
// quarantine, byte for byte; a missing one is written anew. Git's entry
// that names another place is pointed back.
func TestRepairDotGit(t *testing.T) {
	repo, wt := sessionWorktree(t)
	dotgit := filepath.Join(wt, ".git")
	orig, err := os.ReadFile(dotgit)
	if err != nil {
		t.Fatal(err)
	}
	admin := filepath.Join(repo.CommonDir, "worktrees", filepath.Base(wt))
	q := filepath.Join(t.TempDir(), "quarantine")
	cur := repo
	repair := func(what string) *worktree.DotGitRepair {
		t.Helper()
		rep, err := cur.RepairDotGit(wt, q)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if b, err := os.ReadFile(dotgit); err != nil || string(b) != string(orig) {
			t.Fatalf("%s: .git holds %q %v, want %q", what, b, err, orig)
		}
		if g, err := os.ReadFile(filepath.Join(admin, "gitdir")); err != nil || strings.TrimSpace(string(g)) != dotgit {
			t.Fatalf("%s: git's entry names %q %v", what, g, err)
		}
		return rep
	}
	kept := func(rep *worktree.DotGitRepair, what string) string {
		t.Helper()
		if rep == nil || rep.Kept == "" || filepath.Dir(rep.Kept) != q {
			t.Fatalf("%s: repair = %+v, want what stood there kept in %s", what, rep, q)
		}
		return rep.Kept
	}

	if rep := repair("intact"); rep != nil {
		t.Errorf("intact worktree repaired: %+v", rep)
	}
	rel, _ := filepath.Rel(wt, admin)
	testgit.Write(t, wt, ".git", "gitdir: "+rel+"\n", 0o644)
	if rep, err := repo.RepairDotGit(wt, q); err != nil || rep != nil {
		t.Errorf("relative .git (worktree.useRelativePaths) repaired: %+v %v", rep, err)
	}
	testgit.Write(t, wt, ".git", string(orig), 0o644)

	evil := "gitdir: /somewhere/else\n"
	testgit.Write(t, wt, ".git", evil, 0o644)
	rep := repair("rewritten file")
	if b, err := os.ReadFile(kept(rep, "rewritten file")); err != nil || string(b) != evil {
		t.Errorf("kept %q %v", b, err)
	}
	if !strings.Contains(rep.String(), `"gitdir: /somewhere/else"`) || !strings.Contains(rep.String(), q) {
		t.Errorf("report %q", rep)
	}

	os.Remove(dotgit)
	testgit.Write(t, wt, ".git/config", "[core]\n\tfsmonitor = evil\n", 0o644)
	rep = repair("directory")
	if b, err := os.ReadFile(filepath.Join(kept(rep, "directory"), "config")); err != nil || !strings.Contains(string(b), "evil") {
		t.Errorf("kept directory: %q %v", b, err)
	}

	os.Remove(dotgit)
	if err := os.Symlink(filepath.Join(wt, "fake"), dotgit); err != nil {
		t.Fatal(err)
	}
	rep = repair("symlink")
	if target, err := os.Readlink(kept(rep, "symlink")); err != nil || target != filepath.Join(wt, "fake") {
		t.Errorf("kept symlink: %q %v", target, err)
	}

	os.Remove(dotgit)
	if err := syscall.Mkfifo(dotgit, 0o644); err != nil {
		t.Fatal(err)
	}
	rep = repair("fifo") // and no hang
	if fi, err := os.Lstat(kept(rep, "fifo")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("kept fifo: %v %v", fi, err)
	}

	os.Remove(dotgit)
	if rep = repair("missing"); rep == nil || rep.Found != "nothing" || rep.Kept != "" {
		t.Errorf("missing .git: %+v", rep)
	}

	// Git's entry is the user's, checked once per process and after a
	// repair: a new start finds it stale and points it back; so does the
	// repair of a rewritten .git.
	testgit.Write(t, admin, "gitdir", "/moved/away/.git\n", 0o644)
	if cur, err = worktree.Discover(context.Background(), nil, filepath.Dir(repo.CommonDir)); err != nil {
		t.Fatal(err)
	}
	if rep = repair("git's entry, at a start"); rep == nil || !rep.Entry || rep.Found != "" {
		t.Errorf("entry pointed elsewhere: %+v", rep)
	}
	testgit.Write(t, admin, "gitdir", "/moved/away/.git\n", 0o644)
	testgit.Write(t, wt, ".git", evil, 0o644)
	if rep = repair("git's entry and the .git file"); rep == nil || !rep.Entry || rep.Kept == "" {
		t.Errorf("entry pointed elsewhere with .git rewritten: %+v", rep)
	}
	if rep := repair("after all that"); rep != nil {
		t.Errorf("repaired again: %+v", rep)
	}
	// The user's git works in the worktree again.
	if got := testgit.Git(t, wt, "rev-parse", "--absolute-git-dir"); got != admin {
		t.Errorf("git in the worktree uses %s, want %s", got, admin)
	}
}

// After a restart (a new Repo), git's entry is found again from the
// repository's side even when the worktree's .git names another place,
// and when the entry's own record went stale it is found by its name.
func TestLinkedFoundFromGitsSide(t *testing.T) {
	repo, wt := sessionWorktree(t)
	ctx := context.Background()
	admin := filepath.Join(repo.CommonDir, "worktrees", filepath.Base(wt))
	testgit.Write(t, wt, ".git", "gitdir: "+t.TempDir()+"\n", 0o644)
	fresh, err := worktree.Discover(ctx, nil, filepath.Dir(repo.CommonDir))
	if err != nil {
		t.Fatal(err)
	}
	if l, err := fresh.Linked(wt); err != nil || l.GitDir != admin {
		t.Errorf("Linked = %+v %v, want %s", l, err, admin)
	}
	testgit.Write(t, admin, "gitdir", "/moved/away/.git\n", 0o644)
	fresh, _ = worktree.Discover(ctx, nil, filepath.Dir(repo.CommonDir))
	if l, err := fresh.Linked(wt); err != nil || l.GitDir != admin {
		t.Errorf("stale entry: Linked = %+v %v, want %s", l, err, admin)
	}
	// A directory git has no entry for is an error, not a guess.
	other := filepath.Join(filepath.Dir(wt), "fedcba987654")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if l, err := fresh.Linked(other); err == nil {
		t.Errorf("Linked(unknown) = %+v", l)
	}
}

// TestHeadOfReadsGitsFiles: HeadOf names the commit git resolves a
// session worktree's HEAD to, from git's files, while they say so
// plainly: the branch's loose ref, an agent's commit on it, a detached
// HEAD. A packed ref, or a HEAD of another kind, is not read: the caller
// asks git.
func TestHeadOfReadsGitsFiles(t *testing.T) {
	repo, wt := sessionWorktree(t)
	rev := func() string { return strings.TrimSpace(testgit.Git(t, wt, "rev-parse", "HEAD")) }
	check := func(when string, wantOK bool) {
		t.Helper()
		got, ok := repo.HeadOf(wt)
		if ok != wantOK || (ok && got != rev()) {
			t.Errorf("%s: HeadOf = %q %v; git says %s, want ok %v", when, got, ok, rev(), wantOK)
		}
	}
	check("at the base", true)
	testgit.Commit(t, wt, "the agent's", map[string]string{"c.txt": "c\n"})
	check("after a commit", true)
	testgit.Git(t, wt, "pack-refs", "--all")
	check("packed", false)
	testgit.Git(t, wt, "checkout", "-q", "--detach")
	check("detached", true)
	admin := filepath.Join(repo.CommonDir, "worktrees", filepath.Base(wt))
	testgit.Write(t, admin, "HEAD", "ref: refs/heads/../../HEAD\n", 0o644)
	if got, ok := repo.HeadOf(wt); ok {
		t.Errorf("a HEAD naming ..: %q", got)
	}
	if got, ok := repo.HeadOf(t.TempDir()); ok {
		t.Errorf("not a session worktree: %q", got)
	}
}
