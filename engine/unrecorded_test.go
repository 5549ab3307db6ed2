package engine_test

import (
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// The tests below hold prsm's own worktree writes (a reject's, a
// rollback's) to the changes that have records: a change the agent made
// that no record describes yet, a tool call's in flight or a shell's the
// watcher has not recorded, is never taken for prsm's write, and never
// leaves the worktree without a record.

// TestRejectKeepsAChangeInFlight: a reject while a tool call runs takes
// its record's delta out of the file and leaves the call's own change to
// the call's record.
func TestRejectKeepsAChangeInFlight(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 5, "agent five")) })
	f.capture(s, "e2", "Edit", "f.txt")
	write(t, s.WorktreePath, "f.txt", replaceLine(read(t, s.WorktreePath, "f.txt"), 15, "agent fifteen"))
	if _, err := f.eng.Reject(f.ctx, s.ID, "e1"); err != nil {
		t.Fatal(err)
	}
	recs := f.complete(s, "e2")
	if got := summary(recs); got != "e2 modify f.txt pending/synced" {
		t.Fatalf("the call in flight recorded:\n%s", got)
	}
	want := replaceLine(base, 15, "agent fifteen")
	if got := *recs[0].NewContent; got != want {
		t.Errorf("e2's new content:\n%s", got)
	}
	if got := *recs[0].OldContent; got != base {
		t.Errorf("e2's old content (the file as the reject left it):\n%s", got)
	}
	f.bothHold(s, "f.txt", want, "after the call")
	// Everything the worktree has is recorded: the session ends.
	if _, err := f.eng.Bulk(f.ctx, s.ID, true, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.EndSession(f.ctx, s.ID, false); err != nil {
		t.Errorf("end: %v", err)
	}
}

// TestRejectKeepsAnUnrecordedShellChange: a shell's write the watcher has
// not recorded yet survives a reject of the same file, and is recorded.
func TestRejectKeepsAnUnrecordedShellChange(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 5, "agent five")) })
	write(t, s.WorktreePath, "f.txt", replaceLine(read(t, s.WorktreePath, "f.txt"), 15, "shell fifteen"))
	if _, err := f.eng.Reject(f.ctx, s.ID, "e1"); err != nil {
		t.Fatal(err)
	}
	// Unrecorded, the session does not end without --discard.
	if _, err := f.eng.EndSession(f.ctx, s.ID, false); err == nil || !strings.Contains(err.Error(), "not recorded") {
		t.Errorf("end with an unrecorded change: %v", err)
	}
	recs, err := f.eng.WatchNow(f.ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := replaceLine(base, 15, "shell fifteen")
	if len(recs) != 1 || recs[0].ToolName != "Watch" || recs[0].RelPath != "f.txt" {
		t.Fatalf("watch records after the reject:\n%s", summary(recs))
	}
	f.bothHold(s, "f.txt", want, "after the watch record")
}

// TestRollbackRecordsUnrecordedChangesFirst: a rollback first records the
// changes the worktree has that no record describes, so that they are
// undone like any other (and kept by the safety checkpoint), never
// absorbed into the rollback's own write.
func TestRollbackRecordsUnrecordedChangesFirst(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 5, "agent five")) })
	agent := replaceLine(base, 5, "agent five")
	write(t, s.WorktreePath, "f.txt", replaceLine(agent, 15, "shell fifteen"))
	write(t, s.WorktreePath, "shell.txt", "made by a shell\n")
	// The preview shows what the rollback will do, the unrecorded files
	// included.
	plan, err := f.eng.SelectRewind(f.ctx, s.ID, api.RollbackRequest{File: "shell.txt", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Operations) != 1 || plan.Operations[0].Path != "shell.txt" || plan.Operations[0].Type != "delete" {
		t.Fatalf("preview of rolling back shell.txt: %+v", plan.Operations)
	}
	if _, err := f.eng.SelectRewind(f.ctx, s.ID, api.RollbackRequest{Last: 1}); err != nil {
		t.Fatal(err)
	}
	all, err := f.eng.Records(f.ctx, s.ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range all {
		got = append(got, r.ToolName+" "+r.RelPath+" "+r.Status)
	}
	// Both shell changes were recorded by one watch call, whose last
	// record (shell.txt) the rollback undid.
	if g := strings.Join(got, "\n"); g != "Edit f.txt pending\nWatch f.txt pending\nWatch shell.txt rejected" {
		t.Fatalf("records:\n%s", g)
	}
	want := replaceLine(agent, 15, "shell fifteen")
	f.bothHold(s, "f.txt", want, "after the rollback")
	for _, root := range []string{s.WorktreePath, f.ws} {
		if exists(root, "shell.txt") {
			t.Errorf("%s: shell.txt still there", root)
		}
	}
}

// TestRewindUndoesUnrecordedChanges: a rewind restores the worktree to its
// checkpoint exactly; a change no record described is recorded first,
// undone and marked rewound, and the safety checkpoint keeps it: rolling
// back to that brings it back, workspace included.
func TestRewindUndoesUnrecordedChanges(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 5, "agent five")) })
	cp := f.turn(s, 1)
	agent := replaceLine(base, 5, "agent five")
	shell := replaceLine(agent, 15, "shell fifteen")
	write(t, s.WorktreePath, "f.txt", shell)
	done, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	f.bothHold(s, "f.txt", agent, "after the rewind")
	recs, err := f.eng.Records(f.ctx, s.ID, "", "f.txt")
	if err == nil {
		err = f.eng.FillContent(f.ctx, recs)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 2 || recs[1].ToolName != "Watch" || recs[1].Status != prsm.StatusRewound || *recs[1].NewContent != shell {
		t.Fatalf("the shell's change is not a rewound record:\n%s", summary(recs))
	}
	if _, err := f.eng.Rewind(f.ctx, s.ID, done.SafetyCheckpointID, false); err != nil {
		t.Fatal(err)
	}
	f.bothHold(s, "f.txt", shell, "after undoing the rewind")
}

