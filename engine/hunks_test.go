package engine_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// Every text record carries its hunks, the blocks of the one diff that
// gives its ranges, numbered as `git diff -U0` numbers them, each with
// the record's status; binary records have none. A record stored before
// prsm kept hunks gets them worked out when it is read.
func TestRecordHunks(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeAuto)
	lines := make([]string, 12)
	for i := range lines {
		lines[i] = "line " + string(rune('a'+i))
	}
	orig := strings.Join(lines, "\n") + "\n"
	recs := f.tool(s, "w0", "Write", "h.txt", func(wt string) { write(t, wt, "h.txt", orig) })
	if len(recs) != 1 || len(recs[0].Hunks) != 1 || recs[0].Hunks[0] != (prsm.Hunk{Index: 0, OldStart: 0, OldLines: 0, NewStart: 1, NewLines: 12, Status: prsm.StatusPending}) {
		t.Fatalf("create: %+v", recs[0].Hunks)
	}
	// Line 2 changed, a line inserted after line 6, lines 10-11 deleted.
	edited := strings.Join(append(append(append([]string{lines[0], "LINE B"}, lines[2:6]...), "inserted"), append(lines[6:9], lines[11])...), "\n") + "\n"
	recs = f.tool(s, "e1", "Edit", "h.txt", func(wt string) { write(t, wt, "h.txt", edited) })
	want := []prsm.Hunk{
		{Index: 0, OldStart: 2, OldLines: 1, NewStart: 2, NewLines: 1, Status: prsm.StatusPending},
		{Index: 1, OldStart: 6, OldLines: 0, NewStart: 7, NewLines: 1, Status: prsm.StatusPending},
		{Index: 2, OldStart: 10, OldLines: 2, NewStart: 10, NewLines: 0, Status: prsm.StatusPending},
	}
	if len(recs) != 1 || !equalHunks(recs[0].Hunks, want) {
		t.Fatalf("edit hunks: %+v\nwant %+v", recs[0].Hunks, want)
	}
	if _, err := f.eng.Accept(f.ctx, s.ID, "e1"); err != nil {
		t.Fatal(err)
	}
	if got := f.shown(s, "e1"); got != "accepted accepted accepted accepted" {
		t.Fatalf("after accept: %s", got)
	}

	// Binary: no hunks.
	recs = f.tool(s, "b1", "Write", "bin.dat", func(wt string) { write(t, wt, "bin.dat", "a\x00b\n") })
	if len(recs) != 1 || recs[0].Hunks == nil || len(recs[0].Hunks) != 0 {
		t.Fatalf("binary record hunks: %#v", recs[0].Hunks)
	}

	// A record from before hunks were kept.
	if _, err := f.eng.DB.Q().ExecContext(f.ctx, "UPDATE records SET hunks = '' WHERE id = 'e1'"); err != nil {
		t.Fatal(err)
	}
	legacy, err := f.eng.Records(f.ctx, s.ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.eng.FillContent(f.ctx, legacy); err != nil { // as the server answers
		t.Fatal(err)
	}
	seen := false
	for _, r := range legacy {
		if r.ID != "e1" {
			continue
		}
		seen = true
		want[0].Status, want[1].Status, want[2].Status = prsm.StatusAccepted, prsm.StatusAccepted, prsm.StatusAccepted
		if !equalHunks(r.Hunks, want) {
			t.Fatalf("legacy record's hunks: %+v", r.Hunks)
		}
	}
	if !seen {
		t.Fatal("no record e1 listed")
	}
}

func equalHunks(a, b []prsm.Hunk) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// twelve is a file of 12 lines, "l1".."l12", and edit changes lines of it
// (by 1-based number).
func twelve() []string {
	out := make([]string, 12)
	for i := range out {
		out[i] = "l" + strconv.Itoa(i+1)
	}
	return out
}

func joinLines(ls []string) string { return strings.Join(ls, "\n") + "\n" }

func edit(lines []string, set map[int]string) string {
	out := append([]string(nil), lines...)
	for n, v := range set {
		out[n-1] = v
	}
	return joinLines(out)
}

// hunkFixture is a session with h.txt of twelve lines committed by a
// Write, then one Edit e1 changing line 2 and line 9: two hunks.
func hunkFixture(t *testing.T, mode string) (*fixture, *prsm.Session, string, string) {
	f := newFixture(t)
	s := f.start(mode)
	base := joinLines(twelve())
	f.tool(s, "w0", "Write", "h.txt", func(wt string) { write(t, wt, "h.txt", base) })
	if mode == prsm.ModeReview {
		if _, err := f.eng.Accept(f.ctx, s.ID, "w0"); err != nil {
			t.Fatal(err)
		}
	}
	edited := edit(twelve(), map[int]string{2: "TWO", 9: "NINE"})
	recs := f.tool(s, "e1", "Edit", "h.txt", func(wt string) { write(t, wt, "h.txt", edited) })
	if len(recs[0].Hunks) != 2 {
		t.Fatalf("hunks: %+v", recs[0].Hunks)
	}
	return f, s, base, edited
}

