package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/tracker"
)

// fillPlan lists operations, warnings and conflicts. opType names the
// operation of a path (false: the worktree does not change there).
func (e *Engine) fillPlan(ctx context.Context, s *prsm.Session, rb *rollback, opType func(string) (string, bool)) error {
	p := rb.plan
	p.Operations, p.AffectedFiles, p.Conflicts, p.Warnings = []api.Operation{}, []string{}, []api.Conflict{}, []string{}
	byPath := map[string][]*prsm.Record{} // newest first
	paths := map[string]bool{}
	for _, r := range rb.undo {
		byPath[r.RelPath] = append(byPath[r.RelPath], r)
		paths[r.RelPath] = true
		if r.Status == prsm.StatusAccepted {
			p.Warnings = append(p.Warnings, fmt.Sprintf("undoes accepted change %s (%s)", r.ID, r.RelPath))
		}
	}
	for path := range rb.targets {
		paths[path] = true
	}
	for _, path := range sortedSet(paths) {
		typ, ok := opType(path)
		if !ok {
			continue
		}
		op := api.Operation{Type: typ, Path: path, RecordIDs: []string{}}
		recs := byPath[path]
		for i := len(recs) - 1; i >= 0; i-- {
			op.RecordIDs = append(op.RecordIDs, recs[i].ID)
		}
		if len(recs) == 0 {
			if rb.targets != nil {
				what := "back into the workspace"
				if s.Mode == prsm.ModeReview {
					what = "back for review"
				}
				p.Warnings = append(p.Warnings, fmt.Sprintf("%s: changes you rejected after this checkpoint come %s (the file goes back to what it held then)", path, what))
			} else {
				p.Warnings = append(p.Warnings, fmt.Sprintf("%s changed in the worktree without a record; only the worktree is restored", path))
			}
		}
		p.Operations = append(p.Operations, op)
		p.AffectedFiles = append(p.AffectedFiles, path)
	}
	// Simulate the workspace's reverse merges to find the conflicts.
	for _, path := range sortedSet(paths) {
		ws, err := sync.ReadVersion(e.Repo.Root, path)
		if err != nil {
			p.Conflicts = append(p.Conflicts, api.Conflict{Path: path, Reason: err.Error()})
			continue
		}
		if rb.targets != nil && !rb.byRecord[path] {
			// A rewind takes the net change since the checkpoint out,
			// the part of it the workspace followed (workspaceSide).
			to, ok := rb.targets[path]
			if !ok {
				continue
			}
			if w, ok := rb.wsTargets[path]; ok {
				to = w
			}
			if rb.wsConflict[path] {
				p.Conflicts = append(p.Conflicts, api.Conflict{Path: path,
					Reason: "changes never applied to the workspace overlap the checkpoint's; the workspace file will be left as it is"})
				continue
			}
			var unsynced []*prsm.Record
			for _, r := range byPath[path] {
				if r.SyncState != prsm.SyncSynced {
					unsynced = append(unsynced, r)
				}
			}
			status := map[string]string{}
			for _, r := range unsynced {
				status[r.ID] = r.Status
			}
			side, ok, err := e.workspaceSideOf(ctx, rb.from[path], unsynced, status, rb.hidden[path])
			if err != nil {
				return err
			}
			if !ok {
				p.Conflicts = append(p.Conflicts, api.Conflict{Path: path,
					Reason: "changes never applied to the workspace overlap later ones; the workspace file will be left as it is"})
				continue
			}
			if _, ok := sync.Merge(side, ws, to); !ok {
				var ids []string
				for i := len(byPath[path]) - 1; i >= 0; i-- {
					if r := byPath[path][i]; r.SyncState == prsm.SyncSynced {
						ids = append(ids, r.ID)
					}
				}
				what := "the changes since the checkpoint"
				if len(ids) > 0 {
					what = "change " + strings.Join(ids, ", ")
				}
				p.Conflicts = append(p.Conflicts, api.Conflict{Path: path,
					Reason: fmt.Sprintf("your edits overlap %s; the workspace file will be left as it is", what)})
			}
			continue
		}
		for _, r := range byPath[path] {
			if r.SyncState != prsm.SyncSynced {
				continue // never reached the workspace: nothing to take out
			}
			before, after, err := e.versions(ctx, r)
			if err != nil {
				return err
			}
			var ok bool
			if ws, ok = sync.Merge(after, ws, before); !ok {
				p.Conflicts = append(p.Conflicts, api.Conflict{Path: path,
					Reason: fmt.Sprintf("your edits overlap change %s; the workspace file will be left as it is", r.ID)})
				break
			}
		}
	}
	return nil
}

