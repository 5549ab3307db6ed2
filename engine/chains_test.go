package engine_test

// Chains of accepts, rejects, rewinds, undone rewinds and selector
// rollbacks (from an audit of review-mode rewinds, 2026-11-24), each run
// in review mode, in review mode ended by accept-all and by reject-all,
// and in auto mode. After every step the harness checks that the
// workspace and the worktree agree: equal in auto mode; in review mode,
// the workspace with the pending records applied gives the worktree, so
// nothing in the worktree is out of the user's reach and nothing reached
// the workspace without an accept. Each scenario also checks the files it
// expects by content.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/tracker"
)

const chainAbsent = "<absent>"

var chainFiles = []string{"f.txt", "g.txt", "n.txt", "keep.txt"}

type chain struct {
	*fixture
	s      *prsm.Session
	base   string
	review bool
	step   int
	// snaps are the session as it was at each checkpoint the chain took
	// or a rollback's safety checkpoint noted: what a rewind to it gives
	// back (SPEC rule 5).
	snaps map[string]fuzzCP
}

// snapNow is the session as it is: files and every record's status.
func (z *chain) snapNow() fuzzCP {
	return fuzzCP{wt: z.snap(z.wt), ws: z.snap(z.ws), st: z.statuses()}
}

// wantSnap checks that a rewind to cp gave back the session as it was
// then: worktree and workspace files (no user edits in chains), every
// record's status of then, the later records rewound, and no new record.
func (z *chain) wantSnap(cp string, before map[string]string, what string) {
	z.t.Helper()
	c, ok := z.snaps[cp]
	if !ok {
		return // taken outside the chain's helpers
	}
	for _, rel := range chainFiles {
		if got := z.wt(rel); got != c.wt[rel] {
			z.t.Errorf("WT-NOT-CHECKPOINT after %s: %s\ngot:\n%s\nwant:\n%s\nrecords:\n%s", what, rel, got, c.wt[rel], z.records(z.s))
		}
		if got := z.ws(rel); got != c.ws[rel] {
			z.t.Errorf("WS-NOT-CHECKPOINT after %s: %s\ngot:\n%s\nwant:\n%s\nrecords:\n%s", what, rel, got, c.ws[rel], z.records(z.s))
		}
	}
	z.checkRewound(what, c, before)
}

func chainNew(t *testing.T, mode string) *chain {
	f := newFixture(t)
	s := f.start(mode)
	return &chain{fixture: f, s: s, base: read(t, f.ws, "f.txt"), review: mode == prsm.ModeReview, snaps: map[string]fuzzCP{}}
}

func chainGet(root, rel string) string {
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		return chainAbsent
	}
	return string(b)
}

func (z *chain) ws(rel string) string { return chainGet(z.fixture.ws, rel) }
func (z *chain) wt(rel string) string { return chainGet(z.s.WorktreePath, rel) }

func chainVersion(c string) sync.Version {
	if c == chainAbsent {
		return sync.Absent
	}
	return sync.Version{Present: true, Mode: 0o100644, Content: []byte(c)}
}

func chainString(v sync.Version) string {
	if !v.Present {
		return chainAbsent
	}
	return string(v.Content)
}

func (z *chain) side(id, side string) string {
	b, _, err := z.eng.Content(z.ctx, z.s.ID, id, side)
	if err != nil {
		return chainAbsent
	}
	return string(b)
}

// effective is a record's after side less the hunks rejected one by one.
func (z *chain) effective(r *prsm.Record) string {
	before, after := z.side(r.ID, "before"), z.side(r.ID, "after")
	rejected := false
	for _, h := range r.Hunks {
		rejected = rejected || h.Status == prsm.StatusRejected
	}
	if !rejected {
		return after
	}
	keep := func(i int) bool { return r.Hunks[i].Status != prsm.StatusRejected }
	b, err := tracker.ApplyHunks([]byte(strings.TrimSuffix(before, chainAbsent)), []byte(strings.TrimSuffix(after, chainAbsent)), keep)
	if err != nil {
		z.t.Fatalf("hunks of %s: %v", r.ID, err)
	}
	return string(b)
}

