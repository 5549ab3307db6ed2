package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/store"
)

// TestFileAndDirectorySwapPlaces: one tool call replaces a directory with
// a file of the same name, and a file with a directory. Its records
// reach the workspace in an order that works (the removals first), and
// rejecting it, rewinding before it and undoing that rewind all put both
// trees back as they were, the workspace equal to the worktree.
func TestFileAndDirectorySwapPlaces(t *testing.T) {
	for _, mode := range []string{prsm.ModeAuto, prsm.ModeReview} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t)
			write(t, f.ws, "d/x", "x\n")
			write(t, f.ws, "d/y", "y\n")
			write(t, f.ws, "a", "a file\n")
			testgit.Git(t, f.ws, "add", "-A")
			testgit.Git(t, f.ws, "commit", "-qm", "d and a")
			orig := testgit.Tree(t, f.ws, nil)
			s := f.start(mode)
			swap := func(id string) {
				f.tool(s, id, "Bash", "", func(wt string) {
					sh(t, wt, "rm -r d && echo dfile > d && rm a && mkdir a && echo b > a/b")
				})
				if mode == prsm.ModeReview {
					if _, err := f.eng.Bulk(f.ctx, s.ID, true, ""); err != nil {
						t.Fatal(err)
					}
				}
			}
			same := func(when string) map[string]string {
				t.Helper()
				engine.Settle(f.eng)
				ws, wt := testgit.Tree(t, f.ws, nil), testgit.Tree(t, s.WorktreePath, nil)
				if d := testgit.Diff(wt, ws); d != "" {
					t.Fatalf("%s: worktree and workspace differ:\n%s", when, d)
				}
				recs, err := f.eng.Records(f.ctx, s.ID, "", "")
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range recs {
					if r.SyncState == prsm.SyncConflict {
						t.Errorf("%s: conflict %s", when, summary([]*prsm.Record{r}))
					}
				}
				return ws
			}
			swap("t1")
			swapped := same("after the tool call")
			if !strings.Contains(swapped["d"], "dfile") || !strings.Contains(swapped["a/b"], "b") {
				t.Fatalf("workspace after the tool call: %v", swapped)
			}
			if _, err := f.eng.Reject(f.ctx, s.ID, "t1"); err != nil {
				t.Fatalf("reject: %v", err)
			}
			if d := testgit.Diff(orig, same("after the reject")); d != "" {
				t.Errorf("after the reject:\n%s", d)
			}
			cp := f.turn(s, 1)
			swap("t2")
			same("after the second tool call")
			done, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false)
			if err != nil {
				t.Fatalf("rewind: %v", err)
			}
			if d := testgit.Diff(orig, same("after the rewind")); d != "" {
				t.Errorf("after the rewind:\n%s", d)
			}
			if _, err := f.eng.Rewind(f.ctx, s.ID, done.SafetyCheckpointID, false); err != nil {
				t.Fatalf("undo the rewind: %v", err)
			}
			if mode == prsm.ModeReview {
				if _, err := f.eng.Bulk(f.ctx, s.ID, true, ""); err != nil {
					t.Fatal(err)
				}
			}
			if d := testgit.Diff(swapped, same("after undoing the rewind")); d != "" {
				t.Errorf("after undoing the rewind:\n%s", d)
			}
		})
	}
}

