package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/tracker"
)

// runRollback executes a plan: safety checkpoint, then (written down first
// as an intent) worktree, workspace, statuses and the rollback's own
// records. A failure while writing the worktree puts it back as it was.
// The files' syncs to the disk run after the answer, holding the
// session's lock (taken over from lock), and the intent is done once they
// are: a crash before that finishes the rollback again at the next start.
func (e *Engine) runRollback(ctx context.Context, s *prsm.Session, st *sessionState, lock *heldLock, rb *rollback, what string) (*api.Plan, error) {
	if tc, err := e.inFlight(ctx, s.ID); err != nil {
		return nil, err
	} else if tc != "" {
		return nil, prsm.Errorf(prsm.ErrConflict, "tool_call_in_flight", "wait for the agent's tool call to finish, then try again",
			"tool call %s of session %s is still running", tc, s.ID)
	}
	// The writes are decided first: a rollback refused (a later change
	// overlaps) leaves nothing behind, not even its safety checkpoint.
	p, err := e.planWrites(ctx, s, st, rb)
	if err != nil {
		return nil, fmt.Errorf("rollback: %w", err) // nothing written yet
	}
	var safety *prsm.Checkpoint
	if rb.now != nil {
		safety, err = e.saveCheckpoint(ctx, s, st, rb.now, prsm.CheckpointAuto, "before "+what, "", 0, "")
	} else {
		safety, err = e.checkpoint(ctx, s, st, prsm.CheckpointAuto, "before "+what, "", 0, "")
	}
	if err != nil {
		return nil, fmt.Errorf("safety checkpoint: %w", err)
	}
	rb.plan.SafetyCheckpointID = safety.ID
	p.Safety = safety.ID
	b, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	intent, err := store.AddIntent(ctx, e.DB.Q(), s.ID, intentRollback, b)
	if err != nil {
		return nil, err
	}
	// Written down: it runs to its end even if the caller goes away.
	ctx = context.WithoutCancel(ctx)
	// The worktree first: it is prsm's own, and can always be put back.
	syncs := &diskSyncs{}
	if err := e.rollbackWorktree(ctx, s, st, p, syncs); err != nil {
		syncs.run() // what was placed is put back below, synced
		before, verr := e.stateVersions(ctx, p.Before)
		if verr == nil {
			verr = e.restoreWorktree(ctx, s, st, before)
		}
		if verr != nil {
			// The intent stays open: the next start finishes the rollback.
			e.Log.Error("restore worktree after failed rollback", "session", s.ID, "err", verr)
			return nil, fmt.Errorf("rollback: %w (putting the worktree back failed too: %v; the next start finishes the rollback)", err, verr)
		}
		if derr := store.DoneIntent(ctx, e.DB.Q(), intent); derr != nil {
			return nil, derr
		}
		return nil, fmt.Errorf("rollback: %w (the worktree was put back)", err)
	}
	// Then the workspace, newest record first, the statuses and the
	// rollback's records. A failure here leaves the intent open.
	if err := e.rollbackWorkspace(ctx, s, st, p, syncs); err != nil {
		if serr := syncs.run(); serr != nil {
			e.Log.Error("rollback: sync files to the disk", "session", s.ID, "err", serr)
		}
		return nil, err
	}
	// Every file is in place and every record stored. The syncs to the
	// disk (about half of a 100-file rollback on a slow disk) do not hold
	// up the answer, as a tool call's do not: until they end, the session
	// stays locked and the intent open, so a crash meanwhile finishes the
	// rollback again at the next start (exact worktree targets, and merges
	// that find their change already out), and nothing of the session
	// moves under it. A failed sync is logged: the content is in place.
	e.afterAnswer(s.ID, lock, func() {
		if err := syncs.run(); err != nil {
			e.Log.Error("rollback: sync files to the disk", "session", s.ID, "err", err)
		}
		if err := store.DoneIntent(ctx, e.DB.Q(), intent); err != nil {
			e.Log.Error("rollback: mark done", "session", s.ID, "err", err)
		}
		e.publishSession(ctx, s.ID)
	})
	return rb.plan, nil
}

// applyRollback finishes a rollback a crash cut off: every step again,
// skipping what is done.
func (e *Engine) applyRollback(ctx context.Context, s *prsm.Session, st *sessionState, p *rollbackPayload) error {
	syncs := &diskSyncs{}
	err := e.rollbackWorktree(ctx, s, st, p, syncs)
	if err == nil {
		err = e.rollbackWorkspace(ctx, s, st, p, syncs)
	}
	return errors.Join(err, syncs.run())
}