// check runs after every step: in auto mode the workspace equals the
// worktree; in review mode applying the pending records of each file to
// the workspace gives the worktree (the difference is explained).
func (z *chain) check(what string) {
	z.t.Helper()
	z.step++
	when := fmt.Sprintf("step %d (%s)", z.step, what)
	if os.Getenv("CHAINDEBUG") != "" {
		z.t.Logf("%s: wt f=%s ws f=%s wt g=%s ws g=%s\n%s", when, z.compact(z.wt("f.txt")), z.compact(z.ws("f.txt")), z.compact(z.wt("g.txt")), z.compact(z.ws("g.txt")), z.debugRecords())
	}
	for _, rel := range chainFiles {
		wt, ws := z.wt(rel), z.ws(rel)
		if !z.review {
			if wt != ws {
				z.t.Errorf("AUTO %s: %s differs: worktree\n%s\nworkspace\n%s\nrecords:\n%s", when, rel, wt, ws, z.records(z.s))
			}
			continue
		}
		pend, err := z.eng.Records(z.ctx, z.s.ID, prsm.StatusPending, rel)
		if err != nil {
			z.t.Fatal(err)
		}
		v := chainVersion(ws)
		ok := true
		for _, r := range pend {
			v, ok = sync.Merge(chainVersion(z.side(r.ID, "before")), v, chainVersion(z.effective(r)))
			if !ok {
				break
			}
		}
		if !ok || chainString(v) != wt {
			z.t.Errorf("UNEXPLAINED %s: %s: workspace + pending records != worktree\nworktree:\n%s\nworkspace:\n%s\nws+pending (ok %v):\n%s\nrecords:\n%s",
				when, rel, wt, ws, ok, chainString(v), z.records(z.s))
		}
	}
}

func (z *chain) edit(id, rel string, line int, text string) {
	z.t.Helper()
	z.tool(z.s, id, "Edit", rel, func(wt string) {
		cur := chainGet(wt, rel)
		if cur == chainAbsent {
			cur = z.base
		}
		write(z.t, wt, rel, replaceLine(cur, line, text))
	})
	z.check("edit " + id)
}

func (z *chain) put(id, rel, content string) {
	z.t.Helper()
	z.tool(z.s, id, "Write", rel, func(wt string) { write(z.t, wt, rel, content) })
	z.check("write " + id)
}

func (z *chain) rm(id, rel string) {
	z.t.Helper()
	z.tool(z.s, id, "Bash", "", func(wt string) {
		if err := os.Remove(filepath.Join(wt, rel)); err != nil {
			z.t.Fatal(err)
		}
	})
	z.check("rm " + id)
}

func (z *chain) cp(n int) string {
	z.t.Helper()
	id := z.turn(z.s, n).ID
	z.snaps[id] = z.snapNow()
	return id
}

// acceptedAndPending takes a checkpoint, then makes two changes of
// f.txt: line 3 (a1, accepted) and line 10 (p1, pending). It returns the
// checkpoint.
func (z *chain) acceptedAndPending() string {
	z.t.Helper()
	cp := z.cp(1)
	z.edit("a1", "f.txt", 3, "A3")
	z.accept("a1")
	z.edit("p1", "f.txt", 10, "P10")
	return cp
}

func (z *chain) accept(id string) {
	z.t.Helper()
	if _, err := z.eng.Accept(z.ctx, z.s.ID, id); err != nil {
		z.t.Fatalf("accept %s: %v\n%s", id, err, z.records(z.s))
	}
	z.check("accept " + id)
}

func (z *chain) reject(id string) {
	z.t.Helper()
	if _, err := z.eng.Reject(z.ctx, z.s.ID, id); err != nil {
		z.t.Fatalf("reject %s: %v\n%s", id, err, z.records(z.s))
	}
	z.check("reject " + id)
}

