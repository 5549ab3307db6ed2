package tracker

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/internal/testgit"
)

// A git directory the agent builds in its worktree, under any name (a
// copy of a repository's .git, or of a worktree's entry), and any path
// through a .git segment are never recorded, and each is reported once.
// A project's own committed bare-repository fixture, and a directory
// that merely holds a file named HEAD, are ordinary files.
func TestFilterRefusesGitDirectories(t *testing.T) {
	s, _ := newTrackedSession(t)
	ctx := context.Background()
	ws := s.Worktree
	testgit.Commit(t, ws, "fixture", map[string]string{
		"testdata/fixture.git/HEAD":              "ref: refs/heads/main\n",
		"testdata/fixture.git/objects/info/keep": "",
		"testdata/fixture.git/refs/heads/main":   "0000000000000000000000000000000000000000\n",
	})
	s.Base = testgit.Git(t, ws, "rev-parse", "HEAD")
	for rel, content := range map[string]string{
		"copy/HEAD":                              "ref: refs/heads/main\n",
		"copy/config":                            "[core]\n\tfsmonitor = /x\n",
		"copy/objects/ab/cdef":                   "x",
		"copy/refs/heads/main":                   "0000000000000000000000000000000000000000\n",
		"deep/er/entry/HEAD":                     "ref: refs/heads/main\n",
		"deep/er/entry/commondir":                "../copy\n",
		"deep/er/entry/logs/HEAD":                "x",
		"deep/er/keep.txt":                       "mine\n",
		"sub/.git/config":                        "[core]\n\tfsmonitor = /x\n",
		"a/.git":                                 "gitdir: ../copy\n",
		"notes/HEAD":                             "just a file\n",
		"testdata/fixture.git/refs/heads/main":   "1111111111111111111111111111111111111111\n",
		"testdata/fixture.git/objects/info/keep": "changed\n",
	} {
		testgit.Write(t, ws, rel, content, 0o644)
	}
	paths := []string{"copy/HEAD", "copy/config", "copy/objects/ab/cdef", "copy/refs/heads/main",
		"deep/er/entry/HEAD", "deep/er/entry/commondir", "deep/er/entry/logs/HEAD", "deep/er/keep.txt",
		"sub/.git/config", "a/.git", ".git", ".git/config", "notes/HEAD",
		"testdata/fixture.git/refs/heads/main", "testdata/fixture.git/objects/info/keep"}
	got, err := s.Filter(ctx, paths)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	if want := "deep/er/keep.txt,notes/HEAD,testdata/fixture.git/objects/info/keep,testdata/fixture.git/refs/heads/main"; strings.Join(got, ",") != want {
		t.Errorf("Filter = %v\nwant %s", got, want)
	}
	refused := s.TakeRefused()
	sort.Strings(refused)
	if got, want := strings.Join(refused, ","), "a/.git,copy,deep/er/entry,sub/.git"; got != want {
		t.Errorf("refused = %s, want %s", got, want)
	}
	// Reported once: the next look drops them again, silently.
	if got, err := s.Filter(ctx, paths); err != nil || len(got) != 4 {
		t.Errorf("second Filter = %v %v", got, err)
	}
	if again := s.TakeRefused(); len(again) != 0 {
		t.Errorf("refused again: %v", again)
	}

	// A repository the agent made with git init or git clone: git status
	// shows its directory, whose .git the scan skips and reports.
	testgit.Write(t, ws, "cloned/src.txt", "x\n", 0o644)
	testgit.Git(t, ws+"/cloned", "init", "-q")
	dirty, err := s.Dirty(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !contains(dirty, "cloned/src.txt") || contains(dirty, "cloned/.git/HEAD") {
		t.Errorf("Dirty = %v", dirty)
	}
	if got := s.TakeRefused(); strings.Join(got, ",") != "cloned/.git" {
		t.Errorf("refused after the scan = %v", got)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