// rollbackWorktree makes every path of the plan hold its target exactly
// (a path that already does is left alone) and tells the tracker. The
// files are independent, so they are written at once; their syncs to the
// disk go to syncs, for the caller to run together with the workspace's.
func (e *Engine) rollbackWorktree(ctx context.Context, s *prsm.Session, st *sessionState, p *rollbackPayload, syncs *diskSyncs) error {
	rels := make([]string, 0, len(p.Worktree))
	for rel := range p.Worktree {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	vs := make([]sync.Version, len(rels))
	write := make([]bool, len(rels))
	for i, rel := range rels {
		v, err := e.stateVersion(ctx, p.Worktree[rel])
		if err != nil {
			return err
		}
		cur, err := sync.ReadVersion(s.WorktreePath, rel)
		vs[i] = v
		write[i] = err != nil || !sync.Same(cur, v) || (v.Present && cur.Mode != v.Mode)
	}
	errs := inPathOrder(len(rels), func(i int) string { return rels[i] }, func(i int) bool { return !vs[i].Present }, func(i int) error {
		if !write[i] {
			return nil
		}
		w, err := sync.WriteUnsynced(s.WorktreePath, rels[i], vs[i])
		if w != nil {
			syncs.add(w.Settle)
		}
		return err
	})
	// What was written is prsm's own: the tracker learns it even when
	// another file failed, so it is never taken for the agent's work.
	for i, rel := range rels {
		if errs[i] == nil {
			st.tracker.Learn(rel, vs[i])
		}
	}
	if err := e.DB.Tx(ctx, func(q store.Querier) error {
		for i, rel := range rels {
			if errs[i] != nil {
				continue
			}
			if err := store.PutFileState(ctx, q, s.ID, rel, p.Worktree[rel]); err != nil {
				return err
			}
			crashPoint("rollback:worktree")
		}
		return nil
	}); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// rollbackWorkspace takes the deltas of the plan's records out of the
// workspace, newest first (a record already rejected was done before a
// crash), marks them rejected, and stores the rollback's own records once.
func (e *Engine) rollbackWorkspace(ctx context.Context, s *prsm.Session, st *sessionState, p *rollbackPayload, syncs *diskSyncs) error {
	p.session = s.ID
	var undone []*prsm.Record
	for _, id := range p.Undo {
		r, err := store.GetRecord(ctx, e.DB.Q(), s.ID, id)
		if errors.Is(err, prsm.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		undone = append(undone, r)
	}
	byPath := map[string][]*prsm.Record{}
	for _, r := range undone {
		byPath[r.RelPath] = append(byPath[r.RelPath], r)
	}
	conflicted := map[string]bool{}
	if p.Net {
		var err error
		if conflicted, err = e.rewindWorkspace(ctx, s, p, undone, syncs); err != nil {
			return err
		}
	} else if err := e.undoByRecord(ctx, s, undone, conflicted); err != nil {
		return err
	}
	if _, err := store.GetToolCall(ctx, e.DB.Q(), s.ID, rollbackToolCall(p.Safety)); err == nil {
		return nil // stored before a crash
	} else if !errors.Is(err, prsm.ErrNotFound) {
		return err
	}
	before, err := e.stateVersions(ctx, p.Before)
	if err != nil {
		return err
	}
	return e.recordRollback(ctx, s, st, p, byPath, before, conflicted)
}

// rewindWorkspace is a rewind's workspace side: for each path, the net
// change since the checkpoint (what prsm knew the worktree held -> the
// checkpoint's file) is taken out of the workspace file in one 3-way merge,
// keeping the user's edits; then the path's undone records are marked
// rejected. That covers paths that changed since the checkpoint through
// rejects only (a record before the checkpoint rejected after it): the
// workspace goes back to the checkpoint there too (SPEC rule 5). A path
// whose records net to nothing is left alone. In review mode some paths
// go record by record instead, and the others' target leaves out the
// changes the workspace never had (reviewTargets). Running it again after
// a crash is harmless: the merge finds the change already out. It returns
// the paths in conflict.
func (e *Engine) rewindWorkspace(ctx context.Context, s *prsm.Session, p *rollbackPayload, undone []*prsm.Record, syncs *diskSyncs) (map[string]bool, error) {
	byPath := map[string][]*prsm.Record{}
	var paths []string
	for _, r := range undone {
		if byPath[r.RelPath] == nil {
			paths = append(paths, r.RelPath)
		}
		byPath[r.RelPath] = append(byPath[r.RelPath], r)
	}
	for path := range p.Worktree {
		if byPath[path] == nil {
			paths = append(paths, path)
		}
	}
	sort.Strings(paths)
	byRecord := map[string]bool{}
	for _, path := range p.ByRecord {
		byRecord[path] = true
	}
	conflicted := map[string]bool{}
	// Each path's net change: from what prsm knew to the checkpoint's file.
	type netChange struct {
		path         string
		recs         []*prsm.Record
		sync         bool
		from, target sync.Version
		state        string
	}
	// The paths taken out record by record go together, so that a file
	// and a directory of one name are undone in an order that works.
	var one []*prsm.Record
	for _, r := range undone {
		if byRecord[r.RelPath] {
			one = append(one, r)
		}
	}
	if err := e.undoByRecord(ctx, s, one, conflicted); err != nil {
		return nil, err
	}
	var net []*netChange
	for _, path := range paths {
		recs := byPath[path]
		if byRecord[path] {
			continue
		}
		open := len(recs) == 0
		for _, r := range recs {
			if r.Status != prsm.StatusRejected {
				open = true
			} else if r.SyncState == prsm.SyncConflict {
				conflicted[path] = true // done before a crash
			}
		}
		if !open {
			continue
		}
		nc := &netChange{path: path, recs: recs, state: prsm.SyncSynced}
		if to, ok := p.Worktree[path]; ok && !conflicted[path] {
			from, err := e.stateVersion(ctx, p.Before[path])
			if err != nil {
				return nil, err
			}
			if nc.target, err = e.stateVersion(ctx, to); err != nil {
				return nil, err
			}
			if nc.target, err = e.workspaceTarget(ctx, p, path, nc.target); err != nil {
				return nil, err
			}
			side, ok, err := e.rollbackSide(ctx, p, path, recs, from)
			if err != nil {
				return nil, err
			}
			if !ok || slices.Contains(p.WorkspaceConflict, path) {
				// What the workspace never had cannot be told apart:
				// its file is left as it is.
				nc.state = prsm.SyncConflict
			} else {
				nc.from, nc.sync = side, !sameVersion(side, nc.target)
			}
		}
		net = append(net, nc)
	}
	// The workspace files are independent: merged and placed at once, and
	// their syncs to the disk go to syncs.
	inPathOrder(len(net), func(i int) string { return net[i].path }, func(i int) bool { return !net[i].target.Present }, func(i int) error {
		nc := net[i]
		if !nc.sync {
			return nil
		}
		var err error
		if nc.state, err = e.placeInWorkspace(s, nc.path, nc.from, nc.target, syncs); err != nil {
			e.Log.Error("rewind: workspace", "session", s.ID, "file", nc.path, "err", err)
		}
		return nil
	})
	var changes []stateChange
	for _, nc := range net {
		if nc.state == prsm.SyncConflict || conflicted[nc.path] {
			conflicted[nc.path], nc.state = true, prsm.SyncConflict
		}
		for _, r := range nc.recs {
			if r.Status != prsm.StatusRejected {
				changes = append(changes, stateChange{r: r, status: prsm.StatusRejected, syncSt: rejectedState(r, nc.state)})
			}
		}
	}
	if err := e.setStates(ctx, changes, "rollback:workspace"); err != nil {
		return nil, err
	}
	return conflicted, nil
}

// undoByRecord takes the deltas of recs (newest first; those rejected were
// done before a crash) out of the workspace one by one, the ones that
// reached it only, and marks them rejected. After a conflict the rest of
// the file's records are marked conflict and the file is left as it is.
func (e *Engine) undoByRecord(ctx context.Context, s *prsm.Session, recs []*prsm.Record, conflicted map[string]bool) error {
	// Undoing a create removes its path.
	recs = removalsFirst(recs, func(r *prsm.Record) bool { return r.ChangeType == prsm.ChangeCreate })
	for _, r := range recs {
		if r.Status == prsm.StatusRejected {
			if r.SyncState == prsm.SyncConflict {
				conflicted[r.RelPath] = true
			}
			continue
		}
		state := rejectedState(r, prsm.SyncSynced)
		if r.SyncState == prsm.SyncSynced && !conflicted[r.RelPath] {
			b, a, err := e.versions(ctx, r)
			if err != nil {
				return err
			}
			if state, err = e.syncToWorkspace(ctx, s, r.RelPath, a, b); err != nil {
				e.Log.Error("rollback: workspace", "session", s.ID, "record", r.ID, "err", err)
			}
			if state == prsm.SyncConflict {
				conflicted[r.RelPath] = true
			}
		} else if conflicted[r.RelPath] {
			state = prsm.SyncConflict
		}
		if err := e.setState(ctx, r, prsm.StatusRejected, state); err != nil {
			return err
		}
		crashPoint("rollback:workspace")
	}
	return nil
}

// restoreWorktree puts paths back as they were before a failed rollback.
func (e *Engine) restoreWorktree(ctx context.Context, s *prsm.Session, st *sessionState, before map[string]sync.Version) error {
	var errs []string
	rels := pathOrdered(sortedVersions(before), func(rel string) string { return rel }, func(rel string) bool { return !before[rel].Present })
	for _, rel := range rels {
		v := before[rel]
		if err := sync.Write(s.WorktreePath, rel, v); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		st.tracker.Learn(rel, v)
		if err := store.PutFileState(ctx, e.DB.Q(), s.ID, rel, tracker.StateOf(v)); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// recordRollback stores the rollback's own net change of each path as an
// accepted record (tool Rollback), already synced: a later rollback to the
// safety checkpoint undoes it like any other change, workspace included.
// In auto mode, the part of a path's change the workspace did not follow
// (taking out deltas it never had: rollbackSide) is a record of its own
// before that one, unsynced (sync_state pending_review): undoing it never
// reaches the workspace; where it brings back what the workspace lacks,
// it is pending. In review mode the workspace followed the user's accepts
// only, and its records say which part it followed and which part is
// offered for review (reviewRollbackParts).
func (e *Engine) recordRollback(ctx context.Context, s *prsm.Session, st *sessionState, p *rollbackPayload, undone map[string][]*prsm.Record, before map[string]sync.Version, conflicted map[string]bool) error {
	tc := &prsm.ToolCall{SessionID: s.ID, ID: rollbackToolCall(p.Safety), ToolName: "Rollback", AgentID: "prsm", StartedAt: time.Now().UTC()}
	var parts []rollbackPart
	for _, rel := range sortedVersions(before) {
		now, err := st.tracker.KnownVersion(rel, e.blobs(ctx))
		if err != nil {
			return err
		}
		from := before[rel]
		if s.Mode == prsm.ModeReview {
			// The workspace may have moved where the worktree did not.
			rps, err := e.reviewRollbackParts(ctx, p, rel, undone[rel], from, now, conflicted[rel])
			if err != nil {
				return err
			}
			parts = append(parts, rps...)
			continue
		}
		if sameVersion(from, now) {
			continue
		}
		state := prsm.SyncSynced
		if conflicted[rel] {
			state = prsm.SyncConflict
		}
		side, ok, err := e.rollbackSide(ctx, p, rel, undone[rel], from)
		if err != nil {
			return err
		}
		if ok && !sameVersion(from, side) {
			status := prsm.StatusAccepted
			for _, r := range undone[rel] {
				if p.Unsynced[r.ID] == prsm.StatusAccepted {
					status = prsm.StatusPending // takes out a part no workspace had: brings it back
				}
			}
			parts = append(parts, rollbackPart{tracker.Change{Rel: rel, Before: from, After: side}, status, prsm.SyncPendingReview})
			from = side
		}
		if !sameVersion(from, now) {
			parts = append(parts, rollbackPart{tracker.Change{Rel: rel, Before: from, After: now}, prsm.StatusAccepted, state})
		}
	}
	now := time.Now().UTC()
	return e.DB.Tx(ctx, func(q store.Querier) error {
		if err := insertToolCall(ctx, q, st, tc); err != nil {
			return err
		}
		for i, pt := range parts {
			r, err := e.newRecord(ctx, q, s, st, tc, pt.ch, nil, nil, fmt.Sprintf("%s:%d", tc.ID, i), now)
			if err != nil {
				return err
			}
			r.Status, r.SyncState = pt.status, pt.state
			if err := store.InsertRecord(ctx, q, r); err != nil {
				return err
			}
		}
		return store.CompleteToolCall(ctx, q, s.ID, tc.ID, nil, now)
	})
}