func (z *chain) bulk(accept bool) {
	z.t.Helper()
	if _, err := z.eng.Bulk(z.ctx, z.s.ID, accept, ""); err != nil {
		z.t.Fatalf("bulk %v: %v", accept, err)
	}
	z.check(fmt.Sprintf("bulk accept=%v", accept))
}

func (z *chain) rewind(cp string) string {
	z.t.Helper()
	before := z.snapNow()
	p, err := z.eng.Rewind(z.ctx, z.s.ID, cp, false)
	if err != nil {
		z.t.Fatalf("rewind %s: %v\n%s", cp, err, z.records(z.s))
	}
	if len(p.Conflicts) > 0 {
		z.t.Errorf("rewind %s: conflicts %+v", cp, p.Conflicts)
	}
	z.snaps[p.SafetyCheckpointID] = before
	z.check("rewind")
	z.wantSnap(cp, before.st, "rewind to "+cp)
	return p.SafetyCheckpointID
}

func (z *chain) sel(req api.RollbackRequest) string {
	z.t.Helper()
	before := z.snapNow()
	p, err := z.eng.SelectRewind(z.ctx, z.s.ID, req)
	if err != nil {
		z.t.Fatalf("rollback %+v: %v\n%s", req, err, z.records(z.s))
	}
	z.snaps[p.SafetyCheckpointID] = before
	if len(p.Conflicts) > 0 {
		z.t.Errorf("rollback %+v: conflicts %+v", req, p.Conflicts)
	}
	z.check(fmt.Sprintf("rollback %+v", req))
	return p.SafetyCheckpointID
}

// pendingRollback returns the id of the single pending Rollback record of rel.
func (z *chain) pendingOf(rel string) []*prsm.Record {
	z.t.Helper()
	pend, err := z.eng.Records(z.ctx, z.s.ID, prsm.StatusPending, rel)
	if err != nil {
		z.t.Fatal(err)
	}
	return pend
}

// wantWS checks the workspace file (review mode only).
func (z *chain) wantWS(rel, want, when string) {
	z.t.Helper()
	if !z.review {
		return
	}
	if got := z.ws(rel); got != want {
		z.t.Errorf("WORKSPACE %s: %s:\ngot:\n%s\nwant:\n%s\nrecords:\n%s", when, rel, got, want, z.records(z.s))
	}
}

func (z *chain) wantWT(rel, want, when string) {
	z.t.Helper()
	if got := z.wt(rel); got != want {
		z.t.Errorf("WORKTREE %s: %s:\ngot:\n%s\nwant:\n%s\nrecords:\n%s", when, rel, got, want, z.records(z.s))
	}
}

// L builds f.txt-like content from base with line replacements.
func (z *chain) L(kv ...any) string {
	c := z.base
	for i := 0; i < len(kv); i += 2 {
		c = replaceLine(c, kv[i].(int), kv[i+1].(string))
	}
	return c
}

// chainRun runs a scenario in review and in auto mode, and in review mode
// also ended by accept-all and by reject-all (the workspace must then
// equal the worktree).
func chainRun(t *testing.T, sc func(z *chain)) {
	for _, mode := range []string{prsm.ModeReview, prsm.ModeAuto} {
		for _, end := range []string{"", "acceptall", "rejectall"} {
			if mode == prsm.ModeAuto && end != "" {
				continue
			}
			t.Run(mode+"/"+end, func(t *testing.T) {
				z := chainNew(t, mode)
				sc(z)
				if end == "" {
					return
				}
				z.bulk(end == "acceptall")
				for _, rel := range chainFiles {
					if z.wt(rel) != z.ws(rel) {
						t.Errorf("END %s: %s: worktree\n%s\nworkspace\n%s\nrecords:\n%s", end, rel, z.wt(rel), z.ws(rel), z.records(z.s))
					}
				}
			})
		}
	}
}