// workspaceSide is what the workspace followed of the worktree's from:
// from without the deltas of unsynced (newest first), undone records that
// never reached the workspace (review mode, a failed sync). A rollback
// takes only the rest of the worktree's change to the workspace
// (workspaceSide -> target), so nothing the user did not accept reaches
// it. false: those deltas cannot be taken out (later changes overlap).
func (e *Engine) workspaceSide(ctx context.Context, from sync.Version, unsynced []*prsm.Record) (sync.Version, bool, error) {
	return e.workspaceSideOf(ctx, from, unsynced, nil, nil)
}

// workspaceSideOf is workspaceSide where the deltas of hidden (records
// rejected without ever reaching the workspace, rollbackPayload.Hidden)
// come out too where one of unsynced, a rollback's record the user
// accepted (status by id) that never reached the workspace, took them
// out (broughtBack) and taking it out of from brings them back: they come
// out with it, the two cancel. A hidden change no such record brings
// back may have reached the workspace another way (an offer accepted
// since, a later part of the same rollback), and stays.
func (e *Engine) workspaceSideOf(ctx context.Context, from sync.Version, unsynced []*prsm.Record, status map[string]string, hidden []*prsm.Record) (sync.Version, bool, error) {
	by, err := e.broughtBack(ctx, unsynced, status, hidden)
	if err != nil {
		return sync.Version{}, false, err
	}
	var brought []*prsm.Record
	for _, h := range hidden {
		if by[h.ID] != "" {
			brought = append(brought, h)
		}
	}
	recs := newestFirst(unsynced, brought)
	ds, err := e.deltas(ctx, recs)
	if err != nil {
		return sync.Version{}, false, err
	}
	moved := map[string]bool{} // the unsynced records whose taking out changed side
	side := from
	for i := 0; i < len(ds); i++ {
		// A run of records each following on the next (a change, and a
		// rollback's record taking it out) that ends where it began
		// changes nothing: skipped whole, though taking its records out
		// one by one might not merge (a file created twice). Each of
		// them undoes another, so each counts as having moved.
		if j := cancelling(ds, i); j > i {
			for k := i; k <= j; k++ {
				moved[recs[k].ID] = true
			}
			i = j
			continue
		}
		if b := by[recs[i].ID]; b != "" && !moved[b] {
			continue // what brought it back changed nothing
		}
		if !side.Present && ds[i].before.Present && ds[i].after.Present {
			continue // an edit of a file that is not there: nothing to take out
		}
		if side.Present && ds[i].before.Present && !ds[i].after.Present {
			continue // a deletion of a file made again since: nothing of it is left
		}
		next, ok := sync.Merge(ds[i].after, side, ds[i].before)
		if !ok {
			return sync.Version{}, false, nil
		}
		moved[recs[i].ID] = !sameVersion(next, side)
		side = next
	}
	return side, true, nil
}

// broughtBack maps the records of hidden that a rollback's accepted
// record among unsynced took out to that record's id: the record's
// before side holds the change (taking it out changes that side) and its
// after side does not.
func (e *Engine) broughtBack(ctx context.Context, unsynced []*prsm.Record, status map[string]string, hidden []*prsm.Record) (map[string]string, error) {
	var brings []*prsm.Record
	var ds []delta
	for _, r := range unsynced {
		if r.ToolName != "Rollback" || status[r.ID] != prsm.StatusAccepted {
			continue
		}
		b, a, err := e.versions(ctx, r)
		if err != nil {
			return nil, err
		}
		brings, ds = append(brings, r), append(ds, delta{b, a})
	}
	newest := newestFirst(hidden, nil)
	hds, err := e.deltas(ctx, newest)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	// A rollback's record that took out several of them at once (a
	// rollback of the last two changes of a file: a deletion and a
	// create after it) holds none alone in its before side: it reverses
	// their run. The run of hidden changes right before it, each
	// following on the next, that goes from its after side to its before
	// side is brought back whole, and nothing else is: an older change
	// that its before side also holds (an offer's change, offered again
	// by the run) was not taken out by it. A change the user rejected
	// before the record was made left the worktree then, with no record
	// of its own: it is no part of the run.
	whole := map[string]bool{}
	for i, r := range brings {
		cur := ds[i].before
		var run []*prsm.Record
		for j, h := range newest {
			if h.Seq > r.Seq || out[h.ID] != "" {
				continue
			}
			if !h.RejectedAt.IsZero() && h.RejectedAt.Before(r.Timestamp) {
				continue
			}
			if !sameVersion(hds[j].after, cur) {
				break
			}
			cur = hds[j].before
			run = append(run, h)
			if sameVersion(cur, ds[i].after) {
				for _, h := range run {
					out[h.ID] = r.ID
				}
				whole[r.ID] = true
				break
			}
		}
	}
	// Otherwise a change is brought back by a record whose before side
	// holds it and whose after side does not. A rollback's offer (its
	// change often takes lines out, and taking that out of a side adds
	// them wherever they are missing, held or not) is brought back by a
	// run only.
	for j, h := range newest {
		if out[h.ID] != "" || h.ToolName == "Rollback" {
			continue
		}
		hb, ha := hds[j].before, hds[j].after
		for i, d := range ds {
			if brings[i].Seq < h.Seq || whole[brings[i].ID] {
				continue
			}
			in, ok := sync.Merge(ha, d.before, hb)
			if !ok || sameVersion(in, d.before) {
				continue // not in its before side
			}
			if still, ok := sync.Merge(ha, d.after, hb); ok && !sameVersion(still, d.after) {
				continue // still in its after side
			}
			out[h.ID] = brings[i].ID
			break
		}
	}
	return out, nil
}