// TestDirectoryReplacedByALink: a directory replaced by a symlink of its
// name is two changes, its files deleted and the link created, and both
// reach the workspace.
func TestDirectoryReplacedByALink(t *testing.T) {
	outside := t.TempDir()
	write(t, outside, "x", "outside\n")
	for _, c := range []struct {
		name, target string
		watched      bool
	}{{"scan", "e", false}, {"watched", "e", true}, {"outside", outside, true}} {
		watched := c.watched
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			write(t, f.ws, "d/x", "x\n")
			write(t, f.ws, "e/y", "y\n")
			testgit.Git(t, f.ws, "add", "-A")
			testgit.Git(t, f.ws, "commit", "-qm", "d and e")
			if watched {
				f.watch()
			}
			s := f.start(prsm.ModeAuto)
			recs := f.tool(s, "l1", "Bash", "", func(wt string) { sh(t, wt, "rm -r d && ln -s "+c.target+" d") })
			if got := summary(recs); got != "l1:0 create d pending/synced\nl1:1 delete d/x pending/synced" {
				t.Errorf("records:\n%s", got)
			}
			same := func(when string) {
				t.Helper()
				engine.Settle(f.eng)
				if d := testgit.Diff(testgit.Tree(t, s.WorktreePath, nil), testgit.Tree(t, f.ws, nil)); d != "" {
					t.Errorf("%s: worktree and workspace differ:\n%s", when, d)
				}
			}
			same("after the tool call")
			orig := testgit.Tree(t, f.ws, nil)
			// And back: a rewind before the tool call, and its undoing.
			cp := f.turn(s, 1)
			if _, err := f.eng.Reject(f.ctx, s.ID, "l1"); err != nil {
				t.Fatalf("reject: %v", err)
			}
			same("after the reject")
			if got := read(t, f.ws, "d/x"); got != "x\n" {
				t.Errorf("workspace d/x after the reject: %q", got)
			}
			done, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false)
			if err != nil {
				t.Fatalf("rewind: %v", err)
			}
			same("after the rewind")
			if d := testgit.Diff(orig, testgit.Tree(t, f.ws, nil)); d != "" {
				t.Errorf("after the rewind:\n%s", d)
			}
			if _, err := f.eng.Rewind(f.ctx, s.ID, done.SafetyCheckpointID, false); err != nil {
				t.Fatalf("undo the rewind: %v", err)
			}
			same("after undoing the rewind")
			if got := read(t, outside, "x"); got != "outside\n" {
				t.Errorf("the file outside changed: %q", got)
			}
		})
	}
}

// TestLinkReplacedByADirectoryRollsBack (issue 42, item 11): a symlink
// made in one turn, replaced by a directory of its name in the next. A
// directory where a file was holds no file of its own (its files are
// paths of their own), so --last and --after rollbacks plan over it (no
// "not a regular file or symlink") and run: undoing the second turn puts
// the link back in both trees, undoing both leaves neither, and each
// preview says what the run does.
func TestLinkReplacedByADirectoryRollsBack(t *testing.T) {
	for _, c := range []struct {
		name string
		req  func(turn2 time.Time) api.RollbackRequest
		want map[string]string // the workspace's w and w/f afterwards
		ops  string
	}{
		{"last 2", func(time.Time) api.RollbackRequest { return api.RollbackRequest{Last: 2} },
			map[string]string{"w": "link f.txt"}, "create w [t2:0]; delete w/f [t2:1]"},
		{"after", func(t2 time.Time) api.RollbackRequest {
			return api.RollbackRequest{After: t2.Format(time.RFC3339Nano)}
		}, map[string]string{"w": "link f.txt"}, "create w [t2:0]; delete w/f [t2:1]"},
		{"last 3", func(time.Time) api.RollbackRequest { return api.RollbackRequest{Last: 3} },
			map[string]string{}, "delete w [t1:0 t2:0]; delete w/f [t2:1]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			s := f.start(prsm.ModeAuto)
			f.turn(s, 1)
			if got := summary(f.tool(s, "t1", "Bash", "", func(wt string) { sh(t, wt, "ln -s f.txt w") })); got != "t1:0 create w pending/synced" {
				t.Fatalf("turn 1 records:\n%s", got)
			}
			f.turn(s, 2)
			t2 := time.Now().Add(-time.Millisecond)
			recs := f.tool(s, "t2", "Bash", "", func(wt string) { sh(t, wt, "rm w && mkdir w && echo x > w/f") })
			if got := summary(recs); got != "t2:0 delete w pending/synced\nt2:1 create w/f pending/synced" {
				t.Fatalf("turn 2 records:\n%s", got)
			}
			if got := read(t, f.ws, "w/f"); got != "x\n" {
				t.Fatalf("workspace w/f = %q", got)
			}
			before := testgit.Tree(t, f.ws, nil)
			req := c.req(t2)
			req.DryRun = true
			plan, err := f.eng.SelectRewind(f.ctx, s.ID, req)
			if err != nil {
				t.Fatalf("preview: %v", err)
			}
			if got := planOps(plan); got != c.ops || len(plan.Conflicts) != 0 {
				t.Errorf("preview: operations %s, conflicts %+v; want %s and none", got, plan.Conflicts, c.ops)
			}
			if d := testgit.Diff(before, testgit.Tree(t, f.ws, nil)); d != "" {
				t.Fatalf("the preview changed the workspace:\n%s", d)
			}
			req.DryRun = false
			if _, err := f.eng.SelectRewind(f.ctx, s.ID, req); err != nil {
				t.Fatalf("rollback: %v", err)
			}
			engine.Settle(f.eng)
			ws, wt := testgit.Tree(t, f.ws, nil), testgit.Tree(t, s.WorktreePath, nil)
			if d := testgit.Diff(wt, ws); d != "" {
				t.Errorf("worktree and workspace differ:\n%s", d)
			}
			got := map[string]string{}
			for _, p := range []string{"w", "w/f"} {
				if v, ok := ws[p]; ok {
					got[p] = v
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("workspace w, w/f = %v, want %v", got, c.want)
			}
			all, err := f.eng.Records(f.ctx, s.ID, "", "")
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range all {
				if r.SyncState == prsm.SyncConflict {
					t.Errorf("conflict: %s", summary([]*prsm.Record{r}))
				}
			}
		})
	}
}