// S1: accepted + pending; rewind, undo, rewind again to the same older checkpoint.
func TestChain01RewindUndoRewindAgain(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		s1 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind")
		z.wantWT("f.txt", z.base, "after rewind")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after undo")
		z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after second rewind")
		z.wantWT("f.txt", z.base, "after second rewind")
	})
}

// S2: undo of the undo, then undo again (third rewind to a safety cp).
func TestChain02UndoTheUndo(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		s1 := z.rewind(cp0)
		s2 := z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		s3 := z.rewind(s2)
		z.wantWS("f.txt", z.base, "after undo of undo")
		z.wantWT("f.txt", z.base, "after undo of undo")
		z.rewind(s3)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo of undo of undo")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after undo of undo of undo")
	})
}

// S3: reject the offered pending part after an undo, then rewind again and undo again.
func TestChain03RejectAfterUndoThenRewindUndo(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		s1 := z.rewind(cp0)
		z.rewind(s1)
		if z.review {
			pend := z.pendingOf("f.txt")
			if len(pend) != 1 {
				z.t.Fatalf("pending of f.txt after undo:\n%s", summary(pend))
			}
			z.reject(pend[0].ID)
		} else {
			return // auto mode: nothing to compare
		}
		z.wantWS("f.txt", z.L(3, "A3"), "after reject of offer")
		z.wantWT("f.txt", z.L(3, "A3"), "after reject of offer")
		s4 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind 2")
		z.wantWT("f.txt", z.base, "after rewind 2")
		z.rewind(s4)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo 2")
		z.wantWT("f.txt", z.L(3, "A3"), "after undo 2")
	})
}

// S4: a rewind brings back a rejected change; accept the offer; then undo the rewind; then rewind to cp.
func TestChain04AcceptOfferThenRewind(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.put("n1", "n.txt", "agent\n")
		cp := z.cp(1)
		z.reject("n1")
		s1 := z.rewind(cp)
		z.wantWS("n.txt", chainAbsent, "after rewind")
		z.wantWT("n.txt", "agent\n", "after rewind")
		if z.review {
			pend := z.pendingOf("n.txt")
			if len(pend) != 1 {
				z.t.Fatalf("pending of n.txt:\n%s", summary(pend))
			}
			z.accept(pend[0].ID)
		}
		z.wantWS("n.txt", "agent\n", "after accepting offer")
		cp2 := z.cp(2)
		z.edit("a2", "n.txt", 1, "x") // n.txt has 1 line
		_ = cp2
		z.rewind(s1)
		z.wantWS("n.txt", chainAbsent, "after undoing the rewind")
		z.wantWT("n.txt", chainAbsent, "after undoing the rewind")
	})
}

// S5: create accepted, then delete pending; rewind to before creation; undo.
func TestChain05CreateThenDelete(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.put("n1", "n.txt", "agent\n")
		z.accept("n1")
		cp1 := z.cp(2)
		z.rm("d1", "n.txt")
		z.wantWS("n.txt", "agent\n", "after delete pending")
		s1 := z.rewind(cp0)
		z.wantWS("n.txt", chainAbsent, "after rewind cp0")
		z.wantWT("n.txt", chainAbsent, "after rewind cp0")
		z.rewind(s1)
		z.wantWS("n.txt", "agent\n", "after undo")
		z.wantWT("n.txt", chainAbsent, "after undo")
		z.rewind(cp1)
		z.wantWS("n.txt", "agent\n", "after rewind cp1")
		z.wantWT("n.txt", "agent\n", "after rewind cp1")
	})
}

// S5c: create accepted, delete accepted, rewind between, undo.
func TestChain05cCreateDeleteBothAccepted(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.cp(1)
		z.put("n1", "n.txt", "agent\n")
		z.accept("n1")
		cp1 := z.cp(2)
		z.rm("d1", "n.txt")
		z.accept("d1")
		s1 := z.rewind(cp1)
		z.wantWS("n.txt", "agent\n", "after rewind cp1")
		z.wantWT("n.txt", "agent\n", "after rewind cp1")
		z.rewind(s1)
		z.wantWS("n.txt", chainAbsent, "after undo")
		z.wantWT("n.txt", chainAbsent, "after undo")
	})
}

