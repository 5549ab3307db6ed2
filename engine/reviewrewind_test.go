package engine_test

import (
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// acceptedAndPending starts a review-mode session and, after its
// checkpoint cp, has the agent write n.txt (when withNew) and make two
// changes of f.txt: line 3, accepted, then line 10, pending. base is
// f.txt before them.
func acceptedAndPending(t *testing.T, withNew bool) (f *fixture, s *prsm.Session, base string, cp *prsm.Checkpoint) {
	t.Helper()
	f = newFixture(t)
	s = f.start(prsm.ModeReview)
	base = read(t, f.ws, "f.txt")
	cp = f.turn(s, 1)
	if withNew {
		f.tool(s, "n1", "Write", "n.txt", func(wt string) { write(t, wt, "n.txt", "agent\n") })
	}
	f.tool(s, "a1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 3, "accepted three")) })
	if _, err := f.eng.Accept(f.ctx, s.ID, "a1"); err != nil {
		t.Fatal(err)
	}
	f.tool(s, "p1", "Edit", "f.txt", func(wt string) {
		write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 10, "pending ten"))
	})
	return f, s, base, cp
}

// TestReviewModeRewindAndItsUndo: in review mode only accepted changes
// reach the workspace, rewinds and their undoing included. A rewind takes
// the accepted changes out of the workspace; rolling back to its safety
// checkpoint undoes the rewind, workspace included (SPEC rule 5): the
// accepted changes come back to the workspace, and the pending ones come
// back to the worktree only, offered for review again. Rejecting the
// offer takes out the pending change only, never the accepted one.
func TestReviewModeRewindAndItsUndo(t *testing.T) {
	f, s, base, cp := acceptedAndPending(t, true)
	write(t, f.ws, "f.txt", replaceLine(read(t, f.ws, "f.txt"), 18, "user eighteen"))
	user := replaceLine(base, 18, "user eighteen")
	accepted := replaceLine(user, 3, "accepted three")
	agent := replaceLine(replaceLine(base, 3, "accepted three"), 10, "pending ten")

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
	if pending, err := f.eng.Records(f.ctx, s.ID, prsm.StatusPending, ""); err != nil || len(pending) != 0 {
		t.Errorf("pending records after the rewind: %v\n%s", err, summary(pending))
	}

	// Undo the rewind: the accepted change is back in the workspace, the
	// pending ones in the worktree only.
	if _, err := f.eng.Rewind(f.ctx, s.ID, done.SafetyCheckpointID, false); err != nil {
		t.Fatal(err)
	}
	if got := read(t, f.ws, "f.txt"); got != accepted {
		t.Errorf("workspace f.txt after undoing the rewind (want the accepted change back, the user's edit kept):\n%s", got)
	}
	if exists(f.ws, "n.txt") {
		t.Errorf("undoing the rewind wrote n.txt, never accepted, to the workspace")
	}
	if got := read(t, s.WorktreePath, "f.txt"); got != agent {
		t.Errorf("worktree f.txt after undoing the rewind:\n%s", got)
	}
	if got := read(t, s.WorktreePath, "n.txt"); got != "agent\n" {
		t.Errorf("worktree n.txt after undoing the rewind: %q", got)
	}
	// Offered again: the pending change of f.txt alone (the accepted one
	// is in the workspace already), and n.txt.
	pending, err := f.eng.Records(f.ctx, s.ID, prsm.StatusPending, "")
	if err != nil || len(pending) != 2 {
		t.Fatalf("pending records after undoing the rewind: %v\n%s", err, summary(pending))
	}
	var offer *prsm.Record
	for _, r := range pending {
		if r.SyncState != prsm.SyncPendingReview {
			t.Errorf("pending record %s: sync state %s", r.ID, r.SyncState)
		}
		if r.RelPath == "f.txt" {
			offer = r
		}
	}
	if offer == nil {
		t.Fatalf("no pending record of f.txt:\n%s", summary(pending))
	}
	before, _, err := f.eng.Content(f.ctx, s.ID, offer.ID, "before")
	if err != nil {
		t.Fatal(err)
	}
	after, _, err := f.eng.Content(f.ctx, s.ID, offer.ID, "after")
	if err != nil {
		t.Fatal(err)
	}
	// It follows the accepted change, as the pending record did.
	if string(before) != replaceLine(base, 3, "accepted three") || string(after) != agent {
		t.Errorf("offered change of f.txt: want the pending line alone\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// Rejecting the offer takes the pending line out of the worktree and
	// leaves the accepted one everywhere.
	if _, err := f.eng.Reject(f.ctx, s.ID, offer.ID); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, s.WorktreePath, "f.txt"), replaceLine(base, 3, "accepted three"); got != want {
		t.Errorf("worktree f.txt after rejecting the offer:\n%s", got)
	}
	if got := read(t, f.ws, "f.txt"); got != accepted {
		t.Errorf("workspace f.txt after rejecting the offer:\n%s", got)
	}
	// The rest is pending: accepting it brings n.txt in.
	if _, err := f.eng.Bulk(f.ctx, s.ID, true, ""); err != nil {
		t.Fatal(err)
	}
	if got := read(t, f.ws, "n.txt"); got != "agent\n" {
		t.Errorf("workspace n.txt after accepting all: %q", got)
	}
	if got := read(t, f.ws, "f.txt"); got != accepted {
		t.Errorf("workspace f.txt after accepting all:\n%s", got)
	}
}

// TestReviewModeRewindUndoThenAcceptAll: after undoing a rewind, accepting
// every offer gives the workspace all the agent's changes, once each.
func TestReviewModeRewindUndoThenAcceptAll(t *testing.T) {
	f, s, base, cp := acceptedAndPending(t, false)
	done, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	f.bothHold(s, "f.txt", base, "after the rewind")
	if _, err := f.eng.Rewind(f.ctx, s.ID, done.SafetyCheckpointID, false); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, f.ws, "f.txt"), replaceLine(base, 3, "accepted three"); got != want {
		t.Errorf("workspace f.txt after undoing the rewind:\n%s", got)
	}
	if _, err := f.eng.Bulk(f.ctx, s.ID, true, ""); err != nil {
		t.Fatal(err)
	}
	f.bothHold(s, "f.txt", replaceLine(replaceLine(base, 3, "accepted three"), 10, "pending ten"), "after accepting all")
}

