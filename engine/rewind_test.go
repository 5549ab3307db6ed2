package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// TestRewindRestoresDecisions is the demo's rollback to a named
// checkpoint (issue 37): a change accepted since goes back to pending, a
// change rejected since comes back pending and into the workspace (auto
// mode), the changes made since are rewound (not pending, no new record),
// the preview says so in plain words, a rewound change refuses decisions,
// and undoing the rollback brings every status and file back.
func TestRewindRestoresDecisions(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeAuto)
	base := read(t, f.ws, "f.txt")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 3, "three")) })
	f.tool(s, "w1", "Write", "app.py", func(wt string) { write(t, wt, "app.py", "print(1)\n") })
	cp, err := f.eng.CreateCheckpoint(f.ctx, s.ID, api.CheckpointRequest{Name: "both"})
	if err != nil {
		t.Fatal(err)
	}
	wsAtCP, wtAtCP := f.trees(s)
	if _, err := f.eng.Accept(f.ctx, s.ID, "e1"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.Reject(f.ctx, s.ID, "w1"); err != nil {
		t.Fatal(err)
	}
	if exists(f.ws, "app.py") {
		t.Fatal("the reject left app.py in the workspace")
	}
	f.tool(s, "e2", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 9, "nine")) })
	f.tool(s, "n1", "Write", "new.txt", func(wt string) { write(t, wt, "new.txt", "new\n") })
	wsBefore, wtBefore := f.trees(s)
	before := f.records(s)

	preview, err := f.eng.RewindPlan(f.ctx, s.ID, cp.ID)
	if err != nil {
		t.Fatal(err)
	}
	sum := strings.Join(preview.Summary, "\n")
	for _, want := range []string{
		"2 changes made after this checkpoint are set aside as rewound",
		"1 change accepted since the checkpoint becomes pending again",
		"1 change rejected since the checkpoint becomes pending again",
		"in your workspace go back to what they held then",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("preview summary lacks %q:\n%s", want, sum)
		}
	}
	if len(preview.Decisions) != 4 || len(preview.Warnings) != 1 || !strings.Contains(preview.Warnings[0], "undoes accepted change e1") {
		t.Errorf("preview decisions %+v warnings %q", preview.Decisions, preview.Warnings)
	}
	if ws, wt := f.trees(s); len(ws) != len(wsBefore) || f.records(s) != before || len(wt) != len(wtBefore) {
		t.Fatal("the preview changed something")
	}

	done, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(done.Conflicts) != 0 {
		t.Errorf("conflicts: %+v", done.Conflicts)
	}
	if got := f.records(s); got != "e1 modify f.txt pending/synced\nw1 create app.py pending/synced\ne2 modify f.txt rewound/synced\nn1 create new.txt rewound/synced" {
		t.Errorf("records after the rewind:\n%s", got)
	}
	ws, wt := f.trees(s)
	f.same("workspace after the rewind", wsAtCP, ws)
	f.same("worktree after the rewind", wtAtCP, wt)
	if got := read(t, f.ws, "app.py"); got != "print(1)\n" {
		t.Errorf("app.py, rejected after the checkpoint, is not back: %q", got)
	}
	// A rewound change is out: no decision on it.
	for _, decide := range []func() error{
		func() error { _, err := f.eng.Accept(f.ctx, s.ID, "e2"); return err },
		func() error { _, err := f.eng.Reject(f.ctx, s.ID, "n1"); return err },
	} {
		if err := decide(); !errors.Is(err, prsm.ErrConflict) || !strings.Contains(err.Error(), "rewound") {
			t.Errorf("a decision on a rewound change: %v", err)
		}
	}
	if got := f.records(s); !strings.Contains(got, "e2 modify f.txt rewound/synced") {
		t.Errorf("the refused decision changed the record:\n%s", got)
	}
	// Bulk reject touches pending records only: e1 and w1, not the rewound.
	pend, _ := f.eng.Records(f.ctx, s.ID, prsm.StatusPending, "")
	if len(pend) != 2 {
		t.Errorf("pending after the rewind: %s", summary(pend))
	}

	// Undo: every status and file as before the rewind.
	if _, err := f.eng.Rewind(f.ctx, s.ID, done.SafetyCheckpointID, false); err != nil {
		t.Fatal(err)
	}
	if got := f.records(s); got != before {
		t.Errorf("records after the undo:\n%s\nwant\n%s", got, before)
	}
	ws, wt = f.trees(s)
	f.same("workspace after the undo", wsBefore, ws)
	f.same("worktree after the undo", wtBefore, wt)
}