// S6: two files.
func TestChain06TwoFiles(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		z.put("g1", "g.txt", "g one\ng two\ng three\n")
		z.edit("p1", "f.txt", 10, "P10")
		z.put("g2", "g.txt", "g one\ng two\ng THREE\n")
		z.accept("g1")
		s1 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind")
		z.wantWS("g.txt", chainAbsent, "after rewind")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		z.wantWS("g.txt", "g one\ng two\ng three\n", "after undo")
		z.wantWT("g.txt", "g one\ng two\ng THREE\n", "after undo")
		z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind 2")
		z.wantWS("g.txt", chainAbsent, "after rewind 2")
	})
}

// S7: rewind to a checkpoint between two accepted changes; undo; rewind older; undo.
func TestChain07BetweenAccepted(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		cp1 := z.cp(2)
		z.edit("a2", "f.txt", 5, "A5")
		z.accept("a2")
		s1 := z.rewind(cp1)
		z.wantWS("f.txt", z.L(3, "A3"), "after rewind cp1")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3", 5, "A5"), "after undo 1")
		s3 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind cp0")
		z.rewind(s3)
		z.wantWS("f.txt", z.L(3, "A3", 5, "A5"), "after undo 2")
		z.wantWT("f.txt", z.L(3, "A3", 5, "A5"), "after undo 2")
	})
}

// S8: a rewind in between rejects.
func TestChain08RewindBetweenRejects(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		cp1 := z.cp(2)
		z.reject("p1")
		z.edit("p2", "f.txt", 12, "P12")
		z.reject("p2")
		z.edit("p3", "f.txt", 14, "P14")
		s1 := z.rewind(cp1)
		z.wantWS("f.txt", z.L(3, "A3"), "after rewind cp1")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after rewind cp1")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		z.wantWT("f.txt", z.L(3, "A3", 14, "P14"), "after undo")
		s3 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind cp0")
		z.wantWT("f.txt", z.base, "after rewind cp0")
		z.rewind(s3)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo 2")
		z.wantWT("f.txt", z.L(3, "A3", 14, "P14"), "after undo 2")
	})
}

// S9: selector rollbacks (last, file, agent) and their undo.
func TestChain09SelectorLast(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		z.edit("a2", "f.txt", 5, "A5")
		z.accept("a2")
		z.edit("p1", "f.txt", 10, "P10")
		s1 := z.sel(api.RollbackRequest{Last: 2})
		z.wantWS("f.txt", z.L(3, "A3"), "after last 2")
		z.wantWT("f.txt", z.L(3, "A3"), "after last 2")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3", 5, "A5"), "after undo")
		z.wantWT("f.txt", z.L(3, "A3", 5, "A5", 10, "P10"), "after undo")
		s2 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind cp0")
		z.rewind(s2)
		z.wantWS("f.txt", z.L(3, "A3", 5, "A5"), "after undo 2")
		z.wantWT("f.txt", z.L(3, "A3", 5, "A5", 10, "P10"), "after undo 2")
	})
}

func TestChain10SelectorFileAndAgent(t *testing.T) {
	for _, req := range []api.RollbackRequest{{File: "f.txt"}, {AgentID: "claude"}} {
		t.Run(fmt.Sprint(req.File, req.AgentID), func(t *testing.T) {
			chainRun(t, func(z *chain) {
				z.edit("a1", "f.txt", 3, "A3")
				z.accept("a1")
				z.put("g1", "g.txt", "g\n")
				z.accept("g1")
				z.edit("p1", "f.txt", 10, "P10")
				s1 := z.sel(req)
				z.wantWS("f.txt", z.base, "after rollback")
				z.wantWT("f.txt", z.base, "after rollback")
				z.rewind(s1)
				z.wantWS("f.txt", z.L(3, "A3"), "after undo")
				z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after undo")
				z.wantWS("g.txt", "g\n", "after undo")
			})
		})
	}
}

