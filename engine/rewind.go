package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine/workspace"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/tracker"
	"github.com/prsm-dev/prsm/worktree"
)

// A rewind restores the session as it was at a checkpoint (SPEC rule 5):
// the worktree exactly (the checkpoint's tree), the review state (every
// record made before the checkpoint takes back the state the review
// history says it had then; every record made after it becomes rewound),
// and the workspace: each file's net change, from what the workspace holds
// of the worktree now to what it held of the checkpoint's, is merged into
// it, so the user's own edits stay. No record is made. The safety
// checkpoint taken first notes the review history too, so a rewind to it
// undoes the rewind, decisions included.

// rewinder rewinds a session: to a checkpoint (rewind.go,
// rewindplan.go), or by a selector (selectors.go, selectorplan.go); both
// run as rewindrun.go says, with the files rewindstate.go reads. It keeps
// no state of its own: a rewind runs under the session's lock, and its
// intent is its state.
type rewinder struct{ *Engine }

// intentRewind is the kind of a rewind's intent (rewindPayload).
const intentRewind = "rewind"

// rewind is what a rewind will do.
type rewind struct {
	plan *api.Plan
	now  *treeState
	// worktree and before: the exact target of every worktree path that
	// changes, and what prsm knows it holds now.
	worktree, before map[string]sync.Version
	// wsFrom and wsTo: for every workspace path that changes, what the
	// workspace holds of the worktree now and held of it at the checkpoint.
	wsFrom, wsTo map[string]sync.Version
	// wsConflict: paths whose workspace side cannot be worked out (changes
	// it never had overlap), left as they are.
	wsConflict map[string]bool
	// states: the records whose review state changes, with the new one.
	states []store.RecordState
}

// rewindPayload is a rewind's intent (SPEC rule 6): exact targets of the
// worktree, the workspace's net changes and the records' states, decided
// before the first write, so that finishing it after a crash is doing it
// again.
type rewindPayload struct {
	Safety     string                     `json:"safety"`
	Worktree   map[string]store.FileState `json:"worktree"`
	Before     map[string]store.FileState `json:"before"`
	WsFrom     map[string]store.FileState `json:"ws_from"`
	WsTo       map[string]store.FileState `json:"ws_to"`
	WsConflict []string                   `json:"ws_conflict,omitempty"`
	States     []store.RecordState        `json:"states"`
}

// inWorktreeOnly reports whether r's change is in the worktree but not in
// the workspace: a change not decided away (pending, accepted, partial)
// that never reached the workspace (review mode, or a workspace file that
// could not take it).
func inWorktreeOnly(r *prsm.Record) bool {
	switch r.Status {
	case prsm.StatusPending, prsm.StatusAccepted, prsm.StatusPartial:
		return r.SyncState != prsm.SyncSynced
	}
	return false
}

// workspaceOf is what the workspace holds of the worktree file wt: wt
// without the deltas of the records of its path (recs, in any order) that
// never reached the workspace, taken out newest first. false: they cannot
// be taken out (later changes overlap them).
func (rn *rewinder) workspaceOf(ctx context.Context, wt sync.Version, recs []*prsm.Record) (sync.Version, bool, error) {
	var out []*prsm.Record
	for _, r := range recs {
		if inWorktreeOnly(r) {
			out = append(out, r)
		}
	}
	sortRecords(out, true)
	v := wt
	for _, r := range out {
		b, a, err := rn.rec.versions(ctx, r)
		if err != nil {
			return sync.Version{}, false, err
		}
		var ok bool
		if v, ok = sync.Merge(a, v, b); !ok {
			return sync.Version{}, false, nil
		}
	}
	return v, true, nil
}

