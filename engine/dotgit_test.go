package engine_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/internal/testgit"
)

// TestRewrittenDotGitRepaired: a worktree whose .git no longer holds what
// git wrote is put back where prsm looks at its changes: after a tool
// call, at a restart (reconcile), and before the session's end removes it
// (git refuses to remove a worktree whose .git names another place). What
// stood there is kept in the project's quarantine, and the session's note
// says so; the tool call's own change is recorded as ever.
func TestRewrittenDotGitRepaired(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	wt := s.WorktreePath
	dotgit := filepath.Join(wt, ".git")
	orig, err := os.ReadFile(dotgit)
	if err != nil {
		t.Fatal(err)
	}
	wantRepaired := func(when, agents string) {
		t.Helper()
		if b, err := os.ReadFile(dotgit); err != nil || string(b) != string(orig) {
			t.Fatalf("%s: .git holds %q %v, want %q", when, b, err, orig)
		}
		kept, _ := filepath.Glob(filepath.Join(f.eng.QuarantineDir(), filepath.Base(wt)+"-dotgit-*"))
		for _, k := range kept {
			if b, err := os.ReadFile(k); err == nil && string(b) == agents {
				return
			}
		}
		t.Fatalf("%s: %q is not kept in the quarantine (%q)", when, agents, kept)
	}

	recs := f.tool(s, "t1", "Bash", "", func(wt string) {
		write(t, wt, ".git", "gitdir: /nowhere\n")
		write(t, wt, "new.txt", "new\n")
	})
	if got := summary(recs); got != "t1:0 create new.txt pending/synced" {
		t.Errorf("records:\n%s", got)
	}
	wantRepaired("after a tool call", "gitdir: /nowhere\n")
	got, err := f.eng.Session(f.ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.Note, `found a file holding "gitdir: /nowhere"`) || !strings.Contains(got.Note, f.eng.QuarantineDir()) {
		t.Errorf("note = %q", got.Note)
	}

	// Rewritten while the server was down: the start puts it back.
	write(t, wt, ".git", "gitdir: /while/down\n")
	f.restart()
	wantRepaired("after a restart", "gitdir: /while/down\n")

	// And at the end: the worktree goes, git's entry with it.
	write(t, wt, ".git", "gitdir: /at/the/end\n")
	if _, err := f.eng.EndSession(f.ctx, s.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(wt); !os.IsNotExist(err) {
		t.Errorf("worktree left after the end: %v", err)
	}
	if list := testgit.Git(t, f.ws, "worktree", "list", "--porcelain"); strings.Contains(list, s.ID) {
		t.Errorf("git still lists the worktree:\n%s", list)
	}
	if ended, _ := f.eng.Session(f.ctx, s.ID); ended.Status != prsm.SessionEnded {
		t.Errorf("session %+v", ended)
	}
}

// TestStartKeepsAWorktreeThatLostItsGitFile: an active session whose
// worktree lost its .git file is ended at start, but its files (maybe the
// agent's unrecorded work) and its branch (the agent's commits) stay.
func TestStartKeepsAWorktreeThatLostItsGitFile(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeAuto)
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", "agent\n") })
	if _, err := f.eng.Bulk(f.ctx, s.ID, true, ""); err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, s.WorktreePath, "add", "-A")
	testgit.Git(t, s.WorktreePath, "commit", "-qm", "agent commit")
	write(t, s.WorktreePath, "unrecorded.txt", "agent work while the server was down\n")
	if err := os.Remove(filepath.Join(s.WorktreePath, ".git")); err != nil {
		t.Fatal(err)
	}
	f.restart()
	got, _ := f.eng.Session(f.ctx, s.ID)
	out, _ := exec.Command("git", "-C", f.ws, "branch", "--list", s.Branch).Output()
	if !exists(s.WorktreePath, "unrecorded.txt") {
		t.Errorf("unrecorded agent work deleted (no record, not in the workspace: %v)", exists(f.ws, "unrecorded.txt"))
	}
	if len(out) == 0 {
		t.Errorf("branch %s deleted though the note says: %s", s.Branch, got.Note)
	}
}
