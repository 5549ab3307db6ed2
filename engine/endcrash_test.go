package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testgit"
)

// cutOffRemoval plays `git worktree remove` stopped partway: the first
// half of the worktree's files (in name order) deleted, its .git file
// among them or not.
func cutOffRemoval(t *testing.T, wt string, withGitFile bool) {
	t.Helper()
	var files []string
	if err := filepath.WalkDir(wt, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && filepath.Base(p) != ".git" {
			files = append(files, p)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	for _, p := range files[:len(files)/2] {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	if withGitFile {
		if err := os.Remove(filepath.Join(wt, ".git")); err != nil {
			t.Fatal(err)
		}
	}
}

// endFixture is a session over 20 more files, its one change accepted:
// a session that ends without --discard.
func endFixture(t *testing.T) (*fixture, *prsm.Session) {
	f := newFixture(t)
	for i := 0; i < 20; i++ {
		write(t, f.ws, fmt.Sprintf("d/f%02d.txt", i), fmt.Sprintf("file %d\n", i))
	}
	testgit.Git(t, f.ws, "add", "-A")
	testgit.Git(t, f.ws, "commit", "-qm", "more files")
	s := f.start("")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", "agent\n") })
	if _, err := f.eng.Bulk(f.ctx, s.ID, true, ""); err != nil {
		t.Fatal(err)
	}
	return f, s
}

// TestSessionEndCutOffByACrash: a kill while git removes an ended
// session's worktree leaves the user's workspace as it was, and the next
// start comes up and finishes the removal, whichever files git had
// deleted by then.
func TestSessionEndCutOffByACrash(t *testing.T) {
	for _, withGitFile := range []bool{false, true} {
		t.Run(fmt.Sprintf("git file removed %v", withGitFile), func(t *testing.T) {
			f, s := endFixture(t)
			ws, state := testgit.Tree(t, f.ws, nil), testgit.State(t, f.ws)
			hit := crashing(t, "end:remove", 1, func() {
				restore := engine.SetCrashHook(func(p string) {
					if p == "end:remove" {
						cutOffRemoval(t, s.WorktreePath, withGitFile)
						panic(crash{p})
					}
				})
				defer restore()
				if _, err := f.eng.EndSession(f.ctx, s.ID, false); err != nil {
					t.Fatal(err)
				}
			})
			if !hit {
				t.Fatal("session end passed no crash point before it removed the worktree")
			}
			f.restart()
			if d := testgit.Diff(ws, testgit.Tree(t, f.ws, nil)); d != "" {
				t.Errorf("workspace after the restart:\n%s", d)
			}
			if got := testgit.State(t, f.ws); got != state {
				t.Errorf("repository state after the restart:\n%s\nwant\n%s", got, state)
			}
			got, err := f.eng.Session(f.ctx, s.ID)
			if err != nil || got.Status != prsm.SessionEnded {
				t.Fatalf("session after the restart: %+v %v", got, err)
			}
			if _, err := os.Lstat(s.WorktreePath); !os.IsNotExist(err) {
				t.Errorf("worktree left after the restart: %v", err)
			}
			if l := testgit.Git(t, f.ws, "worktree", "list"); strings.Contains(l, s.WorktreePath) {
				t.Errorf("git still lists the worktree:\n%s", l)
			}
			if b := testgit.Git(t, f.ws, "branch", "--list", s.Branch); b != "" {
				t.Errorf("branch left: %s", b)
			}
		})
	}
}

// TestSessionEndRecordsNoneOfItsRemoval: while git removes the worktree of
// a session that ends, nothing takes the deletions for the agent's: a
// watch record of them would delete the user's files.
func TestSessionEndRecordsNoneOfItsRemoval(t *testing.T) {
	f, s := endFixture(t)
	f.watch()
	ws := testgit.Tree(t, f.ws, nil)
	restore := engine.SetCrashHook(func(p string) {
		if p != "end:remove" {
			return
		}
		cutOffRemoval(t, s.WorktreePath, false)
		if recs, err := f.eng.WatchNow(f.ctx, s.ID); err != nil || len(recs) != 0 {
			t.Errorf("watch during the removal: %v\n%s", err, summary(recs))
		}
	})
	defer restore()
	if _, err := f.eng.EndSession(f.ctx, s.ID, false); err != nil {
		t.Fatal(err)
	}
	restore()
	if d := testgit.Diff(ws, testgit.Tree(t, f.ws, nil)); d != "" {
		t.Errorf("workspace after the end:\n%s", d)
	}
}

// TestStartEndsAHalfRemovedActiveSession: an older prsm removed the
// worktree before it ended the session, so a kill could leave an active
// session whose worktree lost its .git file and half its files. The start
// comes up and ends it without taking the missing files for deletions.
// What is left stays: it cannot be told from a worktree whose .git file
// the user deleted, with the agent's unrecorded work in it.
func TestStartEndsAHalfRemovedActiveSession(t *testing.T) {
	f, s := endFixture(t)
	ws := testgit.Tree(t, f.ws, nil)
	cutOffRemoval(t, s.WorktreePath, true)
	f.restart()
	if d := testgit.Diff(ws, testgit.Tree(t, f.ws, nil)); d != "" {
		t.Errorf("workspace after the restart:\n%s", d)
	}
	got, err := f.eng.Session(f.ctx, s.ID)
	if err != nil || got.Status != prsm.SessionEnded || !strings.Contains(got.Note, ".git") {
		t.Fatalf("session after the restart: %+v %v", got, err)
	}
	if !exists(s.WorktreePath, "d/f19.txt") {
		t.Errorf("the rest of the worktree was deleted")
	}
}
