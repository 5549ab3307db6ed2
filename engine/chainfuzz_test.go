package engine_test

import (
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/memtest"
)

// edit2 is one Edit of two lines of rel (two hunks).
func (z *chain) edit2(id, rel string, l1 int, t1 string, l2 int, t2 string) {
	z.t.Helper()
	z.tool(z.s, id, "Edit", rel, func(wt string) {
		cur := chainGet(wt, rel)
		if cur == chainAbsent {
			cur = z.base
		}
		write(z.t, wt, rel, replaceLine(replaceLine(cur, l1, t1), l2, t2))
	})
	z.check("edit2 " + id)
}

// hunk accepts or rejects hunk n of record id; a refusal (a conflict with
// a user's edit, which the chain never makes) fails the chain.
func (z *chain) hunk(id string, n int, accept bool) {
	z.t.Helper()
	var acc, rej []int
	if accept {
		acc = []int{n}
	} else {
		rej = []int{n}
	}
	if _, err := z.eng.DecideHunks(z.ctx, z.s.ID, id, acc, rej); err != nil {
		z.t.Fatalf("hunk %d of %s (accept %v): %v\nrecords:\n%s", n, id, accept, err, z.records(z.s))
	}
	z.check(fmt.Sprintf("hunk %d of %s", n, id))
}

var fuzzLines = []int{2, 5, 8, 11, 14, 17, 20}

func fuzzGBase() string {
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&b, "g %d\n", i)
	}
	return b.String()
}

type fuzzCP struct {
	id      string
	wt      map[string]string
	ws      map[string]string
	userOps int // user ops count when taken
	// st is every record's status when taken, by id.
	st map[string]string
}

// statuses is every record's status, by id.
func (z *chain) statuses() map[string]string {
	all, err := z.eng.Records(z.ctx, z.s.ID, "", "")
	if err != nil {
		z.t.Fatal(err)
	}
	m := map[string]string{}
	for _, r := range all {
		m[r.ID] = r.Status
	}
	return m
}

// checkRewound checks that a rewind to c gave every record the status it
// had at c, and every later one the status rewound, with no new record.
func (z *chain) checkRewound(what string, c fuzzCP, before map[string]string) {
	z.t.Helper()
	now := z.statuses()
	for id, st := range now {
		want, ok := c.st[id]
		if !ok {
			want = prsm.StatusRewound
		}
		if _, existed := before[id]; !existed {
			z.t.Errorf("NEW-RECORD after %s: %s (%s)\nrecords:\n%s", what, id, st, z.records(z.s))
		} else if st != want {
			z.t.Errorf("STATUS after %s: %s is %s, want %s (as at the checkpoint)\nrecords:\n%s", what, id, st, want, z.records(z.s))
		}
	}
}

func (z *chain) snap(get func(string) string) map[string]string {
	m := map[string]string{}
	for _, rel := range chainFiles {
		m[rel] = get(rel)
	}
	return m
}

