package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/sync/patch"
)

// Per-hunk review (SPEC rule 4). A text record's hunks can be decided one
// by one. Rejecting a hunk takes exactly its lines out of the worktree and
// (where the record reached it) the workspace by a reverse 3-way merge, as
// a record's reject does, and cascades to the later pending hunks of the
// same file that overlap or touch those lines: their base is gone. Hunks
// elsewhere in the file stay pending. A record whose hunks are all
// decided takes their decision, or partial when they differ; in review
// mode it then reaches the workspace, by its accepted hunks only.
//
// A record's rejected hunks live in its stored hunks; versions gives its
// after side less them, so every other operation (a whole reject, an
// accept, a rewind) works on the change as it now stands.

// withHunks is after with only the hunks of r that keep selects applied
// to before (after itself when it keeps them all, before when none).
func withHunks(r *prsm.Record, before, after sync.Version, keep func(prsm.Hunk) bool) (sync.Version, error) {
	all, none := true, true
	for _, h := range r.Hunks {
		if keep(h) {
			none = false
		} else {
			all = false
		}
	}
	switch {
	case all:
		return after, nil
	case none:
		return before, nil
	}
	b, err := patch.ApplyHunks(before.Content, after.Content, func(i int) bool { return i < len(r.Hunks) && keep(r.Hunks[i]) })
	if err != nil {
		return sync.Version{}, fmt.Errorf("hunks of %s: %w", r.ID, err)
	}
	mode := after.Mode
	if !after.Present {
		mode = before.Mode
	}
	return sync.Version{Present: true, Mode: mode, Content: b}, nil
}

// hunkStep is one record's part of a hunk decision: the hunks it rejects
// (its own, or a cascade's) and accepts.
type hunkStep struct {
	r              *prsm.Record
	reject, accept map[int]bool
}

// hunkIntent is the payload of a hunk decision's intent: the record and
// the hunks it rejects. Finishing it after a crash takes them out again
// (the merge finds them gone, if they are) and stores their statuses.
type hunkIntent struct {
	Record string `json:"record"`
	Reject []int  `json:"reject"`
}

// intentHunks is the kind of a hunk decision's intent (intents.go).
const intentHunks = "hunks"

// DecideHunks is Engine.DecideHunks's work.
func (rv *reviewer) DecideHunks(ctx context.Context, sessionID, id string, accept, reject []int) (*api.Records, error) {
	return rv.DecideHunksWith(ctx, sessionID, id, api.HunksRequest{Accept: accept, Reject: reject, WithEarlier: true})
}