// TestUndoingARewindKeepsTheUserEditAConflictLeft: a change that
// conflicted never reached the workspace, so neither a rewind nor its
// undoing writes it over the user's edit.
func TestUndoingARewindKeepsTheUserEditAConflictLeft(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	cp := f.turn(s, 1)
	f.tool(s, "a1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 3, "A3")) })
	// The user takes the agent's line out again, by hand.
	write(t, f.ws, "f.txt", base)
	recs := f.tool(s, "a2", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 3, "B3")) })
	if len(recs) != 1 || recs[0].SyncState != prsm.SyncConflict {
		t.Fatalf("a2: %s", summary(recs))
	}
	user := base
	done, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, f.ws, "f.txt"); got != user {
		t.Errorf("workspace after the rewind:\n%s", got)
	}
	if _, err := f.eng.Rewind(f.ctx, s.ID, done.SafetyCheckpointID, false); err != nil {
		t.Fatal(err)
	}
	if got := read(t, f.ws, "f.txt"); got != user {
		t.Errorf("workspace after undoing the rewind:\n%s", got)
	}
}

// TestSelectorRollbackPreviewRefusesAsTheRollbackDoes: a rollback whose
// records cannot be taken out of the worktree (a later change overlaps)
// is refused by its preview as by the run, and the refused run leaves no
// safety checkpoint behind.
func TestSelectorRollbackPreviewRefusesAsTheRollbackDoes(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "x1", ToolName: "Edit", AgentID: "X", Args: []byte(`{"file_path":"f.txt"}`)}); err != nil {
		t.Fatal(err)
	}
	write(t, s.WorktreePath, "f.txt", replaceLine(base, 3, "X3"))
	f.complete(s, "x1")
	f.tool(s, "y1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 3, "Y3")) })
	before, err := f.eng.Checkpoints(f.ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, dry := range []bool{true, false} {
		_, err := f.eng.SelectRewind(f.ctx, s.ID, api.RollbackRequest{AgentID: "X", DryRun: dry})
		if err == nil || !strings.Contains(err.Error(), "later changes overlap") {
			t.Errorf("rollback (dry run %v): %v", dry, err)
		}
	}
	after, err := f.eng.Checkpoints(f.ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("the refused rollback left %d checkpoint(s)", len(after)-len(before))
	}
}

// TestRewindPastAConflictTakesOutTheRest: a rewind takes out of the
// workspace the changes that reached it and leaves alone the one that
// conflicted (it never did), keeping the user's edit.
func TestRewindPastAConflictTakesOutTheRest(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	cp := f.turn(s, 1)
	user := replaceLine(base, 3, "user three")
	write(t, f.ws, "f.txt", user)
	if recs := f.tool(s, "r1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 3, "R3")) }); recs[0].SyncState != prsm.SyncConflict {
		t.Fatalf("r1: %s", summary(recs))
	}
	f.tool(s, "r2", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 8, "R8")) })
	if got := read(t, f.ws, "f.txt"); got != replaceLine(user, 8, "R8") {
		t.Fatalf("workspace before the rewind:\n%s", got)
	}
	plan, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Conflicts) != 0 {
		t.Errorf("conflicts: %+v", plan.Conflicts)
	}
	if got := read(t, f.ws, "f.txt"); got != user {
		t.Errorf("workspace after the rewind:\n%s", got)
	}
}