// rollbackSide is workspaceSide for a running rollback: recs are the
// undone records of path rel (newest first), and the payload says which
// of them had not reached the workspace, and (a review-mode rewind) which
// records rejected since the checkpoint never did (Hidden).
func (e *Engine) rollbackSide(ctx context.Context, p *rollbackPayload, rel string, recs []*prsm.Record, from sync.Version) (sync.Version, bool, error) {
	var unsynced []*prsm.Record
	for _, r := range recs {
		if _, ok := p.Unsynced[r.ID]; ok {
			unsynced = append(unsynced, r)
		}
	}
	var hidden []*prsm.Record
	for _, id := range p.Hidden[rel] {
		r, err := store.GetRecord(ctx, e.DB.Q(), p.session, id)
		if err != nil {
			return sync.Version{}, false, err
		}
		hidden = append(hidden, r)
	}
	return e.workspaceSideOf(ctx, from, unsynced, p.Unsynced, hidden)
}

// workspaceTarget is the target of the workspace file rel in a rewind:
// the worktree's (to) unless the payload says otherwise.
func (e *Engine) workspaceTarget(ctx context.Context, p *rollbackPayload, rel string, to sync.Version) (sync.Version, error) {
	if w, ok := p.Workspace[rel]; ok {
		return e.stateVersion(ctx, w)
	}
	return to, nil
}

// planWrites decides the rollback's worktree writes without making any: a
// rewind's targets are the checkpoint's files; a selector rollback takes
// each record's delta out of the file by reverse merges, newest first, and
// refuses when a later change overlaps. Every content it may write, now or
// to put the worktree back, goes to the blob store.
func (e *Engine) planWrites(ctx context.Context, s *prsm.Session, st *sessionState, rb *rollback) (*rollbackPayload, error) {
	p := &rollbackPayload{Undo: []string{}, Worktree: map[string]store.FileState{}, Before: map[string]store.FileState{}, Net: rb.targets != nil}
	for _, r := range rb.undo {
		p.Undo = append(p.Undo, r.ID)
	}
	for _, r := range rb.undo {
		if r.SyncState != prsm.SyncSynced {
			if p.Unsynced == nil {
				p.Unsynced = map[string]string{}
			}
			p.Unsynced[r.ID] = r.Status
		}
	}
	targets := rb.targets
	if targets == nil {
		var err error
		if targets, err = e.selectorTargets(ctx, s, rb.undo); err != nil {
			return nil, err
		}
	}
	var contents [][]byte
	for _, rel := range sortedVersions(targets) {
		before, err := st.tracker.KnownVersion(rel, e.blobs(ctx))
		if err != nil {
			return nil, err
		}
		v := targets[rel]
		p.Worktree[rel], p.Before[rel] = tracker.StateOf(v), tracker.StateOf(before)
		for _, x := range []sync.Version{v, before} {
			if x.Present {
				contents = append(contents, x.Content)
			}
		}
	}
	for _, rel := range sortedVersions(rb.wsTargets) {
		v := rb.wsTargets[rel]
		if p.Workspace == nil {
			p.Workspace = map[string]store.FileState{}
		}
		p.Workspace[rel] = tracker.StateOf(v)
		if v.Present {
			contents = append(contents, v.Content)
		}
	}
	p.WorkspaceConflict = sortedSet(rb.wsConflict)
	if len(p.WorkspaceConflict) == 0 {
		p.WorkspaceConflict = nil
	}
	if len(rb.byRecord) > 0 {
		p.ByRecord = sortedSet(rb.byRecord)
	}
	for rel, recs := range rb.hidden {
		if _, ok := targets[rel]; !ok {
			continue
		}
		if p.Hidden == nil {
			p.Hidden = map[string][]string{}
		}
		for _, r := range recs {
			p.Hidden[rel] = append(p.Hidden[rel], r.ID)
		}
	}
	err := e.DB.Tx(ctx, func(q store.Querier) error {
		for _, c := range contents {
			if _, err := store.PutBlob(ctx, q, c); err != nil {
				return err
			}
		}
		return nil
	})
	return p, err
}
