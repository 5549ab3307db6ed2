package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/engine"
)

// conflicted is a session whose Edit e1 of f.txt (line 5) met the user's
// own edit of that line in the workspace: in conflict, the workspace as
// the user has it.
func conflicted(t *testing.T) (f *fixture, s *prsm.Session, base, mine, agent string) {
	f = newFixture(t)
	s = f.start("")
	base = read(t, f.ws, "f.txt")
	mine = replaceLine(base, 5, "user five")
	write(t, f.ws, "f.txt", mine)
	agent = replaceLine(base, 5, "agent five")
	recs := f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", agent) })
	if recs[0].SyncState != prsm.SyncConflict || read(t, f.ws, "f.txt") != mine {
		t.Fatalf("no conflict: %s", recs[0].SyncState)
	}
	return
}

// A conflict is settled three ways: mine rejects the change and keeps the
// workspace; agent writes the agent's version and accepts it; markers
// writes both between git's markers and accepts once they are gone.
func TestResolveConflict(t *testing.T) {
	t.Run("mine", func(t *testing.T) {
		f, s, base, mine, _ := conflicted(t)
		if _, err := f.eng.Resolve(f.ctx, s.ID, "e1", engine.ResolveMine); err != nil {
			t.Fatal(err)
		}
		if read(t, f.ws, "f.txt") != mine || read(t, s.WorktreePath, "f.txt") != base {
			t.Fatal("mine: the workspace must stay, the worktree lose the change")
		}
		if r := f.record(s, "e1"); r.Status != prsm.StatusRejected {
			t.Fatalf("mine: %s", r.Status)
		}
	})
	t.Run("agent", func(t *testing.T) {
		f, s, _, _, agent := conflicted(t)
		ans, err := f.eng.Resolve(f.ctx, s.ID, "e1", engine.ResolveAgent)
		if err != nil {
			t.Fatal(err)
		}
		if read(t, f.ws, "f.txt") != agent {
			t.Fatalf("agent: workspace %q", read(t, f.ws, "f.txt"))
		}
		if r := ans.Records[0]; r.Status != prsm.StatusAccepted || r.SyncState != prsm.SyncSynced {
			t.Fatalf("agent: %s/%s", r.Status, r.SyncState)
		}
		// Settled: a second resolve is refused.
		if _, err := f.eng.Resolve(f.ctx, s.ID, "e1", engine.ResolveMine); !errors.Is(err, prsm.ErrConflict) {
			t.Fatalf("resolving a settled change: %v", err)
		}
	})
	t.Run("markers", func(t *testing.T) {
		f, s, _, mine, agent := conflicted(t)
		if _, err := f.eng.Resolve(f.ctx, s.ID, "e1", engine.ResolveMarkers); err != nil {
			t.Fatal(err)
		}
		got := read(t, f.ws, "f.txt")
		if !strings.Contains(got, "<<<<<<< yours\nuser five\n=======\nagent five\n>>>>>>> agent (e1)\n") {
			t.Fatalf("markers: workspace %q", got)
		}
		f.eng.ResolveMarkersNow(f.ctx)
		if r := f.record(s, "e1"); r.SyncState != prsm.SyncConflict || r.Status != prsm.StatusPending || !strings.Contains(r.Note, "markers") {
			t.Fatalf("markers still there: %s/%s %q", r.Status, r.SyncState, r.Note)
		}
		// Markers again would nest; mine would leave them: both refused,
		// the file as it is.
		for _, how := range []string{engine.ResolveMarkers, engine.ResolveMine} {
			if _, err := f.eng.Resolve(f.ctx, s.ID, "e1", how); !errors.Is(err, prsm.ErrConflict) || !strings.Contains(err.Error(), "being merged in your editor") {
				t.Fatalf("%s while the markers are in the file: %v", how, err)
			}
		}
		if read(t, f.ws, "f.txt") != got {
			t.Fatal("a refused resolve changed the file")
		}
		// The user settles it: both lines kept.
		both := strings.Replace(mine, "user five\n", "user five\nagent five\n", 1)
		write(t, f.ws, "f.txt", both)
		f.eng.ResolveMarkersNow(f.ctx)
		if r := f.record(s, "e1"); r.Status != prsm.StatusAccepted || r.SyncState != prsm.SyncSynced {
			t.Fatalf("markers gone: %s/%s", r.Status, r.SyncState)
		}
		if read(t, f.ws, "f.txt") != both {
			t.Fatal("the user's resolution was touched")
		}
		_ = agent
	})
	t.Run("bad", func(t *testing.T) {
		f, s, _, mine, _ := conflicted(t)
		if _, err := f.eng.Resolve(f.ctx, s.ID, "e1", "theirs"); !errors.Is(err, prsm.ErrInvalid) {
			t.Fatalf("unknown how: %v", err)
		}
		if _, err := f.eng.Resolve(f.ctx, s.ID, "nope", engine.ResolveMine); !errors.Is(err, prsm.ErrNotFound) {
			t.Fatalf("unknown id: %v", err)
		}
		f.tool(s, "e2", "Edit", "g.txt", func(wt string) { write(t, wt, "g.txt", "g\n") })
		if _, err := f.eng.Resolve(f.ctx, s.ID, "e2", engine.ResolveAgent); !errors.Is(err, prsm.ErrConflict) {
			t.Fatalf("not in conflict: %v", err)
		}
		if read(t, f.ws, "f.txt") != mine {
			t.Fatal("a refused resolve changed the workspace")
		}
	})
}