// TestReviewModeRollbackThenRewind: a rewind that undoes a selector
// rollback's own records, not the records that rollback rejected, leaves
// out of the workspace what the rollback took out of it, and writes no
// change that was only pending.
func TestReviewModeRollbackThenRewind(t *testing.T) {
	f, s, base, cp := acceptedAndPending(t, false)
	if _, err := f.eng.SelectRewind(f.ctx, s.ID, api.RollbackRequest{Last: 2}); err != nil {
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
	// n1 itself is pending again, as it was at the checkpoint.
	if err != nil || len(pending) != 1 || pending[0].ID != "n1" || pending[0].SyncState != prsm.SyncPendingReview {
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

// TestReviewModeRewindPastARejectWritesNothingUnaccepted: a change
// rejected after the checkpoint, never accepted, comes back to the
// worktree with the rewind and is offered; the workspace never gets it,
// though the same file has a later change the rewind undoes.
func TestReviewModeRewindPastARejectWritesNothingUnaccepted(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeReview)
	base := read(t, f.ws, "f.txt")
	f.tool(s, "r0", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 3, "never accepted")) })
	cp := f.turn(s, 1)
	if _, err := f.eng.Reject(f.ctx, s.ID, "r0"); err != nil {
		t.Fatal(err)
	}
	f.tool(s, "r1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 12, "later")) })
	if _, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false); err != nil {
		t.Fatal(err)
	}
	// Nothing was ever accepted: the workspace stays as it was.
	f.hold(s, "f.txt", replaceLine(base, 3, "never accepted"), base, "after the rewind")
	f.acceptTheOffer(s, "f.txt", replaceLine(base, 3, "never accepted"))
}