// diverged reports whether a record of recs left the workspace file out
// of step with the worktree (a conflict: an apply or a reject it could not
// take, after the user's own edit): what the workspace held of the
// worktree then is not known, and a rewind to that state leaves the file
// as it is. (Away from such a state, the net change is known: the
// conflicted record's change never reached the workspace.)
func diverged(recs []*prsm.Record) bool {
	for _, r := range recs {
		if r.SyncState == prsm.SyncConflict && r.Status != prsm.StatusRewound {
			return true
		}
	}
	return false
}

// planRewind works out a rewind to checkpoint c.
func (rn *rewinder) planRewind(ctx context.Context, s *prsm.Session, st *sessionState, c *prsm.Checkpoint) (*rewind, error) {
	objs, err := rn.Repo.Objects()
	if err != nil {
		return nil, err
	}
	now, err := rn.ckpt.nowTree(ctx, s, st)
	if err != nil {
		return nil, err
	}
	keep := false
	defer func() {
		if !keep {
			now.done()
		}
	}()
	diffs, err := objs.DiffTrees(now.tree, c.Tree)
	if err != nil {
		return nil, err
	}
	all, err := store.ListRecords(ctx, rn.DB.Q(), store.RecordFilter{SessionID: s.ID})
	if err != nil {
		return nil, err
	}
	rb := &selectorRewind{targets: map[string]sync.Version{}, from: map[string]sync.Version{}}
	for _, r := range all {
		if r.Seq > c.RecordSeq && r.Status != prsm.StatusRejected && r.Status != prsm.StatusRewound {
			rb.undo = append(rb.undo, r)
		}
	}
	sortRecords(rb.undo, true)
	for _, d := range diffs {
		rb.targets[d.Path] = fileVersion(d.To)
		rb.from[d.Path] = fileVersion(d.From)
	}
	if _, err := rn.asCheckedOut(ctx, s, st, c, diffs, rb); err != nil {
		return nil, err
	}
	rw := &rewind{plan: &api.Plan{CheckpointID: c.ID}, now: now, worktree: rb.targets, before: map[string]sync.Version{},
		wsFrom: map[string]sync.Version{}, wsTo: map[string]sync.Version{}, wsConflict: map[string]bool{}}
	for rel := range rw.worktree {
		if rw.before[rel], err = st.tracker.KnownVersion(rel, rn.capture.blobs(ctx)); err != nil {
			return nil, err
		}
	}
	// The review state at the checkpoint.
	then, err := store.StatesAt(ctx, rn.DB.Q(), s.ID, c.DecisionSeq)
	if err != nil {
		return nil, err
	}
	nowByPath, thenByPath := map[string][]*prsm.Record{}, map[string][]*prsm.Record{}
	changed := map[string][]*prsm.Record{} // by path: the records whose state changes, as they are now
	for _, r := range all {
		nowByPath[r.RelPath] = append(nowByPath[r.RelPath], r)
		cur, err := store.StateOf(r)
		if err != nil {
			return nil, err
		}
		to, ok := then[r.ID]
		if r.Seq > c.RecordSeq {
			to, ok = cur, true
			to.Status = prsm.StatusRewound
			if to.SyncState == prsm.SyncPendingReview {
				to.SyncState = prsm.SyncSynced // nothing of it awaits review
			}
		}
		if !ok || to == cur {
			thenByPath[r.RelPath] = append(thenByPath[r.RelPath], r)
			continue
		}
		was, err := to.Apply(r)
		if err != nil {
			return nil, err
		}
		thenByPath[r.RelPath] = append(thenByPath[r.RelPath], was)
		changed[r.RelPath] = append(changed[r.RelPath], r)
		rw.states = append(rw.states, to)
		rw.plan.Decisions = append(rw.plan.Decisions, api.PlanDecision{RecordID: r.ID, RelPath: r.RelPath, ToolName: r.ToolName, From: r.Status, To: to.Status})
	}
	// The workspace side of every path the rewind touches.
	paths := map[string]bool{}
	for rel := range rw.worktree {
		paths[rel] = true
	}
	for rel := range changed {
		paths[rel] = true
	}
	for _, rel := range sortedKeys(paths) {
		wtNow, err := st.tracker.KnownVersion(rel, rn.capture.blobs(ctx))
		if err != nil {
			return nil, err
		}
		wtThen := wtNow
		if v, ok := rw.worktree[rel]; ok {
			wtThen = v
		}
		from, ok1, err := rn.workspaceOf(ctx, wtNow, nowByPath[rel])
		if err != nil {
			return nil, err
		}
		to, ok2, err := rn.workspaceOf(ctx, wtThen, thenByPath[rel])
		if err != nil {
			return nil, err
		}
		switch {
		case !ok1 || !ok2 || diverged(thenByPath[rel]):
			rw.wsConflict[rel] = true
		case !sameVersion(from, to):
			rw.wsFrom[rel], rw.wsTo[rel] = from, to
		}
	}
	if err := rn.fillRewindPlan(ctx, s, rw, changed, diffsOps(diffs)); err != nil {
		return nil, err
	}
	keep = true
	return rw, nil
}

