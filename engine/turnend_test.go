package engine_test

import (
	"errors"
	"testing"

	"github.com/prsm-dev/prsm"
)

// TestTheEndOfATurnClosesADeniedCall: Claude Code's Stop ends the turn.
// A tool call whose PostToolUse never came (the user denied the tool) is
// closed then, not at the next prompt: until then it held up rewinds, and
// what changed in the worktree meanwhile had no record. The end of the
// turn records that change (a Watch call) and lets the rewind run.
func TestTheEndOfATurnClosesADeniedCall(t *testing.T) {
	scannedAndWatched(t, func(t *testing.T, f *fixture) {
		s := f.start(prsm.ModeAuto)
		first := f.turn(s, 1)
		f.capture(s, "denied", "Write", "notes.txt")
		// A process the agent started in the background writes a file.
		write(t, s.WorktreePath, "bg.txt", "background\n")
		_, err := f.eng.Rewind(f.ctx, s.ID, first.ID, false)
		if pe := (*prsm.Error)(nil); !errors.As(err, &pe) || pe.Code != "tool_call_in_flight" {
			t.Fatalf("rewind with the denied call open: %v, want tool_call_in_flight", err)
		}
		recs, err := f.eng.EndTurn(f.ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 1 || recs[0].ToolName != "Watch" || recs[0].RelPath != "bg.txt" ||
			recs[0].ChangeType != prsm.ChangeCreate || recs[0].SyncState != prsm.SyncSynced {
			t.Fatalf("the end of the turn recorded %s, want a synced Watch create of bg.txt", summary(recs))
		}
		if got := read(t, f.ws, "bg.txt"); got != "background\n" {
			t.Errorf("workspace bg.txt: %q", got)
		}
		// Ending it again finds nothing more to do.
		if again, err := f.eng.EndTurn(f.ctx, s.ID); err != nil || len(again) != 0 {
			t.Errorf("a second end of the turn: %s, %v", summary(again), err)
		}
		if _, err := f.eng.Rewind(f.ctx, s.ID, first.ID, false); err != nil {
			t.Fatalf("rewind after the end of the turn: %v", err)
		}
		if exists(f.ws, "bg.txt") || exists(s.WorktreePath, "bg.txt") {
			t.Errorf("bg.txt survived the rewind (workspace %v, worktree %v)", exists(f.ws, "bg.txt"), exists(s.WorktreePath, "bg.txt"))
		}
		// A late PostToolUse of the closed call records nothing.
		if recs := f.complete(s, "denied"); len(recs) != 0 {
			t.Errorf("the closed call's late complete: %s", summary(recs))
		}
		if _, err := f.eng.EndTurn(f.ctx, "nosuchsession"); !errors.Is(err, prsm.ErrNotFound) {
			t.Errorf("end of a turn of an unknown session: %v", err)
		}
	})
}
