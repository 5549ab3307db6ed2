package engine_test

import (
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testgit"
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
