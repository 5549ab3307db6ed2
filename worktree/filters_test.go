package worktree_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/worktree"
)

// TestRunnerRunsNoFilterDriver (issue 42, item 9): filter drivers in the
// repository's config (clean, smudge, a required one, a process filter,
// under names of any case, with dots or "=") are switched off for every git
// call that could run one: the snapshot's add and hash-object, a
// session checkout, status and update-index --refresh in it, cat-file
// --filters. Built-in conversions stay: eol=crlf still converts.
func TestRunnerRunsNoFilterDriver(t *testing.T) {
	testgit.Env(t)
	ctx := context.Background()
	marks := t.TempDir()
	dir := testgit.Init(t, "ws")
	testgit.Commit(t, dir, "init", map[string]string{
		".gitattributes": "*.dat filter=evil\n*.p filter=Odd.Name\n*.q filter=a=b\n*.bat text eol=crlf\n",
		"a.dat":          "committed\n", "b.p": "p\n", "c.bat": "one\ntwo\n",
	})
	for _, kv := range [][2]string{
		{"filter.evil.clean", "touch " + marks + "/clean; tr a-z A-Z"},
		{"filter.evil.smudge", "touch " + marks + "/smudge; cat"},
		{"filter.evil.required", "true"},
		{"filter.Odd.Name.process", "touch " + marks + "/process"},
		{"filter.a=b.clean", "touch " + marks + "/equals; cat"},
	} {
		testgit.Git(t, dir, "config", kv[0], kv[1])
	}
	ran := func(when string) {
		t.Helper()
		if names := testgit.Names(marks); len(names) > 0 {
			t.Fatalf("%s ran the filters: %v", when, names)
		}
	}
	testgit.Write(t, dir, "a.dat", "changed\n", 0o644)
	testgit.Write(t, dir, "new.dat", "new\n", 0o644)
	testgit.Write(t, dir, "new.p", "new\n", 0o644)
	testgit.Write(t, dir, "new.q", "new\n", 0o644)
	repo, err := worktree.Discover(ctx, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	commit, err := repo.Snapshot(ctx, "base")
	ran("the snapshot")
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	if got := testgit.Git(t, dir, "cat-file", "blob", commit+":new.dat"); got != "new" {
		t.Errorf("new.dat blob = %q, want its bytes", got)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	err = repo.AddWorktree(ctx, wt, "prsm/f", commit)
	ran("the checkout")
	if err != nil {
		t.Fatal(err)
	}
	testgit.Write(t, wt, "a.dat", "edited\n", 0o644)
	if _, err := repo.Status(ctx, wt); err != nil {
		t.Fatal(err)
	}
	ran("git status in the worktree")
	if _, err := repo.RunIn(ctx, wt, worktree.NewCmd("update-index", "-q", "--refresh")); err != nil && worktree.ExitCode(err) != 1 {
		t.Fatal(err)
	}
	ran("update-index --refresh")
	for rel, want := range map[string]string{"a.dat": "changed\n", "c.bat": "one\r\ntwo\r\n"} {
		got, err := repo.CheckoutContent(ctx, wt, commit, rel, []byte(fmt.Sprint(testgit.Git(t, dir, "cat-file", "blob", commit+":"+rel), "\n")))
		ran("cat-file --filters")
		if err != nil || string(got) != want {
			t.Errorf("checkout content of %s: %q %v, want %q", rel, got, err, want)
		}
	}
}

// TestPinnedRunsNoFilterDriver: a runner Pinned for an operation switches
// off the drivers defined when it was made, in every call in its
// directory (here hash-object, which cleans what it hashes),
// without asking git again; a call elsewhere still asks.
func TestPinnedRunsNoFilterDriver(t *testing.T) {
	testgit.Env(t)
	ctx := context.Background()
	marks := t.TempDir()
	dir := testgit.Init(t, "ws")
	other := testgit.Init(t, "other")
	for d, name := range map[string]string{dir: "evil", other: "mine"} {
		testgit.Commit(t, d, "init", map[string]string{".gitattributes": "*.dat filter=" + name + "\n", "a.dat": "committed\n"})
		testgit.Git(t, d, "config", "filter."+name+".clean", "touch "+marks+"/"+name+"; cat")
	}
	pin, err := worktree.DefaultRunner.Pinned(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	// Defined after Pinned: the pinned runner does not know it, which
	// shows it asked only once.
	testgit.Git(t, dir, "config", "filter.late.clean", "touch "+marks+"/late; cat")
	testgit.Write(t, dir, ".gitattributes", "*.dat filter=evil\n*.txt filter=late\n", 0o644)
	for _, d := range []string{dir, other} {
		testgit.Write(t, d, "a.dat", "changed\n", 0o644)
		testgit.Write(t, d, "b.txt", "new\n", 0o644)
	}
	os.RemoveAll(marks)
	os.Mkdir(marks, 0o755)
	for _, d := range []string{dir, other} {
		if _, err := pin.Run(ctx, worktree.NewCmd("hash-object", "--stdin-paths").Dir(d).Stdin([]byte("a.dat\nb.txt\n"))); err != nil {
			t.Fatal(err)
		}
	}
	got := testgit.Names(marks)
	if len(got) != 1 || got[0] != "late" {
		t.Fatalf("filters run = %v, want only the one defined after Pinned (late)", got)
	}
}

// TestLateDriverNeverRuns: drivers defined after a call found none (and
// so after the runner read the config files) are switched off in the
// next call all the same: one in the repository's config, written by
// git config; one in the user's global config; one put in the
// repository's config in place, its size and times kept; one in a
// session worktree's config.worktree, for a call In it. Each would
// clean what hash-object hashes.
func TestLateDriverNeverRuns(t *testing.T) {
	testgit.Env(t)
	ctx := context.Background()
	marks := t.TempDir()
	dir := testgit.Init(t, "ws")
	testgit.Commit(t, dir, "init", map[string]string{".gitattributes": "*.a filter=late\n*.b filter=global\n*.c filter=inplace\n*.d filter=wt\n"})
	repo, err := worktree.Discover(ctx, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	if err := repo.AddWorktree(ctx, wt, "prsm/late", "HEAD"); err != nil {
		t.Fatal(err)
	}
	files := []byte("x.a\nx.b\nx.c\nx.d\n")
	for _, d := range []string{dir, wt} {
		for _, f := range []string{"x.a", "x.b", "x.c", "x.d"} {
			testgit.Write(t, d, f, "content\n", 0o644)
		}
	}
	hash := func(when string) {
		t.Helper()
		for _, d := range []string{dir, wt} {
			if _, err := repo.RunIn(ctx, d, worktree.NewCmd("hash-object", "--stdin-paths").Stdin(files)); err != nil {
				t.Fatal(err)
			}
		}
		if names := testgit.Names(marks); len(names) > 0 {
			t.Fatalf("%s: filters ran: %v", when, names)
		}
	}
	hash("before any driver")
	testgit.Git(t, dir, "config", "filter.late.clean", "touch "+marks+"/late; cat")
	hash("after git config")
	global := os.Getenv("GIT_CONFIG_GLOBAL")
	old, _ := os.ReadFile(global)
	testgit.Write(t, filepath.Dir(global), filepath.Base(global), string(old)+"[filter \"global\"]\n\tclean = touch "+marks+"/global; cat\n", 0o644)
	hash("after a global driver")

	// In place: the same bytes but one driver's name, the times put back.
	cfg := filepath.Join(repo.CommonDir, "config")
	testgit.Git(t, dir, "config", "filter.inplacX.clean", "touch "+marks+"/inplace; cat")
	hash("before renaming a driver in place")
	fi, err := os.Stat(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(cfg)
	f, err := os.OpenFile(cfg, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(bytes.Replace(b, []byte("inplacX"), []byte("inplace"), 1)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	os.Chtimes(cfg, fi.ModTime(), fi.ModTime())
	hash("after a driver renamed in place")

	testgit.Git(t, dir, "config", "extensions.worktreeConfig", "true")
	testgit.Git(t, wt, "config", "--worktree", "filter.wt.clean", "touch "+marks+"/wt; cat")
	hash("after a worktree's driver")
}