func (f *fixture) hunks(s *prsm.Session, id string, accept, reject []int) *api.Records {
	f.t.Helper()
	ans, err := f.eng.DecideHunks(f.ctx, s.ID, id, accept, reject)
	if err != nil {
		f.t.Fatalf("decide hunks of %s: %v", id, err)
	}
	return ans
}

// shown is record id's status and its hunks' as the API shows them.
func (f *fixture) shown(s *prsm.Session, id string) string {
	f.t.Helper()
	b, err := json.Marshal(f.record(s, id))
	if err != nil {
		f.t.Fatal(err)
	}
	var r struct {
		Status string
		Hunks  []struct{ Status string }
	}
	json.Unmarshal(b, &r)
	out := r.Status
	for _, h := range r.Hunks {
		out += " " + h.Status
	}
	return out
}

// One Edit with two hunks: rejecting one leaves the file with the other,
// byte for byte, in the workspace and the worktree; accepting the other
// makes the record partial; a whole reject then takes the rest out.
func TestRejectOneHunk(t *testing.T) {
	f, s, base, _ := hunkFixture(t, prsm.ModeAuto)
	ans := f.hunks(s, "e1", nil, []int{0})
	want := edit(twelve(), map[int]string{9: "NINE"})
	f.bothHold(s, "h.txt", want, "after rejecting hunk 0")
	if got := f.shown(s, "e1"); got != "pending rejected pending" {
		t.Fatalf("after the reject: %s", got)
	}
	if len(ans.Records) != 1 || len(ans.Cascaded) != 0 {
		t.Fatalf("answer: %+v", ans)
	}
	// Again: a no-op. The opposite: a conflict. No such hunk: not found.
	f.hunks(s, "e1", nil, []int{0})
	f.bothHold(s, "h.txt", want, "after rejecting hunk 0 again")
	if _, err := f.eng.DecideHunks(f.ctx, s.ID, "e1", []int{0}, nil); !errors.Is(err, prsm.ErrConflict) {
		t.Fatalf("accepting a rejected hunk: %v", err)
	}
	_, err := f.eng.DecideHunks(f.ctx, s.ID, "e1", nil, []int{2})
	var pe *prsm.Error
	if !errors.Is(err, prsm.ErrNotFound) || !errors.As(err, &pe) || !strings.Contains(pe.Hint, "0 to 1") {
		t.Fatalf("hunk 2: %v (%+v)", err, pe)
	}
	f.hunks(s, "e1", []int{1}, nil)
	if got := f.shown(s, "e1"); got != "partial rejected accepted" {
		t.Fatalf("after accepting hunk 1: %s", got)
	}
	f.bothHold(s, "h.txt", want, "after accepting hunk 1")
	if _, err := f.eng.Reject(f.ctx, s.ID, "e1"); err != nil {
		t.Fatal(err)
	}
	f.bothHold(s, "h.txt", base, "after rejecting the partial change whole")
	if got := f.shown(s, "e1"); got != "rejected rejected rejected" {
		t.Fatalf("after the whole reject: %s", got)
	}
}

// A later change whose lines overlap or touch a rejected hunk's is
// rejected with it (its hunk there only); a later change elsewhere in the
// file stays pending.
func TestHunkCascade(t *testing.T) {
	f, s, _, edited := hunkFixture(t, prsm.ModeAuto)
	// e2 rewrites line 2 again (on TWO) and line 12; e3 changes line 5.
	e2 := strings.Replace(strings.Replace(edited, "TWO\n", "TWO!\n", 1), "l12\n", "twelve\n", 1)
	f.tool(s, "e2", "Edit", "h.txt", func(wt string) { write(t, wt, "h.txt", e2) })
	e3 := strings.Replace(e2, "l5\n", "five\n", 1)
	f.tool(s, "e3", "Edit", "h.txt", func(wt string) { write(t, wt, "h.txt", e3) })

	ans := f.hunks(s, "e1", nil, []int{0})
	if len(ans.Cascaded) != 1 || ans.Cascaded[0] != (api.HunkRef{ID: "e2", Index: 0}) {
		t.Fatalf("cascaded: %+v", ans.Cascaded)
	}
	if got := f.shown(s, "e2"); got != "pending rejected pending" {
		t.Fatalf("e2: %s", got)
	}
	if got := f.shown(s, "e3"); got != "pending pending" {
		t.Fatalf("e3: %s", got)
	}
	want := edit(twelve(), map[int]string{5: "five", 9: "NINE", 12: "twelve"})
	f.bothHold(s, "h.txt", want, "after the cascade")
}

