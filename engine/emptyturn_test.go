package engine_test

import (
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// A turn that starts where the turn before it started, with nothing done
// in between (`prsm run -- claude` is a turn, and so is the prompt Claude
// Code's hook reports at once), takes over that turn's checkpoint: one
// checkpoint, named after the newer prompt, counted once. A turn after a
// tool call, after records (even ones that left the tree as it was), or
// after an annotated checkpoint gets its own.
func TestEmptyTurnIsNotCheckpointedTwice(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	turn := func(prompt string) *prsm.Checkpoint {
		t.Helper()
		cp, err := f.eng.Turn(f.ctx, s.ID, api.TurnRequest{Prompt: prompt})
		if err != nil {
			t.Fatal(err)
		}
		return cp
	}
	turns := func() []string {
		t.Helper()
		list, err := f.eng.Checkpoints(f.ctx, s.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range list {
			if c.Kind == prsm.CheckpointAuto && c.ToolCallID == "" {
				out = append(out, c.Name)
			}
		}
		return out
	}

	run := turn("prsm run claude -p fix the bug")
	prompt := turn("fix the bug")
	if prompt.ID != run.ID || prompt.Tree != run.Tree || prompt.Name != "turn 1: fix the bug" || prompt.MessageIndex != 1 {
		t.Fatalf("the prompt's turn on the run's unchanged tree: %+v, want the run's checkpoint %s as turn 1: fix the bug", prompt, run.ID)
	}
	if got := turns(); len(got) != 1 || got[0] != "turn 1: fix the bug" {
		t.Fatalf("turn checkpoints %q, want one", got)
	}
	recs := f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 2, "fixed")) })
	if len(recs) != 1 || recs[0].MessageIndex != 1 {
		t.Fatalf("the prompt's edit: %+v, want one record of turn 1", recs)
	}

	// After a tool call: a turn of its own.
	second := turn("and test it")
	if second.ID == prompt.ID || second.Name != "turn 2: and test it" {
		t.Fatalf("a turn after a tool call: %+v", second)
	}
	// Records that leave the tree as the turn found it still count.
	write(t, s.WorktreePath, "scratch.txt", "tmp\n")
	if recs, err := f.eng.EndTurn(f.ctx, s.ID); err != nil || len(recs) != 1 {
		t.Fatalf("watch record of scratch.txt: %v %+v", err, recs)
	}
	sh(t, s.WorktreePath, "rm scratch.txt")
	if recs, err := f.eng.EndTurn(f.ctx, s.ID); err != nil || len(recs) != 1 {
		t.Fatalf("watch record of scratch.txt's removal: %v %+v", err, recs)
	}
	third := turn("again")
	if third.ID == second.ID || third.Tree != second.Tree || third.Name != "turn 3: again" {
		t.Fatalf("a turn after records: %+v, want its own checkpoint on the same tree", third)
	}
	// An annotated checkpoint is the user's: kept as it is.
	if _, err := f.eng.Annotate(f.ctx, s.ID, third.ID, "keep this one"); err != nil {
		t.Fatal(err)
	}
	fourth := turn("once more")
	if fourth.ID == third.ID || fourth.Name != "turn 4: once more" {
		t.Fatalf("a turn after an annotated one: %+v", fourth)
	}
	if got, want := turns(), []string{"turn 1: fix the bug", "turn 2: and test it", "turn 3: again", "turn 4: once more"}; len(got) != len(want) {
		t.Fatalf("turn checkpoints %q, want %q", got, want)
	}

	// The checkpoint taken over is still where a rewind undoes the run.
	if _, err := f.eng.Rewind(f.ctx, s.ID, run.ID, false); err != nil {
		t.Fatal(err)
	}
	if got := read(t, f.ws, "f.txt"); got != base {
		t.Fatalf("workspace f.txt after the rewind to the run's checkpoint:\n%s", got)
	}
}