// diffsOps names the worktree operation of each path of a tree diff.
func diffsOps(diffs []worktree.TreeDiff) map[string]string {
	ops := map[string]string{}
	for _, d := range diffs {
		switch {
		case d.To == nil:
			ops[d.Path] = "delete"
		case d.From == nil:
			ops[d.Path] = "create"
		default:
			ops[d.Path] = "restore"
		}
	}
	return ops
}

// fillRewindPlan lists a rewind's operations, conflicts, warnings,
// decisions and its summary in plain words.
func (rn *rewinder) fillRewindPlan(ctx context.Context, s *prsm.Session, rw *rewind, changed map[string][]*prsm.Record, ops map[string]string) error {
	p := rw.plan
	p.Operations, p.AffectedFiles, p.Conflicts, p.Warnings = []api.Operation{}, []string{}, []api.Conflict{}, []string{}
	if p.Decisions == nil {
		p.Decisions = []api.PlanDecision{}
	}
	paths := map[string]bool{}
	for rel := range rw.worktree {
		paths[rel] = true
	}
	for rel := range rw.wsTo {
		paths[rel] = true
	}
	// A path only a change names (its change rejected already, so both
	// sides hold the checkpoint's bytes) has no operation: its change is
	// among the decisions, and the table lists what the summary counts.
	for rel := range rw.wsConflict {
		paths[rel] = true
	}
	for _, rel := range sortedKeys(paths) {
		typ := ops[rel]
		if typ == "" {
			typ = "restore"
		}
		op := api.Operation{Type: typ, Path: rel, RecordIDs: []string{}}
		for _, r := range changed[rel] {
			op.RecordIDs = append(op.RecordIDs, r.ID)
		}
		p.Operations = append(p.Operations, op)
		p.AffectedFiles = append(p.AffectedFiles, rel)
		if rw.wsConflict[rel] {
			p.Conflicts = append(p.Conflicts, api.Conflict{Path: rel,
				Reason: "your workspace file is not in step with the session's changes (a conflict, or changes that never reached it overlapping later ones); it will be left as it is"})
			continue
		}
		to, ok := rw.wsTo[rel]
		if !ok {
			continue
		}
		ws, isDir, err := fileAt(rn.Repo.Root, rel)
		if err != nil {
			p.Conflicts = append(p.Conflicts, api.Conflict{Path: rel, Reason: err.Error()})
			continue
		}
		if isDir && to.Present && !emptiedBy(rn.Repo.Root, rel, func(r string) bool { v, ok := rw.wsTo[r]; return ok && !v.Present }) {
			p.Conflicts = append(p.Conflicts, api.Conflict{Path: rel,
				Reason: "your workspace has a directory there, holding files this rewind keeps; it will be left as it is"})
			continue
		}
		if _, ok := sync.Merge(rw.wsFrom[rel], ws, to); !ok {
			what := "the changes since the checkpoint"
			if len(op.RecordIDs) > 0 {
				what = "change " + strings.Join(op.RecordIDs, ", ")
			}
			p.Conflicts = append(p.Conflicts, api.Conflict{Path: rel,
				Reason: fmt.Sprintf("your edits overlap %s; the workspace file will be left as it is", what)})
		}
	}
	for _, d := range p.Decisions {
		if d.From == prsm.StatusAccepted {
			p.Warnings = append(p.Warnings, fmt.Sprintf("undoes accepted change %s (%s): it becomes %s", d.RecordID, d.RelPath, d.To))
		}
	}
	p.Summary = rewindSummary(s, rw)
	return nil
}