// F1 candidates: minimise ZZ08.
func TestChain08a(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		cp1 := z.cp(2)
		z.reject("p1")
		z.edit("p3", "f.txt", 14, "P14")
		s1 := z.rewind(cp1)
		z.rewind(s1)
		s3 := z.rewind(cp0)
		z.rewind(s3)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo 2")
		z.wantWT("f.txt", z.L(3, "A3", 14, "P14"), "after undo 2")
	})
}

func TestChain08b(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		cp1 := z.cp(2)
		z.reject("p1")
		s1 := z.rewind(cp1)
		z.rewind(s1)
		s3 := z.rewind(cp0)
		z.rewind(s3)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo 2")
		z.wantWT("f.txt", z.L(3, "A3"), "after undo 2")
	})
}

func TestChain08c(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		cp1 := z.cp(2)
		z.reject("p1")
		z.edit("p3", "f.txt", 14, "P14")
		s1 := z.rewind(cp1)
		z.rewind(s1)
		z.bulk(true)
		z.wantWS("f.txt", z.L(3, "A3", 14, "P14"), "after accept all")
		_ = cp0
	})
}

// no accepted change at all
func TestChain08d(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("p1", "f.txt", 10, "P10")
		cp1 := z.cp(2)
		z.reject("p1")
		z.edit("p3", "f.txt", 14, "P14")
		s1 := z.rewind(cp1)
		z.rewind(s1)
		s3 := z.rewind(cp0)
		z.rewind(s3)
		z.wantWS("f.txt", z.base, "after undo 2")
		z.wantWT("f.txt", z.L(14, "P14"), "after undo 2")
	})
}

func TestChain08e(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("p1", "f.txt", 10, "P10")
		cp1 := z.cp(2)
		z.reject("p1")
		s1 := z.rewind(cp1)
		z.rewind(s1)
		s3 := z.rewind(cp0)
		z.rewind(s3)
		z.wantWS("f.txt", z.base, "after undo 2")
		z.wantWT("f.txt", z.base, "after undo 2")
	})
}

func TestChain08f(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("p1", "f.txt", 10, "P10")
		cp1 := z.cp(2)
		z.reject("p1")
		z.rewind(cp1)
		s3 := z.rewind(cp0)
		z.rewind(s3)
		z.wantWS("f.txt", z.base, "after undo 2")
		z.wantWT("f.txt", z.L(10, "P10"), "after undo 2")
	})
}

func TestChain06b(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.put("g1", "g.txt", "g one\ng two\ng three\n")
		z.accept("g1")
		z.put("g2", "g.txt", "g one\ng two\ng THREE\n")
		s1 := z.rewind(cp0)
		z.wantWS("g.txt", chainAbsent, "after rewind")
		z.rewind(s1)
		z.wantWS("g.txt", "g one\ng two\ng three\n", "after undo")
		z.wantWT("g.txt", "g one\ng two\ng THREE\n", "after undo")
		z.rewind(cp0)
		z.wantWS("g.txt", chainAbsent, "after rewind 2")
		z.wantWT("g.txt", chainAbsent, "after rewind 2")
	})
}

// reject an accepted change, then rewind to a checkpoint between, then undo.
func TestChain12RejectAccepted(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		cp1 := z.cp(2)
		z.edit("a2", "f.txt", 5, "A5")
		z.accept("a2")
		z.reject("a1")
		z.wantWS("f.txt", z.L(5, "A5"), "after reject a1")
		s1 := z.rewind(cp1)
		s2 := z.rewind(s1)
		z.wantWS("f.txt", z.L(5, "A5"), "after undo")
		z.wantWT("f.txt", z.L(5, "A5"), "after undo")
		z.rewind(s2)
		s4 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind cp0")
		z.rewind(s4)
	})
}