func fuzzRun(t *testing.T, seed int64, mode string, steps int, allowDelete bool) {
	z := chainNew(t, mode)
	rng := rand.New(rand.NewSource(seed))
	var log []string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d ops:\n%s", seed, strings.Join(log, "\n"))
		}
	})
	used := map[string]map[int]bool{"f.txt": {}, "g.txt": {}}
	var cps []fuzzCP
	userOps := 0
	approved := map[string]bool{}
	n := 0
	tokens := func(c string) []string {
		var out []string
		for _, l := range strings.Split(c, "\n") {
			if strings.HasPrefix(l, "T") {
				out = append(out, l)
			}
		}
		return out
	}
	approve := func() {
		for _, rel := range chainFiles {
			for _, tk := range tokens(z.ws(rel)) {
				approved[tk] = true
			}
		}
	}
	checkApproved := func(what string) {
		if !z.review {
			return
		}
		for _, rel := range chainFiles {
			for _, tk := range tokens(z.ws(rel)) {
				if !approved[tk] {
					t.Errorf("UNAPPROVED after %s: %s holds %q nobody accepted\nrecords:\n%s", what, rel, tk, z.records(z.s))
				}
			}
		}
	}
	fresh := func(rel string) (int, bool) {
		var free []int
		for _, l := range fuzzLines {
			if !used[rel][l] {
				free = append(free, l)
			}
		}
		if len(free) == 0 {
			return 0, false
		}
		l := free[rng.Intn(len(free))]
		used[rel][l] = true
		return l, true
	}
	// pickPending is a pending record at random (review mode), nil if none.
	pickPending := func() *prsm.Record {
		if !z.review {
			return nil
		}
		pend := z.allPending()
		if len(pend) == 0 {
			return nil
		}
		return pend[rng.Intn(len(pend))]
	}
	rollback := func(what string, do func() (*api.Plan, error)) {
		before := fuzzCP{wt: z.snap(z.wt), ws: z.snap(z.ws), userOps: userOps, st: z.statuses()}
		p, err := do()
		if err != nil {
			log = append(log, what+" -> error "+err.Error())
			if !strings.Contains(err.Error(), "no change") && !strings.Contains(err.Error(), "nothing") {
				t.Logf("%s: %v", what, err)
			}
			return
		}
		if len(p.Conflicts) > 0 {
			t.Errorf("%s: conflicts %+v\nrecords:\n%s", what, p.Conflicts, z.records(z.s))
		}
		before.id = p.SafetyCheckpointID
		cps = append(cps, before)
		log = append(log, fmt.Sprintf("%s -> safety #%d", what, len(cps)-1))
		z.check(what)
		checkApproved(what)
	}
	for step := 0; step < steps && !t.Failed(); step++ {
		k := rng.Intn(100)
		switch {
		case k < 25: // edit f.txt
			l, ok := fresh("f.txt")
			if !ok {
				continue
			}
			n++
			id := fmt.Sprintf("e%d", n)
			log = append(log, fmt.Sprintf("z.edit(%q, \"f.txt\", %d, \"T%d\")", id, l, n))
			z.edit(id, "f.txt", l, fmt.Sprintf("T%d", n))
		case k < 35: // g.txt: create or edit
			l, ok := fresh("g.txt")
			if !ok {
				continue
			}
			n++
			id := fmt.Sprintf("e%d", n)
			cur := z.wt("g.txt")
			if cur == chainAbsent {
				cur = fuzzGBase()
			}
			c := replaceLine(cur, l, fmt.Sprintf("T%d", n))
			log = append(log, fmt.Sprintf("z.put(%q, \"g.txt\", %q)", id, c))
			z.put(id, "g.txt", c)
		case k < 38 && allowDelete: // delete g.txt when accepted in the workspace with nothing pending
			if z.wt("g.txt") == chainAbsent || (z.review && (z.ws("g.txt") == chainAbsent || len(z.pendingOf("g.txt")) > 0)) {
				continue
			}
			n++
			id := fmt.Sprintf("d%d", n)
			log = append(log, fmt.Sprintf("z.rm(%q, \"g.txt\")", id))
			z.rm(id, "g.txt")
		case k < 43: // one Edit of two lines of f.txt: two hunks
			l1, ok1 := fresh("f.txt")
			l2, ok2 := fresh("f.txt")
			if !ok1 || !ok2 {
				continue
			}
			n++
			id := fmt.Sprintf("e%d", n)
			log = append(log, fmt.Sprintf("z.edit2(%q, \"f.txt\", %d, \"T%da\", %d, \"T%db\")", id, l1, n, l2, n))
			z.edit2(id, "f.txt", l1, fmt.Sprintf("T%da", n), l2, fmt.Sprintf("T%db", n))
		case k < 52: // accept a pending record
			r := pickPending()
			if r == nil {
				continue
			}
			log = append(log, fmt.Sprintf("z.accept(%q) // %s %s", r.ID, r.ToolName, r.RelPath))
			z.accept(r.ID)
			userOps++
			approve()
		case k < 58: // decide one pending hunk of a pending record
			var cands []*prsm.Record
			for _, r := range z.allPending() {
				if len(r.Hunks) > 1 {
					cands = append(cands, r)
				}
			}
			if len(cands) == 0 {
				continue
			}
			r := cands[rng.Intn(len(cands))]
			var open []int
			for _, h := range r.Hunks {
				if h.Status == prsm.StatusPending {
					open = append(open, h.Index)
				}
			}
			if len(open) == 0 {
				continue
			}
			h := open[rng.Intn(len(open))]
			acc := rng.Intn(2) == 0
			log = append(log, fmt.Sprintf("z.hunk(%q, %d, %v)", r.ID, h, acc))
			z.hunk(r.ID, h, acc)
			userOps++
			// The last hunk decided, the change is accepted (or partial)
			// and reaches the workspace, with the earlier pending changes
			// of the file (review mode), by whichever decision came last.
			if st := z.record(z.s, r.ID).Status; st == prsm.StatusAccepted || st == prsm.StatusPartial {
				approve()
			}
			checkApproved(fmt.Sprintf("hunk %d of %s", h, r.ID))
		case k < 63: // reject a pending record
			r := pickPending()
			if r == nil {
				continue
			}
			log = append(log, fmt.Sprintf("z.reject(%q) // %s %s", r.ID, r.ToolName, r.RelPath))
			z.reject(r.ID)
			userOps++
			checkApproved("reject " + r.ID)
		case k < 66:
			acc := rng.Intn(2) == 0
			log = append(log, fmt.Sprintf("z.bulk(%v)", acc))
			z.bulk(acc)
			userOps++
			if acc {
				approve()
			}
			checkApproved("bulk")
		case k < 76: // turn checkpoint
			c := z.cp(len(cps) + 1)
			cps = append(cps, fuzzCP{id: c, wt: z.snap(z.wt), ws: z.snap(z.ws), userOps: userOps, st: z.statuses()})
			log = append(log, fmt.Sprintf("cp #%d := z.cp(%d)", len(cps)-1, len(cps)))
		case k < 93: // rewind
			if len(cps) == 0 {
				continue
			}
			i := rng.Intn(len(cps))
			if rng.Intn(2) == 0 {
				i = len(cps) - 1 // the last one: often an undo
			}
			c := cps[i]
			if os.Getenv("CHAINFUZZ_NOOP") != "" {
				same := true
				for _, rel := range chainFiles {
					same = same && z.wt(rel) == c.wt[rel]
				}
				if same {
					continue
				}
			}
			what := fmt.Sprintf("z.rewind(#%d)", i)
			stBefore := z.statuses()
			rollback(what, func() (*api.Plan, error) { return z.eng.Rewind(z.ctx, z.s.ID, c.id, false) })
			// The session as it was at the checkpoint: worktree, review
			// state, and (no user edits here) the workspace too, whatever
			// the user decided since (SPEC rule 5).
			for _, rel := range chainFiles {
				if got := z.wt(rel); got != c.wt[rel] {
					t.Errorf("WT-NOT-CHECKPOINT after %s: %s\ngot:\n%s\nwant:\n%s\nrecords:\n%s", what, rel, got, c.wt[rel], z.records(z.s))
				}
				if got := z.ws(rel); got != c.ws[rel] {
					t.Errorf("WS-NOT-CHECKPOINT after %s: %s\ngot:\n%s\nwant:\n%s\nrecords:\n%s", what, rel, got, c.ws[rel], z.records(z.s))
				}
			}
			z.checkRewound(what, c, stBefore)
		default: // selector
			var req api.RollbackRequest
			switch rng.Intn(3) {
			case 0:
				req.Last = 1 + rng.Intn(2)
			case 1:
				req.File = "f.txt"
			default:
				req.File = "g.txt"
			}
			rollback(fmt.Sprintf("z.sel(api.RollbackRequest{Last: %d, File: %q})", req.Last, req.File), func() (*api.Plan, error) { return z.eng.SelectRewind(z.ctx, z.s.ID, req) })
		}
	}
	if !t.Failed() && z.review {
		acc := rng.Intn(2) == 0
		log = append(log, fmt.Sprintf("END z.bulk(%v)", acc))
		z.bulk(acc)
		for _, rel := range chainFiles {
			if z.wt(rel) != z.ws(rel) {
				t.Errorf("END: %s: worktree\n%s\nworkspace\n%s\nrecords:\n%s", rel, z.wt(rel), z.ws(rel), z.records(z.s))
			}
		}
	}
}

