package engine_test

import (
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/engine"
)

// TestReviewModeRewindAndItsUndo: in review mode only accepted changes
// reach the workspace, rewinds and their undoing included. A rewind takes
// the accepted changes out of the workspace; rolling back to its safety
// checkpoint brings the changes back to the worktree and offers them for
// review again (accepting brings them in), never writing them itself.
func TestReviewModeRewindAndItsUndo(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeReview)
	base := read(t, f.ws, "f.txt")
	cp := f.turn(s, 1)
	f.tool(s, "n1", "Write", "n.txt", func(wt string) { write(t, wt, "n.txt", "agent\n") })
	f.tool(s, "a1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 3, "accepted three")) })
	if _, err := f.eng.Accept(f.ctx, s.ID, "a1"); err != nil {
		t.Fatal(err)
	}
	f.tool(s, "p1", "Edit", "f.txt", func(wt string) {
		write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 10, "pending ten"))
	})
	write(t, f.ws, "f.txt", replaceLine(read(t, f.ws, "f.txt"), 18, "user eighteen"))
	user := replaceLine(base, 18, "user eighteen")
	accepted := replaceLine(user, 3, "accepted three")

	done, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, f.ws, "f.txt"); got != user {
		t.Errorf("workspace f.txt after the rewind:\n%s", got)
	}
	if exists(f.ws, "n.txt") || exists(s.WorktreePath, "n.txt") {
		t.Errorf("n.txt after the rewind: workspace %v, worktree %v", exists(f.ws, "n.txt"), exists(s.WorktreePath, "n.txt"))
	}

	// Undo the rewind: the changes come back to the worktree only.
	if _, err := f.eng.Rewind(f.ctx, s.ID, done.SafetyCheckpointID, false); err != nil {
		t.Fatal(err)
	}
	if got := read(t, f.ws, "f.txt"); got != user {
		t.Errorf("workspace f.txt after undoing the rewind:\n%s", got)
	}
	if exists(f.ws, "n.txt") {
		t.Errorf("undoing the rewind wrote n.txt, never accepted, to the workspace")
	}
	if got, want := read(t, s.WorktreePath, "f.txt"), replaceLine(replaceLine(base, 3, "accepted three"), 10, "pending ten"); got != want {
		t.Errorf("worktree f.txt after undoing the rewind:\n%s", got)
	}
	if got := read(t, s.WorktreePath, "n.txt"); got != "agent\n" {
		t.Errorf("worktree n.txt after undoing the rewind: %q", got)
	}
	// They are pending: accepting them all brings them in.
	if _, err := f.eng.Bulk(f.ctx, s.ID, true, ""); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, f.ws, "f.txt"), replaceLine(accepted, 10, "pending ten"); got != want {
		t.Errorf("workspace f.txt after accepting all:\n%s", got)
	}
	if got := read(t, f.ws, "n.txt"); got != "agent\n" {
		t.Errorf("workspace n.txt after accepting all: %q", got)
	}
}

// TestReviewModeRollbackThenRewind: a rewind that undoes a selector
// rollback's own records, not the records that rollback rejected, leaves
// out of the workspace what the rollback took out of it, and writes no
// change that was only pending.
func TestReviewModeRollbackThenRewind(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeReview)
	base := read(t, f.ws, "f.txt")
	cp := f.turn(s, 1)
	f.tool(s, "a1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 3, "accepted three")) })
	if _, err := f.eng.Accept(f.ctx, s.ID, "a1"); err != nil {
		t.Fatal(err)
	}
	f.tool(s, "p1", "Edit", "f.txt", func(wt string) {
		write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 10, "pending ten"))
	})
	if _, err := f.eng.SelectRollback(f.ctx, s.ID, engine.RollbackRequest{Last: 2}); err != nil {
		t.Fatal(err)
	}
	f.bothHold(s, "f.txt", base, "after the rollback")
	if _, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false); err != nil {
		t.Fatal(err)
	}
	f.bothHold(s, "f.txt", base, "after the rewind to before both changes")
}

// TestReviewModeRewindBringsBackARejectedChangeForReview: a rewind to a
// checkpoint taken before a reject brings the rejected change back to the
// worktree; in review mode it reaches the workspace only once accepted.
func TestReviewModeRewindBringsBackARejectedChangeForReview(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeReview)
	f.tool(s, "n1", "Write", "n.txt", func(wt string) { write(t, wt, "n.txt", "agent\n") })
	cp := f.turn(s, 1)
	if _, err := f.eng.Reject(f.ctx, s.ID, "n1"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s.WorktreePath, "n.txt"); got != "agent\n" {
		t.Errorf("worktree n.txt after the rewind: %q", got)
	}
	if exists(f.ws, "n.txt") {
		t.Fatalf("the rewind wrote n.txt, never accepted, to the workspace")
	}
	pending, err := f.eng.Records(f.ctx, s.ID, prsm.StatusPending, "n.txt")
	if err != nil || len(pending) != 1 || pending[0].ToolName != "Rollback" || pending[0].SyncState != prsm.SyncPendingReview {
		t.Fatalf("pending records of n.txt: %v\n%s", err, summary(pending))
	}
	if _, err := f.eng.Accept(f.ctx, s.ID, pending[0].ID); err != nil {
		t.Fatal(err)
	}
	if got := read(t, f.ws, "n.txt"); got != "agent\n" {
		t.Errorf("workspace n.txt once accepted: %q", got)
	}
}

// TestReviewModeRewindsBackAndForth: rewinds back, forth (undoing one)
// and to a checkpoint between, in review mode with nothing accepted: the
// workspace never changes.
func TestReviewModeRewindsBackAndForth(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeReview)
	base := read(t, f.ws, "f.txt")
	t1 := f.turn(s, 1)
	f.tool(s, "r1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 3, "R3")) })
	t2 := f.turn(s, 2)
	f.tool(s, "r2", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 5, "R5")) })
	done, err := f.eng.Rewind(f.ctx, s.ID, t1.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{done.SafetyCheckpointID, t2.ID} {
		if _, err := f.eng.Rewind(f.ctx, s.ID, to, false); err != nil {
			t.Fatal(err)
		}
		if got := read(t, f.ws, "f.txt"); got != base {
			t.Fatalf("workspace after rewinding to %s:\n%s", to, got)
		}
	}
	if got := read(t, s.WorktreePath, "f.txt"); got != replaceLine(base, 3, "R3") {
		t.Errorf("worktree after rewinding to the second turn:\n%s", got)
	}
}