// selector Last:1 on a pending record, undo, then Last:1 on accepted, undo.
func TestChain14SelectorPending(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		z.edit("p1", "f.txt", 10, "P10")
		s1 := z.sel(api.RollbackRequest{Last: 1})
		z.wantWS("f.txt", z.L(3, "A3"), "after last 1")
		z.wantWT("f.txt", z.L(3, "A3"), "after last 1")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after undo")
		z.reject("p1") // p1 was rejected by the rollback: no-op
		s2 := z.sel(api.RollbackRequest{Last: 1})
		z.rewind(s2)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo 2")
	})
}

// two rewinds stacked, undone in reverse order.
func TestChain15StackedRewinds(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		cp1 := z.cp(2)
		z.edit("p1", "f.txt", 10, "P10")
		z.edit("a2", "f.txt", 5, "A5")
		z.accept("a2") // accepts p1 too (earlier pending of the file)
		z.edit("p2", "f.txt", 12, "P12")
		s1 := z.rewind(cp1)
		z.wantWS("f.txt", z.L(3, "A3"), "after rewind cp1")
		s2 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind cp0")
		z.rewind(s2)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo 2")
		z.wantWT("f.txt", z.L(3, "A3"), "after undo 2")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3", 5, "A5", 10, "P10"), "after undo 1")
		z.wantWT("f.txt", z.L(3, "A3", 5, "A5", 10, "P10", 12, "P12"), "after undo 1")
	})
}

// accept the offer after an undo, then rewind, then undo.
func TestChain16AcceptOfferAfterUndo(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		s1 := z.rewind(cp0)
		z.rewind(s1)
		z.bulk(true)
		z.wantWS("f.txt", z.L(3, "A3", 10, "P10"), "after accepting the offer")
		s3 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind 2")
		z.rewind(s3)
		z.wantWS("f.txt", z.L(3, "A3", 10, "P10"), "after undo 2")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after undo 2")
	})
}

// a pending change of another file before the checkpoint, accepted after it.
func TestChain17PendingBeforeAcceptedAfter(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.put("g1", "g.txt", "g\n")
		cp1 := z.cp(1)
		z.accept("g1")
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		s1 := z.rewind(cp1)
		z.wantWS("f.txt", z.base, "after rewind")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		z.wantWS("g.txt", "g\n", "after undo")
	})
}

// a pending change rejected, checkpoint, rewind to before the change, undo.
func TestChain18RejectThenRewindOlder(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		z.reject("p1")
		z.edit("p2", "f.txt", 12, "P12")
		s1 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		z.wantWT("f.txt", z.L(3, "A3", 12, "P12"), "after undo")
	})
}

func TestChain19MinStacked(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("p1", "f.txt", 10, "P10")
		cp1 := z.cp(2)
		z.edit("p2", "f.txt", 12, "P12")
		z.rewind(cp1)
		s := z.rewind(cp0)
		z.rewind(s)
		z.wantWS("f.txt", z.base, "after undo")
		z.wantWT("f.txt", z.L(10, "P10"), "after undo")
	})
}

func TestChain19bMinStackedAccepted(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		cp1 := z.cp(2)
		z.edit("p2", "f.txt", 12, "P12")
		z.rewind(cp1)
		s := z.rewind(cp0)
		z.rewind(s)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		z.wantWT("f.txt", z.L(3, "A3"), "after undo")
	})
}

// Finding 1: nothing ever accepted; two stacked rewinds, the second
// undone: the workspace never gets a change.
func TestChainFinding1(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("p1", "f.txt", 10, "P10")
		cp1 := z.cp(2)
		z.edit("p2", "f.txt", 12, "P12")
		z.rewind(cp1)
		z.rewind(z.rewind(cp0))
		if z.review {
			z.wantWS("f.txt", z.base, "after undoing the second rewind")
		}
		z.wantWT("f.txt", z.L(10, "P10"), "after undoing the second rewind")
	})
}

