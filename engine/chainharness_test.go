package engine_test

// The chain harness: chains of accepts, rejects, rewinds, undone
// rewinds and selector rewinds (from an audit of review-mode rewinds,
// 2026-11-24), each run in review mode, in review mode ended by accept-all and by reject-all,
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
	"strconv"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/sync/patch"
	"github.com/prsm-dev/prsm/tracker"
)

var chainFiles = []string{"f.txt", "g.txt", "n.txt", "keep.txt"}

type chain struct {
	*fixture
	s      *prsm.Session
	base   string
	review bool
	step   int
	// capped: the watcher is capped (chainCap), and the session's
	// worktree scanned instead of watched.
	capped bool
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
	capped := chainCap(f)
	s := f.start(mode)
	if capped {
		if l := f.eng.Watcher.Limits()[s.ID]; l.Cause != tracker.LimitBudget {
			t.Fatalf("the capped chain's session is watched: %+v", l)
		}
	}
	return &chain{fixture: f, s: s, base: read(t, f.ws, "f.txt"), review: mode == prsm.ModeReview, capped: capped, snaps: map[string]fuzzCP{}}
}

// tool runs one tool call as the fixture's tool does. With the watcher
// capped it checks, once the call's tool has run, that the watcher holds
// nothing of its changes (no event came, as no directory of the worktree
// is watched, and its look is a full scan): what the call's end records
// was found by the scan alone.
func (z *chain) tool(s *prsm.Session, id, name, file string, act func(wt string)) []*prsm.Record {
	z.t.Helper()
	if !z.capped {
		return z.fixture.tool(s, id, name, file, act)
	}
	return z.fixture.tool(s, id, name, file, func(wt string) {
		act(wt)
		w := z.eng.Watcher
		if err := w.Flush(z.ctx, wt); err != nil {
			z.t.Fatalf("flush %s: %v", id, err)
		}
		if d := w.Peek(wt); len(d.Paths) > 0 || !d.Full || w.Limits()[s.ID].Cause != tracker.LimitBudget {
			z.t.Errorf("CAPPED %s: the watcher saw %v (full scan %v, limit %+v): the worktree is watched", id, d.Paths, d.Full, w.Limits()[s.ID])
		}
	})
}

// chainCap runs a chain with the watcher capped (PRSM_CHAIN_MAX_WATCHES=N,
// or TestChainCappedWatcher): the watcher is on with a budget of N
// directories, and the repository gets 2N more, so the session's worktree
// is past it and scanned instead of watched (tracker.LimitBudget), as
// with inotify out of watches. Every change must be found all the same:
//
//	PRSM_CHAIN_MAX_WATCHES=100 go test -run 'TestChain2LongChain' ./engine
func chainCap(f *fixture) bool {
	n, _ := strconv.Atoi(os.Getenv("PRSM_CHAIN_MAX_WATCHES"))
	if n <= 0 {
		return false
	}
	for i := 0; i < 2*n; i++ {
		testgit.Write(f.t, f.ws, fmt.Sprintf("pad/d%03d/k.txt", i), "k\n", 0o644)
	}
	testgit.Git(f.t, f.ws, "add", "-A")
	testgit.Git(f.t, f.ws, "commit", "-qm", "more directories than the watch budget")
	f.eng.WatchBudget = n
	f.watch()
	return true
}

// TestChainCappedWatcher is a long chain of edits (TestChain2LongChain,
// each mode) and a chain of Bash calls that modify, create and remove
// files (review mode), with the watcher capped at 100 directories: every
// change is found, byte-exact, by the scans at the calls' ends. At each
// call the chain checks that the watcher saw none of it (chain.tool). A
// Bash call names no file that its end could look at without a scan: with
// a capped worktree's look trusting the watcher's empty dirty set instead
// of falling back to the scan (tracker.Candidates), the Bash chain fails.
func TestChainCappedWatcher(t *testing.T) {
	t.Setenv("PRSM_CHAIN_MAX_WATCHES", "100")
	t.Run("LongChain", TestChain2LongChain)
	t.Run("Bash", func(t *testing.T) {
		z := chainNew(t, prsm.ModeReview)
		chainBashRejectThenRewind(z)
		cp3 := z.cp(3)
		z.rm("d1", "keep.txt")
		z.accept("d1")
		z.wantWS("keep.txt", chainAbsent, "after accept delete")
		z.rewind(cp3)
		z.wantWS("keep.txt", "keep\n", "after rewind cp3")
		z.wantWT("keep.txt", "keep\n", "after rewind cp3")
	})
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
	b, err := patch.ApplyHunks([]byte(strings.TrimSuffix(before, chainAbsent)), []byte(strings.TrimSuffix(after, chainAbsent)), keep)
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

// chainRun runs a scenario in auto mode, and in review mode twice: ended
// by accept-all and by reject-all (the workspace must then equal the
// worktree). A review run without an end is not run on its own: each of
// the two runs the whole scenario, with every one of its checks, first.
func chainRun(t *testing.T, sc func(z *chain)) {
	for _, mode := range []string{prsm.ModeReview, prsm.ModeAuto} {
		for _, end := range []string{"", "acceptall", "rejectall"} {
			if (mode == prsm.ModeAuto) != (end == "") {
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

// bash2 is one Bash call writing several files (rel, content, ...).
func (z *chain) bash2(id string, kv ...string) {
	z.t.Helper()
	z.tool(z.s, id, "Bash", "", func(wt string) {
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == chainAbsent {
				if err := os.Remove(filepath.Join(wt, kv[i])); err != nil {
					z.t.Fatal(err)
				}
				continue
			}
			write(z.t, wt, kv[i], kv[i+1])
		}
	})
	z.check("bash " + id)
}

// acceptPending accepts every pending record of rel (review mode only).
func (z *chain) acceptPending(rel string) {
	z.t.Helper()
	if !z.review {
		return
	}
	for _, r := range z.pendingOf(rel) {
		z.accept(r.ID)
	}
}

func (z *chain) rejectPending(rel string) {
	z.t.Helper()
	if !z.review {
		return
	}
	pend := z.pendingOf(rel)
	if len(pend) > 0 {
		z.reject(pend[0].ID)
	}
}

// acceptRollback accepts the newest pending record of rel, if any.
// (Rewinds made pending Rollback records once, offering back what they
// took out; now a rewind gives back the records' own statuses, and these
// chains accept what is pending instead.)
func (z *chain) acceptRollback(rel string) {
	z.t.Helper()
	if !z.review {
		return
	}
	if pend := z.pendingOf(rel); len(pend) > 0 {
		z.accept(pend[len(pend)-1].ID)
	}
}

const chainAbsent = "<absent>"