// DecideHunksWith is Engine.DecideHunksWith's work.
func (rv *reviewer) DecideHunksWith(ctx context.Context, sessionID, id string, req api.HunksRequest) (*api.Records, error) {
	accept, reject := req.Accept, req.Reject
	s, st, unlock, err := rv.sessions.lockSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	r, err := rv.oneRecord(ctx, s, id)
	if err != nil {
		return nil, err
	}
	if len(accept)+len(reject) == 0 {
		return nil, prsm.Errorf(prsm.ErrInvalid, "no_hunks_named", "name hunks to accept or reject", "no hunk named")
	}
	if len(r.Hunks) == 0 {
		return nil, prsm.Errorf(prsm.ErrConflict, "no_hunks", "accept or reject the change whole",
			"change %s has no hunks (a binary, symlink, mode-only or empty change)", r.ID)
	}
	step := &hunkStep{r: r, reject: map[int]bool{}, accept: map[int]bool{}}
	for _, list := range []struct {
		idx  []int
		want string
		into map[int]bool
	}{{accept, prsm.StatusAccepted, step.accept}, {reject, prsm.StatusRejected, step.reject}} {
		for _, n := range list.idx {
			if n < 0 || n >= len(r.Hunks) {
				return nil, prsm.Errorf(prsm.ErrNotFound, "no_hunk", fmt.Sprintf("change %s has hunks 0 to %d", r.ID, len(r.Hunks)-1),
					"change %s has no hunk %d", r.ID, n)
			}
			if step.accept[n] || step.reject[n] {
				if list.into[n] {
					continue
				}
				return nil, prsm.Errorf(prsm.ErrInvalid, "hunk_twice", "", "hunk %d is both accepted and rejected", n)
			}
			switch shown := prsm.HunkStatus(r.Status, r.Hunks[n].Status); shown {
			case list.want:
				// Decided so already: a no-op.
			case prsm.StatusPending:
				list.into[n] = true
			default:
				return nil, prsm.Errorf(prsm.ErrConflict, "hunk_decided", "", "hunk %d of change %s was %s", n, r.ID, shown)
			}
		}
	}
	if len(step.accept)+len(step.reject) == 0 {
		return rv.hunkAnswer(ctx, []*prsm.Record{r}, nil)
	}
	var earlier []*prsm.Record
	if settlesAccepted(s, step) {
		if earlier, err = rv.earlierPending(ctx, s, []*prsm.Record{r}); err != nil {
			return nil, err
		}
		if len(earlier) > 0 && !req.WithEarlier {
			return nil, needsEarlier(r.ID, earlier)
		}
	}
	steps, err := rv.hunkCascade(ctx, s, step)
	if err != nil {
		return nil, err
	}
	if err := rv.checkHunkMerges(ctx, s, steps); err != nil {
		return nil, err
	}
	// Written down before the first write: a crash halfway leaves the
	// rest to the next start.
	var intents []int64
	err = rv.DB.Tx(ctx, func(q store.Querier) error {
		intents = intents[:0]
		for _, st := range steps {
			if len(st.reject) == 0 {
				continue
			}
			b, _ := json.Marshal(hunkIntent{Record: st.r.ID, Reject: sortedKeys(st.reject)})
			id, err := store.AddIntent(ctx, q, s.ID, intentHunks, b)
			if err != nil {
				return err
			}
			intents = append(intents, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ctx = context.WithoutCancel(ctx)
	var cascaded []api.HunkRef
	changed := []*prsm.Record{}
	i := 0
	for _, hs := range steps { // newest first
		if len(hs.reject) > 0 {
			if err := rv.rejectHunks(ctx, s, st, hs.r, hs.reject); err != nil {
				return nil, err
			}
			if err := store.DoneIntent(ctx, rv.DB.Q(), intents[i]); err != nil {
				return nil, err
			}
			i++
		}
		if len(hs.accept) > 0 {
			if err := rv.acceptHunks(ctx, s, hs.r, hs.accept); err != nil {
				return nil, err
			}
		}
		if hs.r.ID != r.ID {
			for _, n := range sortedKeys(hs.reject) {
				cascaded = append(cascaded, api.HunkRef{ID: hs.r.ID, Index: n})
			}
		}
		changed = append(changed, hs.r)
	}
	sortRecords(changed, false)
	for _, r := range changed {
		rv.publishStatus(r) // its hunks changed, its status maybe not
	}
	rv.publishSession(ctx, s.ID)
	ans, err := rv.hunkAnswer(ctx, changed, cascaded)
	if err != nil || len(earlier) == 0 {
		return ans, err
	}
	// What the accept applied first, as it stands now.
	for i, x := range earlier {
		if earlier[i], err = store.GetRecord(ctx, rv.DB.Q(), s.ID, x.ID); err != nil {
			return nil, err
		}
	}
	if err := rv.rec.FillContent(ctx, earlier); err != nil {
		return nil, err
	}
	ans.Earlier = earlier
	return ans, nil
}

// hunkAnswer is the answer of a hunk decision.
func (rv *reviewer) hunkAnswer(ctx context.Context, recs []*prsm.Record, cascaded []api.HunkRef) (*api.Records, error) {
	ans, err := rv.rec.answer(ctx, recs)
	if err != nil {
		return nil, err
	}
	sort.Slice(cascaded, func(i, j int) bool {
		if cascaded[i].ID != cascaded[j].ID {
			return cascaded[i].ID < cascaded[j].ID
		}
		return cascaded[i].Index < cascaded[j].Index
	})
	ans.Cascaded = cascaded
	return ans, nil
}

// oneRecord is the record id names: a record's own id, or a tool call's
// that changed one file only.
func (rv *reviewer) oneRecord(ctx context.Context, s *prsm.Session, id string) (*prsm.Record, error) {
	recs, err := rv.rec.recordsOf(ctx, s, id)
	if err != nil {
		return nil, err
	}
	if err := refuseRewound(recs); err != nil {
		return nil, err
	}
	if len(recs) > 1 {
		ids := make([]string, len(recs))
		for i, r := range recs {
			ids[i] = r.ID
		}
		return nil, prsm.Errorf(prsm.ErrInvalid, "several_records", "name one: "+strings.Join(ids, ", "),
			"tool call %s changed %d files; hunks belong to one change", id, len(recs))
	}
	return recs[0], nil
}

// hunkCascade is the decision step and, for its rejects, the later
// records of the file whose pending hunks overlap or touch the rejected
// lines (and so on, through each), newest first.
func (rv *reviewer) hunkCascade(ctx context.Context, s *prsm.Session, first *hunkStep) ([]*hunkStep, error) {
	steps := []*hunkStep{first}
	if len(first.reject) == 0 {
		return steps, nil
	}
	later, err := store.ListRecords(ctx, rv.DB.Q(), store.RecordFilter{SessionID: s.ID, RelPath: first.r.RelPath})
	if err != nil {
		return nil, err
	}
	// The rejected lines, as spans of the newest content seen so far.
	var spans []span
	for n := range first.reject {
		spans = append(spans, newSide(first.r.Hunks[n]))
	}
	prev := first.r
	for _, l := range later {
		if l.Seq <= first.r.Seq || l.Status == prsm.StatusRejected || len(spans) == 0 {
			continue
		}
		// Between the two records' contents (equal unless something
		// else changed the file between them), then through l itself.
		_, pa, err := rv.rawVersions(ctx, prev)
		if err != nil {
			return nil, err
		}
		lb, la, err := rv.rawVersions(ctx, l)
		if err != nil {
			return nil, err
		}
		if !sync.Same(pa, lb) {
			spans, _ = mapSpans(blockHunks(pa.Content, lb.Content), spans)
		}
		if len(l.Hunks) == 0 {
			// A change without hunks (made binary, a link): its base is
			// gone where the spans lie; whole-record review decides it.
			spans, _ = mapSpans(blockHunks(lb.Content, la.Content), spans)
			prev = l
			continue
		}
		var touched map[int]bool
		spans, touched = mapSpans(l.Hunks, spans)
		step := &hunkStep{r: l, reject: map[int]bool{}, accept: map[int]bool{}}
		for n := range touched {
			if prsm.HunkStatus(l.Status, l.Hunks[n].Status) == prsm.StatusPending {
				step.reject[n] = true
			}
		}
		if len(step.reject) > 0 {
			steps = append(steps, step)
		}
		prev = l
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i].r.Seq > steps[j].r.Seq })
	return steps, nil
}

// span is a run of lines [lo, hi) of one content, 0-based; lo == hi is
// the point between two lines (the place of lines deleted).
type span struct{ lo, hi int }

// oldSide and newSide are a hunk's lines as spans of the old and new
// content.
func oldSide(h prsm.Hunk) span { return side(h.OldStart, h.OldLines) }
func newSide(h prsm.Hunk) span { return side(h.NewStart, h.NewLines) }

func side(start, lines int) span {
	if lines == 0 {
		return span{start, start} // after line start (1-based)
	}
	return span{start - 1, start - 1 + lines}
}

// blockHunks are the hunks of old -> new (tracker's, the one diff).
func blockHunks(old, new []byte) []prsm.Hunk {
	_, _, hunks, _ := sync.RangesAndHunks(old, new)
	return hunks
}

// mapSpans carries spans of a change's old content over to its new
// content (hunks, in file order): a span moves by the lines the hunks
// before it added or removed, and a hunk that overlaps or touches a span
// is touched, its new lines joined to the span.
func mapSpans(hunks []prsm.Hunk, spans []span) ([]span, map[int]bool) {
	touched := map[int]bool{}
	out := make([]span, 0, len(spans))
	for _, sp := range spans {
		shift := 0
		ns := span{-1, -1}
		for i, h := range hunks {
			o := oldSide(h)
			if o.lo <= sp.hi && sp.lo <= o.hi {
				touched[i] = true
				n := newSide(h)
				if ns.lo < 0 || n.lo < ns.lo {
					ns.lo = n.lo
				}
				ns.hi = max(ns.hi, n.hi)
				continue
			}
			if o.hi < sp.lo || (o.hi == sp.lo && o.lo < sp.lo) {
				shift += h.NewLines - h.OldLines
			}
		}
		moved := span{sp.lo + shift, sp.hi + shift}
		if ns.lo >= 0 {
			// The touched hunks' new lines and the span's own, as one.
			moved = span{min(moved.lo, ns.lo), max(moved.hi, ns.hi)}
		}
		out = append(out, moved)
	}
	return out, touched
}

// rawVersions are a record's stored sides, hunks rejected or not.
func (rv *reviewer) rawVersions(ctx context.Context, r *prsm.Record) (before, after sync.Version, err error) {
	raw := *r
	raw.Hunks = nil
	return rv.rec.versions(ctx, &raw)
}

// checkHunkMerges plays the rejects of steps (newest first) on the
// worktree's and the workspace's files in memory, and refuses the
// decision if a reverse merge conflicts: the user (or the agent) edited
// the hunk's lines since. Nothing is written then.
func (rv *reviewer) checkHunkMerges(ctx context.Context, s *prsm.Session, steps []*hunkStep) error {
	rel := steps[0].r.RelPath
	var wt, ws sync.Version
	var err error
	if s.Status == prsm.SessionActive {
		if wt, err = sync.ReadVersion(s.WorktreePath, rel); err != nil {
			return err
		}
	}
	if ws, err = sync.ReadVersion(rv.Repo.Root, rel); err != nil {
		return err
	}
	for _, hs := range steps {
		if len(hs.reject) == 0 {
			continue
		}
		from, to, err := rv.hunkDelta(ctx, hs.r, hs.reject)
		if err != nil {
			return err
		}
		ok := true
		if s.Status == prsm.SessionActive {
			if wt, ok = sync.Merge(from, wt, to); !ok {
				return hunkConflict(hs.r, "worktree")
			}
		}
		if mayHaveReached(s, hs.r) {
			if ws, ok = sync.Merge(from, ws, to); !ok {
				return hunkConflict(hs.r, "workspace")
			}
		}
	}
	return nil
}

func hunkConflict(r *prsm.Record, where string) error {
	return prsm.Errorf(prsm.ErrConflict, "hunk_conflict", "reject the change whole, or edit the file yourself",
		"the lines of change %s's hunk were edited since in the %s file %s; nothing was changed", r.ID, where, r.RelPath)
}

// hunkDelta is what rejecting hunks reject of r takes out: from r's after
// side as it stands to the same less those hunks.
func (rv *reviewer) hunkDelta(ctx context.Context, r *prsm.Record, reject map[int]bool) (from, to sync.Version, err error) {
	before, after, err := rv.rawVersions(ctx, r)
	if err != nil {
		return
	}
	if from, err = withHunks(r, before, after, func(h prsm.Hunk) bool { return h.Status != prsm.StatusRejected }); err != nil {
		return
	}
	to, err = withHunks(r, before, after, func(h prsm.Hunk) bool { return h.Status != prsm.StatusRejected && !reject[h.Index] })
	return
}

// rejectHunks takes hunks reject of r out of the worktree and workspace
// and stores their statuses (and r's, once every hunk is decided).
// Running it again after a crash is harmless: the merges find the lines
// gone.
func (rv *reviewer) rejectHunks(ctx context.Context, s *prsm.Session, st *sessionState, r *prsm.Record, reject map[int]bool) error {
	from, to, err := rv.hunkDelta(ctx, r, reject)
	if err != nil {
		return err
	}
	state, err := rv.revertDelta(ctx, s, st, r, from, to)
	if err != nil {
		return err
	}
	if state != prsm.SyncConflict {
		state = r.SyncState // a change that never reached the workspace still has not
	}
	crashPoint("hunks:reverted")
	now := time.Now().UTC()
	for n := range reject {
		r.Hunks[n].Status = prsm.StatusRejected
		r.Hunks[n].RejectedAt = now
	}
	return rv.settleHunks(ctx, s, r, state)
}

// acceptHunks marks hunks accept of r accepted (and r, once every hunk is
// decided: in review mode it then reaches the workspace).
func (rv *reviewer) acceptHunks(ctx context.Context, s *prsm.Session, r *prsm.Record, accept map[int]bool) error {
	for n := range accept {
		r.Hunks[n].Status = prsm.StatusAccepted
	}
	return rv.settleHunks(ctx, s, r, r.SyncState)
}

// settleHunks stores r's hunks and, once none is pending, its status:
// rejected when all are, else accepted or partial (in review mode by
// accept, which brings the accepted hunks to the workspace, after the
// earlier pending changes of the file). state is its sync state.
func (rv *reviewer) settleHunks(ctx context.Context, s *prsm.Session, r *prsm.Record, state string) error {
	if err := store.UpdateRecordHunks(ctx, rv.DB.Q(), s.ID, r.ID, r.Hunks); err != nil {
		return err
	}
	accepted, rejected := 0, 0
	for _, h := range r.Hunks {
		switch h.Status {
		case prsm.StatusAccepted:
			accepted++
		case prsm.StatusRejected:
			rejected++
		}
	}
	switch {
	case accepted+rejected < len(r.Hunks):
		return rv.rec.setState(ctx, r, r.Status, state)
	case accepted == 0:
		return rv.setStates(ctx, []stateChange{{r: r, status: prsm.StatusRejected, syncSt: rejectedState(r, state), rejected: true}}, "")
	case s.Mode == prsm.ModeReview && r.SyncState == prsm.SyncPendingReview:
		if err := rv.rec.setState(ctx, r, r.Status, state); err != nil {
			return err
		}
		_, err := rv.accept(ctx, s, r)
		return err
	}
	return rv.rec.setState(ctx, r, decidedStatus(r), state)
}

// settlesAccepted reports whether the decision step leaves no hunk of
// its record pending and some accepted, in review mode, so that
// settleHunks accepts the record: its earlier pending records go first.
func settlesAccepted(s *prsm.Session, step *hunkStep) bool {
	r := step.r
	if s.Mode != prsm.ModeReview || r.SyncState != prsm.SyncPendingReview {
		return false
	}
	accepted := false
	for i, h := range r.Hunks {
		switch {
		case step.accept[i] || h.Status == prsm.StatusAccepted:
			accepted = true
		case step.reject[i] || h.Status == prsm.StatusRejected:
		default:
			return false
		}
	}
	return accepted
}

// decidedStatus is the status an accept gives r: accepted, or partial
// when some of its hunks were rejected.
func decidedStatus(r *prsm.Record) string {
	for _, h := range r.Hunks {
		if h.Status == prsm.StatusRejected {
			return prsm.StatusPartial
		}
	}
	return prsm.StatusAccepted
}

// recoverHunks finishes a hunk decision's reject a crash cut off.
func (rv *reviewer) recoverHunks(ctx context.Context, s *prsm.Session, st *sessionState, payload []byte) error {
	var p hunkIntent
	if err := json.Unmarshal(payload, &p); err != nil {
		return err
	}
	r, err := store.GetRecord(ctx, rv.DB.Q(), s.ID, p.Record)
	if errors.Is(err, prsm.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	reject := map[int]bool{}
	for _, n := range p.Reject {
		if n >= 0 && n < len(r.Hunks) && r.Hunks[n].Status == prsm.StatusPending {
			reject[n] = true
		}
	}
	if len(reject) == 0 || r.Status == prsm.StatusRejected {
		return nil
	}
	return rv.rejectHunks(ctx, s, st, r, reject)
}

// hunkOut is the delta a hunk reject took out of a file: from the
// change's after side with the hunks, to it without them.
type hunkOut struct{ from, to sync.Version }