// chainFuzzKnown are the seeds (review mode) known to fail: none. Seeds
// 642, 907, 1366 and 1874 (with deletions, CHAINFUZZ_DELETE=1) failed
// before (TestChain2Seed642, 907, 1874 and 1874Workspace are them,
// minimised). CHAINFUZZ_ALL=1 runs known seeds anyway.
var chainFuzzKnown = map[int64]bool{}

// TestChainFuzz runs random chains of edits, writes, accepts, rejects,
// checkpoints, rewinds and selector rollbacks (30 steps per seed), in
// review and in auto mode, checking after every step that the workspace
// and worktree agree (chain.check), that a rewind gives the checkpoint's
// worktree (and its workspace, when the user did nothing since), and that
// nothing reaches the workspace that nobody accepted. CHAINFUZZ_N sets
// the last seed (40), CHAINFUZZ_FROM the first (1), so that a wide run
// can be split in ranges; CHAINFUZZ_DELETE=1 adds deletions. Under the
// race detector (CI, where it took 264 s of the chain tests' 584) a run
// checks the even or the odd seeds, drawn at each run and logged, so that
// two runs check all in expectation; CHAINFUZZ_SEEDS=all, even or odd
// says which.
func TestChainFuzz(t *testing.T) {
	half := os.Getenv("CHAINFUZZ_SEEDS")
	switch {
	case half != "":
	case !memtest.Race:
		half = "all"
	case time.Now().UnixNano()%2 == 0:
		half = "even"
	default:
		half = "odd"
	}
	if half != "all" && half != "even" && half != "odd" {
		t.Fatalf("CHAINFUZZ_SEEDS=%q: all, even or odd", half)
	}
	t.Logf("seeds checked: %s (CHAINFUZZ_SEEDS=all, even or odd)", half)
	n, from := 40, 1
	if v := os.Getenv("CHAINFUZZ_N"); v != "" {
		fmt.Sscan(v, &n)
	}
	if v := os.Getenv("CHAINFUZZ_FROM"); v != "" {
		fmt.Sscan(v, &from)
	}
	del := os.Getenv("CHAINFUZZ_DELETE") != ""
	all := os.Getenv("CHAINFUZZ_ALL") != ""
	for seed := int64(from); seed <= int64(n); seed++ {
		if half != "all" && (seed%2 == 1) != (half == "odd") {
			continue
		}
		for _, mode := range []string{prsm.ModeReview, prsm.ModeAuto} {
			t.Run(fmt.Sprintf("%s/%d", mode, seed), func(t *testing.T) {
				if mode == prsm.ModeReview && chainFuzzKnown[seed] && !all {
					t.Skip("known to fail (chainFuzzKnown)")
				}
				fuzzRun(t, seed, mode, 30, del)
			})
		}
	}
}

// allPending is every pending record of the chain's files.
func (z *chain) allPending() []*prsm.Record {
	var pend []*prsm.Record
	for _, rel := range chainFiles {
		pend = append(pend, z.pendingOf(rel)...)
	}
	return pend
}

// gLines is g.txt's base content with line replacements (line, text, ...).
func gLines(kv ...any) string {
	c := fuzzGBase()
	for i := 0; i < len(kv); i += 2 {
		c = replaceLine(c, kv[i].(int), kv[i+1].(string))
	}
	return c
}

// TestChainFuzzHunkSeeds are the seeds (review mode) that found a rewind
// bringing back, into the workspace, a hunk rejected since its checkpoint
// of a change that was pending then: the hunk's lines are offered again,
// never applied (lateHunks).
func TestChainFuzzHunkSeeds(t *testing.T) {
	for _, seed := range []int64{62, 120, 205, 246, 267, 283} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { fuzzRun(t, seed, prsm.ModeReview, 30, false) })
	}
}
