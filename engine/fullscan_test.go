package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/internal/testgit"
)

// agentCommitsAndNests is what an agent may do in its worktree that git
// status there does not show: commit its edits (they are then clean
// against the worktree's own HEAD) and create a repository of its own
// (git status shows one "nested/" entry and does not look inside).
func agentCommitsAndNests(t *testing.T, wt string) {
	write(t, wt, "f.txt", "edited, then committed\n")
	write(t, wt, "c.txt", "created, then committed\n")
	testgit.Git(t, wt, "add", "f.txt", "c.txt")
	testgit.Git(t, wt, "commit", "-qm", "the agent's commit")
	if err := os.MkdirAll(filepath.Join(wt, "nested"), 0o755); err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, filepath.Join(wt, "nested"), "init", "-q")
	write(t, wt, "nested/main.rs", "fn main() {}\n")
	write(t, wt, "plain.txt", "plain\n")
}

const committedAndNested = "%s:0 create c.txt pending/synced\n%s:1 modify f.txt pending/synced\n%s:2 create nested/main.rs pending/synced\n%s:3 create plain.txt pending/synced"

// TestAFullScanSeesWhatTheAgentCommitted: a scan with git status (the
// start's reconcile, a worktree scanned instead of watched) finds the
// changes the agent committed in its worktree and the files of a
// repository it made there, as the watcher does.
func TestAFullScanSeesWhatTheAgentCommitted(t *testing.T) {
	t.Run("scanned tool call", func(t *testing.T) {
		f := newFixture(t)
		s := f.start(prsm.ModeAuto)
		recs := f.tool(s, "b1", "Bash", "", func(wt string) { agentCommitsAndNests(t, wt) })
		if got, want := summary(recs), sprintf4(committedAndNested, "b1"); got != want {
			t.Errorf("records:\n%s\nwant\n%s", got, want)
		}
		f.checkWorkspace()
	})
	t.Run("reconcile", func(t *testing.T) {
		f := newFixture(t)
		s := f.start(prsm.ModeAuto)
		f.eng.Close()
		agentCommitsAndNests(t, s.WorktreePath)
		f.restart()
		all, err := f.eng.Records(f.ctx, s.ID, "", "")
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 4 {
			t.Fatalf("reconciled: %s", summary(all))
		}
		f.checkWorkspace()
	})
}

func sprintf4(format, id string) string {
	return fmt.Sprintf(format, id, id, id, id)
}

// checkWorkspace: every change reached the workspace.
func (f *fixture) checkWorkspace() {
	f.t.Helper()
	for rel, want := range map[string]string{"f.txt": "edited, then committed\n", "c.txt": "created, then committed\n",
		"nested/main.rs": "fn main() {}\n", "plain.txt": "plain\n"} {
		if got := read(f.t, f.ws, rel); got != want {
			f.t.Errorf("workspace %s: %q, want %q", rel, got, want)
		}
	}
}

// TestUnignoringAFileRecordsIt: a file git ignored has no record; once
// the agent edits .gitignore so that git no longer ignores it, the call
// that edits .gitignore records the file too (the watcher had dropped its
// events as those of an ignored file).
func TestUnignoringAFileRecordsIt(t *testing.T) {
	f := newFixture(t)
	f.watch()
	s := f.start(prsm.ModeAuto)
	if recs := f.tool(s, "b1", "Bash", "", func(wt string) { write(t, wt, "app.log", "build output\n") }); len(recs) != 0 {
		t.Fatalf("an ignored file was recorded: %s", summary(recs))
	}
	recs := f.tool(s, "b2", "Bash", "", func(wt string) { write(t, wt, ".gitignore", "") })
	if got, want := summary(recs), "b2:0 modify .gitignore pending/synced\nb2:1 create app.log pending/synced"; got != want {
		t.Errorf("records:\n%s\nwant\n%s", got, want)
	}
	if got := read(t, f.ws, "app.log"); got != "build output\n" {
		t.Errorf("workspace app.log: %q", got)
	}
}