// A user's edit between the hunks, in the workspace, survives a hunk's
// reject; an edit of the hunk's own lines makes it a conflict that
// changes nothing.
func TestHunkRejectKeepsUserEdits(t *testing.T) {
	f, s, _, edited := hunkFixture(t, prsm.ModeAuto)
	mine := strings.Replace(edited, "l5\n", "mine\n", 1)
	write(t, f.ws, "h.txt", mine)
	f.hunks(s, "e1", nil, []int{1})
	if got := read(t, f.ws, "h.txt"); got != edit(twelve(), map[int]string{2: "TWO", 5: "mine"}) {
		t.Fatalf("workspace: %q", got)
	}
	if got := read(t, s.WorktreePath, "h.txt"); got != edit(twelve(), map[int]string{2: "TWO"}) {
		t.Fatalf("worktree: %q", got)
	}

	// The user rewrote TWO: rejecting hunk 0 would lose it.
	theirs := strings.Replace(read(t, f.ws, "h.txt"), "TWO\n", "TWO by me\n", 1)
	write(t, f.ws, "h.txt", theirs)
	wt := read(t, s.WorktreePath, "h.txt")
	_, err := f.eng.DecideHunks(f.ctx, s.ID, "e1", nil, []int{0})
	if !errors.Is(err, prsm.ErrConflict) || !strings.Contains(err.Error(), "workspace") {
		t.Fatalf("conflicting reject: %v", err)
	}
	if read(t, f.ws, "h.txt") != theirs || read(t, s.WorktreePath, "h.txt") != wt {
		t.Fatal("a conflicting hunk reject changed a file")
	}
	if got := f.shown(s, "e1"); got != "pending pending rejected" {
		t.Fatalf("after the refused reject: %s", got)
	}
}

// Review mode: the hunks wait; once all are decided, the accepted ones
// reach the workspace, and the record is partial.
func TestHunksReviewMode(t *testing.T) {
	f, s, base, _ := hunkFixture(t, prsm.ModeReview)
	f.hunks(s, "e1", []int{1}, nil)
	if read(t, f.ws, "h.txt") != base {
		t.Fatal("review mode: an accepted hunk reached the workspace before the change was decided")
	}
	f.hunks(s, "e1", nil, []int{0})
	want := edit(twelve(), map[int]string{9: "NINE"})
	f.bothHold(s, "h.txt", want, "after deciding both hunks")
	if got := f.shown(s, "e1"); got != "partial rejected accepted" {
		t.Fatalf("e1: %s", got)
	}
}

// A rewind to the checkpoint before the Edit takes a partial change out
// like any other: both files go back to what they held.
func TestRewindOverPartial(t *testing.T) {
	f, s, base, _ := hunkFixture(t, prsm.ModeAuto)
	cps, err := f.eng.Checkpoints(f.ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	var before *prsm.Checkpoint
	for _, cp := range cps {
		if cp.ToolCallID == "e1" {
			before = cp
		}
	}
	if before == nil {
		t.Fatalf("no checkpoint before e1 among %d", len(cps))
	}
	f.hunks(s, "e1", []int{1}, []int{0})
	if _, err := f.eng.Rewind(f.ctx, s.ID, before.ID, false); err != nil {
		t.Fatal(err)
	}
	f.bothHold(s, "h.txt", base, "after the rewind")
}

// A crash in a hunk reject's cascade, after the first change's lines are
// out and before its statuses are stored, is finished at the next start:
// both files hold what the whole reject gives, and every hunk's status
// says so.
func TestHunkRejectCrash(t *testing.T) {
	f, s, _, edited := hunkFixture(t, prsm.ModeAuto)
	e2 := strings.Replace(edited, "TWO\n", "TWO!\n", 1)
	f.tool(s, "e2", "Edit", "h.txt", func(wt string) { write(t, wt, "h.txt", e2) })
	if !crashing(t, "hunks:reverted", 1, func() { f.eng.DecideHunks(f.ctx, s.ID, "e1", nil, []int{0}) }) {
		t.Fatal("the reject never reached its crash point")
	}
	f.restart()
	f.bothHold(s, "h.txt", edit(twelve(), map[int]string{9: "NINE"}), "after the restart")
	if got := f.shown(s, "e1"); got != "pending rejected pending" {
		t.Fatalf("e1 after the restart: %s", got)
	}
	if got := f.shown(s, "e2"); got != "rejected rejected" {
		t.Fatalf("e2 after the restart: %s", got)
	}
}