// Finding 1b: the same through a reject, nothing ever accepted.
func TestChainFinding1b(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("p1", "f.txt", 10, "P10")
		cp1 := z.cp(2)
		z.reject("p1")
		z.rewind(z.rewind(cp1))
		undo := z.rewind(cp0)
		if z.review && len(z.pendingOf("f.txt")) != 0 {
			z.t.Errorf("worktree and workspace hold the same, yet pending offers:\n%s", z.records(z.s))
		}
		z.rewind(undo)
		z.wantWS("f.txt", z.base, "after the last undo")
	})
}

// Finding 2: an accepted new file with a pending edit; rewind before it,
// undo, rewind again: the file leaves the workspace again.
func TestChainFinding2(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.put("g1", "g.txt", "a\nb\nc\n")
		z.accept("g1")
		z.put("g2", "g.txt", "a\nb\nC\n")
		z.rewind(z.rewind(cp0))
		if z.review {
			z.wantWS("g.txt", "a\nb\nc\n", "after the undo")
		}
		z.wantWT("g.txt", "a\nb\nC\n", "after the undo")
		z.rewind(cp0)
		z.wantWS("g.txt", chainAbsent, "after rewinding again")
		z.wantWT("g.txt", chainAbsent, "after rewinding again")
	})
}

// S5b: create pending, delete pending: net nothing; rewind to before.
func TestChain05bCreateDeleteBothPending(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.put("n1", "n.txt", "agent\n")
		cp1 := z.cp(2)
		z.rm("d1", "n.txt")
		s1 := z.rewind(cp1)
		z.wantWS("n.txt", chainAbsent, "after rewind cp1")
		z.wantWT("n.txt", "agent\n", "after rewind cp1")
		z.rewind(s1)
		z.wantWS("n.txt", chainAbsent, "after undo")
		z.wantWT("n.txt", chainAbsent, "after undo")
		z.rewind(cp0)
		z.wantWS("n.txt", chainAbsent, "after rewind cp0")
		z.wantWT("n.txt", chainAbsent, "after rewind cp0")
	})
}

func TestChain05d(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.put("n1", "n.txt", "agent\n")
		cp1 := z.cp(2)
		z.rm("d1", "n.txt")
		s1 := z.rewind(cp1)
		z.rewind(s1)
		z.bulk(true)
		z.wantWS("n.txt", chainAbsent, "after undo + accept all")
		z.wantWT("n.txt", chainAbsent, "after undo + accept all")
	})
}

// rewind, new agent work accepted and pending, then undo the rewind.
func TestChain13NewWorkThenUndo(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		z.edit("p1", "f.txt", 10, "P10")
		s1 := z.rewind(cp0)
		z.edit("b1", "f.txt", 6, "B6")
		z.accept("b1")
		z.edit("b2", "f.txt", 8, "B8")
		z.wantWS("f.txt", z.L(6, "B6"), "after new work")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after undo")
	})
}

// compact shows the lines of c that differ from base (debugging).
func (z *chain) compact(c string) string {
	if c == chainAbsent {
		return "absent"
	}
	base := z.base
	if strings.HasPrefix(c, "g ") || strings.HasPrefix(c, "T") {
		base = fuzzGBase()
	}
	bl, cl := strings.Split(base, "\n"), strings.Split(c, "\n")
	var out []string
	for i := range cl {
		if i >= len(bl) || bl[i] != cl[i] {
			out = append(out, fmt.Sprintf("%d:%s", i+1, cl[i]))
		}
	}
	return "[" + strings.Join(out, " ") + "]"
}

func (z *chain) debugRecords() string {
	all, err := z.eng.Records(z.ctx, z.s.ID, "", "")
	if err != nil {
		z.t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range all {
		fmt.Fprintf(&b, "  %s %s %s/%s %s -> %s\n", r.ID, r.RelPath, r.Status, r.SyncState, z.compact(z.side(r.ID, "before")), z.compact(z.side(r.ID, "after")))
	}
	return b.String()
}
