package engine_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/store"
)

// Regression tests from an audit of the fixes of 2026-11-24.

// TestReviewModeRewindTakesOutAnAcceptedRollbackRecord: a Rollback record
// the user accepted reached the workspace; a later rewind takes it out.
func TestReviewModeRewindTakesOutAnAcceptedRollbackRecord(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeReview)
	base := read(t, f.ws, "f.txt")
	cp := f.turn(s, 1)
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 3, "agent three")) })
	if _, err := f.eng.Accept(f.ctx, s.ID, "e1"); err != nil {
		t.Fatal(err)
	}
	done, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.Rewind(f.ctx, s.ID, done.SafetyCheckpointID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.Bulk(f.ctx, s.ID, true, ""); err != nil { // accept the offered change: ws gets line 3
		t.Fatal(err)
	}
	if _, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false); err != nil {
		t.Fatal(err)
	}
	if got := read(t, f.ws, "f.txt"); got != base {
		t.Errorf("workspace keeps the accepted change after rewinding to before it:\n%s\n%s", got, f.records(s))
	}
}

// TestAClosedCallsChangeIsRecordedByWatch: what a call closed by the next
// turn changed is recorded by Watch, not taken by the next tool call.
func TestAClosedCallsChangeIsRecordedByWatch(t *testing.T) {
	f := newFixture(t)
	f.watch()
	s := f.start(prsm.ModeAuto)
	f.turn(s, 1)
	f.capture(s, "lost", "Write", "notes.txt")
	write(t, s.WorktreePath, "notes.txt", "agent\n") // the tool ran; its PostToolUse is lost
	time.Sleep(800 * time.Millisecond)
	f.turn(s, 2)
	waitFor(t, "a watch record of notes.txt", func() bool {
		recs, _ := f.eng.Records(f.ctx, s.ID, "", "notes.txt")
		return len(recs) == 1 && recs[0].ToolName == "Watch" && recs[0].SyncState == prsm.SyncSynced
	})
	recs := f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 3, "x")) })
	if len(recs) != 1 {
		t.Errorf("an Edit of f.txt got:\n%s", summary(recs))
	}
}

// TestANewTurnClosesACallOpenBeforeARestart: a call captured before a
// restart and never completed is closed by the next turn, which frees
// rewinds.
func TestANewTurnClosesACallOpenBeforeARestart(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeAuto)
	cp := f.turn(s, 1)
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", "agent\n") })
	f.capture(s, "denied", "Write", "notes.txt")
	engine.Settle(f.eng)
	f.restart()
	f.turn(s, 2)
	if _, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false); err != nil {
		t.Errorf("rewind after the next turn: %v", err)
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

// TestRejectOfOneHalfOfASwapIsRefusedClearly: rejecting the deletion of
// d/x alone, while d is the agent's file, cannot be done in place: a clear
// conflict that changes nothing, not a raw file system error.
func TestRejectOfOneHalfOfASwapIsRefusedClearly(t *testing.T) {
	f := newFixture(t)
	write(t, f.ws, "d/x", "x\n")
	testgit.Git(t, f.ws, "add", "-A")
	testgit.Git(t, f.ws, "commit", "-qm", "d")
	s := f.start(prsm.ModeAuto)
	f.tool(s, "t1", "Bash", "", func(wt string) { sh(t, wt, "rm -r d && echo dfile > d") })
	// t1:1 is "delete d/x"
	_, err := f.eng.Reject(f.ctx, s.ID, "t1:1")
	if !errors.Is(err, prsm.ErrConflict) || !strings.Contains(err.Error(), "t1:0") || strings.Contains(err.Error(), s.WorktreePath) {
		t.Errorf("reject of the delete record alone: %v", err)
	}
	f.bothHold(s, "d", "dfile\n", "after the refused reject")
	if open, err := store.OpenIntents(f.ctx, f.q()); err != nil || len(open) != 0 {
		t.Errorf("intents left open: %v %v", open, err)
	}
	if _, err := f.eng.Reject(f.ctx, s.ID, "t1"); err != nil {
		t.Fatalf("reject of the whole call: %v", err)
	}
	if got := read(t, f.ws, "d/x"); got != "x\n" {
		t.Errorf("workspace d/x after rejecting the call: %q", got)
	}
}

// TestReviewModeRewindKeepsOfferingWhatStaysInTheWorktree: rewinding (in
// review mode) to a checkpoint that holds a never-accepted file rejects the
// record that offered it, and offers it anew: the file stays in the
// worktree, and ending the session without --discard is refused.
func TestReviewModeRewindKeepsOfferingWhatStaysInTheWorktree(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeReview)
	cp1 := f.turn(s, 1)
	f.tool(s, "n1", "Write", "n.txt", func(wt string) { write(t, wt, "n.txt", "agent\n") })
	cp2 := f.turn(s, 2)
	done, err := f.eng.Rewind(f.ctx, s.ID, cp1.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.Rewind(f.ctx, s.ID, done.SafetyCheckpointID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.Rewind(f.ctx, s.ID, cp2.ID, false); err != nil {
		t.Fatal(err)
	}
	if !exists(s.WorktreePath, "n.txt") || exists(f.ws, "n.txt") {
		t.Fatalf("n.txt: worktree %v, workspace %v", exists(s.WorktreePath, "n.txt"), exists(f.ws, "n.txt"))
	}
	pend, err := f.eng.Records(f.ctx, s.ID, prsm.StatusPending, "n.txt")
	if err != nil || len(pend) != 1 {
		t.Fatalf("pending records of n.txt: %v\n%s", err, f.records(s))
	}
	if _, err := f.eng.EndSession(f.ctx, s.ID, false); err == nil {
		t.Errorf("session ended without --discard; n.txt was never reviewed")
	}
	if _, err := f.eng.Accept(f.ctx, s.ID, pend[0].ID); err != nil {
		t.Fatal(err)
	}
	if got := read(t, f.ws, "n.txt"); got != "agent\n" {
		t.Errorf("workspace n.txt once accepted: %q", got)
	}
}