// rewindSummary says in plain sentences what a rewind does.
func rewindSummary(s *prsm.Session, rw *rewind) []string {
	var out []string
	made := 0
	back := map[[2]string]int{}
	for _, d := range rw.plan.Decisions {
		if d.To == prsm.StatusRewound {
			made++
		} else {
			back[[2]string{d.From, d.To}]++
		}
	}
	if made > 0 {
		out = append(out, fmt.Sprintf("%s made after this checkpoint %s set aside as rewound: out of the worktree and your workspace, not pending; undoing the rollback brings %s back.",
			prsm.Plural(made, "change"), one(made, "is", "are"), one(made, "it", "them")))
	}
	keys := make([][2]string, 0, len(back))
	for k := range back {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	for _, k := range keys {
		n := back[k]
		out = append(out, fmt.Sprintf("%s %s since the checkpoint %s %s again, as %s then.",
			prsm.Plural(n, "change"), k[0], one(n, "becomes", "become"), k[1], one(n, "it was", "they were")))
	}
	if n := len(rw.worktree); n > 0 {
		out = append(out, fmt.Sprintf("%s in the session's worktree %s back to the checkpoint.", prsm.Plural(n, "file"), one(n, "goes", "go")))
	}
	if n := len(rw.wsTo); n > 0 {
		out = append(out, fmt.Sprintf("%s in your workspace %s back to what %s then; your own edits in %s are kept.",
			prsm.Plural(n, "file"), one(n, "goes", "go"), one(n, "it held", "they held"), one(n, "it", "them")))
	}
	if n := len(rw.plan.Conflicts); n > 0 {
		out = append(out, fmt.Sprintf("%s in your workspace cannot take the rollback and %s as %s.", prsm.Plural(n, "file"), one(n, "stays", "stay"), one(n, "it is", "they are")))
	}
	if len(out) == 0 {
		out = append(out, "Nothing changes: the session is as it was at this checkpoint.")
	}
	if s.Mode == prsm.ModeReview && made > 0 {
		out = append(out, "Nothing of the rewound changes stays for review.")
	}
	return out
}

// one is a when n is 1, b otherwise.
func one(n int, a, b string) string {
	if n == 1 {
		return a
	}
	return b
}

// runRewind carries out a rewind: the safety checkpoint, then (carryOut)
// the worktree, the workspace and the records' states.
func (rn *rewinder) runRewind(ctx context.Context, s *prsm.Session, st *sessionState, lock *heldLock, rw *rewind, what string) (*api.Plan, error) {
	if err := rn.refuseInFlight(ctx, s); err != nil {
		return nil, err
	}
	p := &rewindPayload{Worktree: map[string]store.FileState{}, Before: map[string]store.FileState{},
		WsFrom: map[string]store.FileState{}, WsTo: map[string]store.FileState{}, WsConflict: sortedKeys(rw.wsConflict), States: rw.states}
	var contents [][]byte
	put := func(m map[string]store.FileState, rel string, v sync.Version) {
		m[rel] = tracker.StateOf(v)
		if v.Present {
			contents = append(contents, v.Content)
		}
	}
	for rel, v := range rw.worktree {
		put(p.Worktree, rel, v)
		put(p.Before, rel, rw.before[rel])
	}
	for rel, v := range rw.wsTo {
		put(p.WsTo, rel, v)
		put(p.WsFrom, rel, rw.wsFrom[rel])
	}
	if err := rn.DB.Tx(ctx, func(q store.Querier) error {
		for _, c := range contents {
			if _, err := store.PutBlob(ctx, q, c); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("rewind: %w", err)
	}
	safety, err := rn.ckpt.saveCheckpoint(ctx, s, st, rw.now, prsm.CheckpointAuto, "before "+what, "", 0, "")
	if err != nil {
		return nil, fmt.Errorf("safety checkpoint: %w", err)
	}
	rw.plan.SafetyCheckpointID, p.Safety = safety.ID, safety.ID
	rest := func(ctx context.Context, syncs *workspace.DiskSyncs) error { return rn.rewindRest(ctx, s, p, syncs) }
	if err := rn.carryOut(ctx, s, st, lock, intentRewind, p, p.Worktree, p.Before, rest, "rewind"); err != nil {
		return nil, err
	}
	return rw.plan, nil
}

// applyRewind finishes a rewind a crash cut off: every step again.
func (rn *rewinder) applyRewind(ctx context.Context, s *prsm.Session, st *sessionState, p *rewindPayload) error {
	syncs := &workspace.DiskSyncs{}
	err := rn.selectorWorktree(ctx, s, st, &selectorPayload{Worktree: p.Worktree}, syncs)
	if err == nil {
		err = rn.rewindRest(ctx, s, p, syncs)
	}
	return errors.Join(err, syncs.Run())
}

// rewindRest is a rewind's workspace and review state: each workspace
// file takes its net change by a 3-way merge (a file that already has it
// is left alone, so doing it again is harmless); one that cannot is left
// as it is, and the records of its path whose state the rewind changes
// say conflict (a rejected one stays out of it). Then the records take their states, in one
// transaction.
func (rn *rewinder) rewindRest(ctx context.Context, s *prsm.Session, p *rewindPayload, syncs *workspace.DiskSyncs) error {
	rels := sortedKeys(p.WsTo)
	tos := make([]sync.Version, len(rels))
	froms := make([]sync.Version, len(rels))
	for i, rel := range rels {
		var err error
		if tos[i], err = rn.stateVersion(ctx, p.WsTo[rel]); err != nil {
			return err
		}
		if froms[i], err = rn.stateVersion(ctx, p.WsFrom[rel]); err != nil {
			return err
		}
	}
	conflict := map[string]bool{}
	for _, rel := range p.WsConflict {
		conflict[rel] = true
	}
	states := make([]string, len(rels))
	workspace.InPathOrder(len(rels), func(i int) string { return rels[i] }, func(i int) bool { return !tos[i].Present }, func(i int) error {
		var err error
		if states[i], err = rn.ws.SyncLater(s.ID, rels[i], froms[i], tos[i], syncs); err != nil {
			rn.Log.Error("rewind: workspace", "session", s.ID, "file", rels[i], "err", err)
		}
		return nil
	})
	for i, rel := range rels {
		if states[i] == prsm.SyncConflict {
			conflict[rel] = true
		}
	}
	crashPoint("rewind:workspace")
	var recs []*prsm.Record
	err := rn.DB.Tx(ctx, func(q store.Querier) error {
		for _, st := range p.States {
			r, err := store.GetRecord(ctx, q, s.ID, st.ID)
			if errors.Is(err, prsm.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if conflict[r.RelPath] && st.Status != prsm.StatusRejected {
				st.SyncState = prsm.SyncConflict // the workspace file was left as it is
			}
			if cur, err := store.StateOf(r); err == nil && cur == st {
				continue // done before a crash
			}
			if err := store.RestoreRecordState(ctx, q, s.ID, st); err != nil {
				return err
			}
			r, err = st.Apply(r)
			if err != nil {
				return err
			}
			recs = append(recs, r)
			crashPoint("rewind:states")
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range recs {
		rn.review.publishStatus(r)
	}
	return nil
}