// TestReviewModeRewindUndoRestoresAnAcceptedChangeTheAgentUndid: the agent
// takes an accepted change back out (a pending change), so the worktree is
// as at the checkpoint; the rewind still takes the accepted change out of
// the workspace, and undoing the rewind puts it back.
func TestReviewModeRewindUndoRestoresAnAcceptedChangeTheAgentUndid(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeReview)
	base := read(t, f.ws, "f.txt")
	cp := f.turn(s, 1)
	f.tool(s, "a1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 3, "accepted three")) })
	if _, err := f.eng.Accept(f.ctx, s.ID, "a1"); err != nil {
		t.Fatal(err)
	}
	f.tool(s, "a2", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", base) })
	done, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	f.bothHold(s, "f.txt", base, "after the rewind")
	if _, err := f.eng.Rewind(f.ctx, s.ID, done.SafetyCheckpointID, false); err != nil {
		t.Fatal(err)
	}
	// The accepted change is back in the workspace.
	f.hold(s, "f.txt", base, replaceLine(base, 3, "accepted three"), "after undoing the rewind")
	// What the workspace lacks of the worktree is offered: a2's removal.
	f.acceptTheOffer(s, "f.txt", base)
}

// hold checks that the worktree's rel holds worktree and the workspace's
// holds workspace.
func (f *fixture) hold(s *prsm.Session, rel, worktree, workspace, when string) {
	f.t.Helper()
	if got := read(f.t, s.WorktreePath, rel); got != worktree {
		f.t.Errorf("%s: worktree %s:\n%s", when, rel, got)
	}
	if got := read(f.t, f.ws, rel); got != workspace {
		f.t.Errorf("%s: workspace %s:\n%s", when, rel, got)
	}
}

// acceptTheOffer checks that rel has one pending record (the agent's
// record a rewind made pending again), accepts it, and checks that
// worktree and workspace then hold want.
func (f *fixture) acceptTheOffer(s *prsm.Session, rel, want string) {
	f.t.Helper()
	pending, err := f.eng.Records(f.ctx, s.ID, prsm.StatusPending, rel)
	if err != nil || len(pending) != 1 || pending[0].ToolName == "Rollback" {
		f.t.Fatalf("pending records of %s: %v\n%s", rel, err, f.records(s))
	}
	if _, err := f.eng.Accept(f.ctx, s.ID, pending[0].ID); err != nil {
		f.t.Fatal(err)
	}
	f.bothHold(s, rel, want, "once the offer is accepted")
}

// TestCrashMidReviewModeRewind: a crash in the middle of a review-mode
// rewind, or of its undoing, is finished at the next start with the same
// outcome as without the crash: the accepted change back in the
// workspace, the pending ones offered again.
func TestCrashMidReviewModeRewind(t *testing.T) {
	for _, tc := range []struct {
		name, point string
		undo        bool
	}{
		{"rewind/worktree", "rollback:worktree", false},
		{"rewind/workspace", "rewind:workspace", false},
		{"rewind/states", "rewind:states", false},
		{"undo/worktree", "rollback:worktree", true},
		{"undo/workspace", "rewind:workspace", true},
		{"undo/states", "rewind:states", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, s, base, cp := acceptedAndPending(t, true)
			rewind := func(to string, crash bool) *api.Plan {
				var plan *api.Plan
				run := func() {
					var err error
					if plan, err = f.eng.Rewind(f.ctx, s.ID, to, false); err != nil {
						t.Errorf("rewind: %v", err)
					}
				}
				if !crash {
					run()
					return plan
				}
				if !crashing(t, tc.point, 1, run) {
					t.Fatalf("crash point %s not reached", tc.point)
				}
				f.restart()
				return nil
			}
			safety := ""
			if plan := rewind(cp.ID, !tc.undo); plan != nil {
				safety = plan.SafetyCheckpointID
			} else {
				cps, err := f.eng.Checkpoints(f.ctx, s.ID, "")
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range cps {
					if strings.HasPrefix(c.Name, "before rewind") {
						safety = c.ID
					}
				}
			}
			f.bothHold(s, "f.txt", base, "after the rewind")
			if safety == "" {
				t.Fatal("no safety checkpoint")
			}
			rewind(safety, tc.undo)
			if got, want := read(t, f.ws, "f.txt"), replaceLine(base, 3, "accepted three"); got != want {
				t.Errorf("workspace f.txt after undoing the rewind:\n%s", got)
			}
			if got, want := read(t, s.WorktreePath, "f.txt"), replaceLine(replaceLine(base, 3, "accepted three"), 10, "pending ten"); got != want {
				t.Errorf("worktree f.txt after undoing the rewind:\n%s", got)
			}
			if exists(f.ws, "n.txt") || !exists(s.WorktreePath, "n.txt") {
				t.Errorf("n.txt after undoing the rewind: workspace %v, worktree %v", exists(f.ws, "n.txt"), exists(s.WorktreePath, "n.txt"))
			}
			if pending, err := f.eng.Records(f.ctx, s.ID, prsm.StatusPending, ""); err != nil || len(pending) != 2 {
				t.Errorf("pending records after undoing the rewind: %v\n%s", err, f.records(s))
			}
		})
	}
}

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