// planOps is a plan's operations as "type path [records]; ...".
func planOps(p *api.Plan) string {
	var out []string
	for _, op := range p.Operations {
		out = append(out, fmt.Sprintf("%s %s %v", op.Type, op.Path, op.RecordIDs))
	}
	return strings.Join(out, "; ")
}

// TestLinkBackOverAKeptDirectory: a link cannot come back where a
// directory still holds files the rollback keeps. In the workspace (a
// file of the user's in it) the preview says so and the run leaves the
// directory as it is, marking the link's change a conflict; in the
// worktree (a later change of another agent in it) the rollback is
// refused, and changes nothing.
func TestLinkBackOverAKeptDirectory(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeAuto)
	f.tool(s, "t1", "Bash", "", func(wt string) { sh(t, wt, "ln -s f.txt w") })
	f.tool(s, "t2", "Bash", "", func(wt string) { sh(t, wt, "rm w && mkdir w && echo x > w/f") })
	write(t, f.ws, "w/mine", "the user's\n")
	plan, err := f.eng.SelectRewind(f.ctx, s.ID, api.RollbackRequest{Last: 2, DryRun: true})
	if err != nil {
		t.Fatalf("preview: %v", err)
	}
	if len(plan.Conflicts) != 1 || plan.Conflicts[0].Path != "w" || !strings.Contains(plan.Conflicts[0].Reason, "directory there") {
		t.Errorf("preview conflicts: %+v", plan.Conflicts)
	}
	if _, err := f.eng.SelectRewind(f.ctx, s.ID, api.RollbackRequest{Last: 2}); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	engine.Settle(f.eng)
	ws := testgit.Tree(t, f.ws, nil)
	if ws["w/mine"] == "" || ws["w/f"] != "" {
		t.Errorf("workspace w/: mine %q, f %q", ws["w/mine"], ws["w/f"])
	}
	if got := testgit.Tree(t, s.WorktreePath, nil)["w"]; got != "link f.txt" {
		t.Errorf("worktree w = %q, want the link back", got)
	}
	recs, err := f.eng.Records(f.ctx, s.ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.ID == "t2:0" && r.SyncState != prsm.SyncConflict {
			t.Errorf("t2:0 %s/%s, want a conflict", r.Status, r.SyncState)
		}
	}

	// The worktree: another agent's file in the directory stays.
	s2 := f.start(prsm.ModeAuto)
	byOther := func(id string, act func(wt string)) {
		if _, err := f.eng.StartToolCall(f.ctx, s2.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Bash", Args: []byte("{}"), AgentID: "other"}); err != nil {
			t.Fatal(err)
		}
		act(s2.WorktreePath)
		f.complete(s2, id)
	}
	byOther("u1", func(wt string) { sh(t, wt, "ln -s f.txt v") })
	f.tool(s2, "u2", "Bash", "", func(wt string) { sh(t, wt, "rm v && mkdir v && echo x > v/f") })
	byOther("u3", func(wt string) { write(t, wt, "v/g", "other's\n") })
	wt := testgit.Tree(t, s2.WorktreePath, nil)
	_, err = f.eng.SelectRewind(f.ctx, s2.ID, api.RollbackRequest{AgentID: "claude"})
	if !errors.Is(err, prsm.ErrConflict) || !strings.Contains(err.Error(), "v cannot come back") {
		t.Fatalf("rollback over a kept directory in the worktree: %v", err)
	}
	if d := testgit.Diff(wt, testgit.Tree(t, s2.WorktreePath, nil)); d != "" {
		t.Errorf("the refused rollback changed the worktree:\n%s", d)
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
