package engine

import (
	"context"
	"encoding/json"
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
)

// runSelector executes a selector rewind's plan: safety checkpoint, then
// (carryOut) worktree, workspace and statuses. A failure while writing the worktree puts it back as it was.
// The files' syncs to the disk run after the answer, holding the
// session's lock (taken over from lock), and the intent is done once they
// are: a crash before that finishes the rewind again at the next start.
func (rn *rewinder) runSelector(ctx context.Context, s *prsm.Session, st *sessionState, lock *heldLock, rb *selectorRewind, what string) (*api.Plan, error) {
	if err := rn.refuseInFlight(ctx, s); err != nil {
		return nil, err
	}
	// The writes are decided first: a rewind refused (a later change
	// overlaps) leaves nothing behind, not even its safety checkpoint.
	p, err := rn.planWrites(ctx, s, st, rb)
	if err != nil {
		return nil, fmt.Errorf("rollback: %w", err) // nothing written yet
	}
	safety, err := rn.ckpt.checkpoint(ctx, s, st, prsm.CheckpointAuto, "before "+what, "", 0, "")
	if err != nil {
		return nil, fmt.Errorf("safety checkpoint: %w", err)
	}
	rb.plan.SafetyCheckpointID = safety.ID
	p.Safety = safety.ID
	rest := func(ctx context.Context, syncs *workspace.DiskSyncs) error {
		return rn.selectorWorkspace(ctx, s, st, p, syncs)
	}
	if err := rn.carryOut(ctx, s, st, lock, intentSelector, p, p.Worktree, p.Before, rest, "rollback"); err != nil {
		return nil, err
	}
	return rb.plan, nil
}

// refuseInFlight refuses a rewind while a tool call of the session runs.
func (rn *rewinder) refuseInFlight(ctx context.Context, s *prsm.Session) error {
	if tc, err := rn.capture.inFlight(ctx, s.ID); err != nil {
		return err
	} else if tc != "" {
		return prsm.Errorf(prsm.ErrConflict, "tool_call_in_flight", "wait for the agent's tool call to finish, then try again",
			"tool call %s of session %s is still running", tc, s.ID)
	}
	return nil
}

// carryOut runs a rewind (a rewind or a selector's) once its safety
// checkpoint is taken: its intent (kind, payload) is written down, then
// the worktree takes its exact targets (put back as before on a failure),
// then rest does the workspace and the records. A failure there leaves the
// intent open. The files' syncs to the disk (a large share of a rewind's
// time on a slow disk: docs/performance.md) do not hold up the answer, as a tool call's do
// not: until they end, the session stays locked (the lock is taken over)
// and the intent open, so a crash meanwhile finishes the rewind again at
// the next start (exact targets, and merges that find their change already
// made), and nothing of the session moves under it. A failed sync is
// logged: the content is in place.
func (rn *rewinder) carryOut(ctx context.Context, s *prsm.Session, st *sessionState, lock *heldLock, kind string, payload any,
	worktree, before map[string]store.FileState, rest func(context.Context, *workspace.DiskSyncs) error, word string) error {
	b, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	intent, err := store.AddIntent(ctx, rn.DB.Q(), s.ID, kind, b)
	if err != nil {
		return err
	}
	// Written down: it runs to its end even if the caller goes away.
	ctx = context.WithoutCancel(ctx)
	// The worktree first: it is prsm's own, and can always be put back.
	syncs := &workspace.DiskSyncs{}
	if err := rn.selectorWorktree(ctx, s, st, &selectorPayload{Worktree: worktree}, syncs); err != nil {
		syncs.Run() // what was placed is put back below, synced
		was, verr := rn.stateVersions(ctx, before)
		if verr == nil {
			verr = rn.restoreWorktree(ctx, s, st, was)
		}
		if verr != nil {
			// The intent stays open: the next start finishes it.
			rn.Log.Error("restore worktree after failed "+word, "session", s.ID, "err", verr)
			return fmt.Errorf("%s: %w (putting the worktree back failed too: %v; the next start finishes the %s)", word, err, verr, word)
		}
		if derr := store.DoneIntent(ctx, rn.DB.Q(), intent); derr != nil {
			return derr
		}
		return fmt.Errorf("%s: %w (the worktree was put back)", word, err)
	}
	if err := rest(ctx, syncs); err != nil {
		if serr := syncs.Run(); serr != nil {
			rn.Log.Error(word+": sync files to the disk", "session", s.ID, "err", serr)
		}
		return err
	}
	rn.sessions.afterAnswer(s.ID, lock, func() {
		if err := syncs.Run(); err != nil {
			rn.Log.Error(word+": sync files to the disk", "session", s.ID, "err", err)
		}
		if err := store.DoneIntent(ctx, rn.DB.Q(), intent); err != nil {
			rn.Log.Error(word+": mark done", "session", s.ID, "err", err)
		}
		rn.publishSession(ctx, s.ID)
	})
	return nil
}

// applySelector finishes a rewind a crash cut off: every step again,
// skipping what is done.
func (rn *rewinder) applySelector(ctx context.Context, s *prsm.Session, st *sessionState, p *selectorPayload) error {
	syncs := &workspace.DiskSyncs{}
	err := rn.selectorWorktree(ctx, s, st, p, syncs)
	if err == nil {
		err = rn.selectorWorkspace(ctx, s, st, p, syncs)
	}
	return errors.Join(err, syncs.Run())
}

// selectorWorktree makes every path of the plan hold its target exactly
// (a path that already does is left alone) and tells the tracker. The
// files are independent, so they are written at once; their syncs to the
// disk go to syncs, for the caller to run together with the workspace's.
func (rn *rewinder) selectorWorktree(ctx context.Context, s *prsm.Session, st *sessionState, p *selectorPayload, syncs *workspace.DiskSyncs) error {
	rels := make([]string, 0, len(p.Worktree))
	for rel := range p.Worktree {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	vs := make([]sync.Version, len(rels))
	write := make([]bool, len(rels))
	for i, rel := range rels {
		v, err := rn.stateVersion(ctx, p.Worktree[rel])
		if err != nil {
			return err
		}
		cur, _, err := fileAt(s.WorktreePath, rel)
		vs[i] = v
		write[i] = err != nil || !sync.Same(cur, v) || (v.Present && cur.Mode != v.Mode)
	}
	errs := workspace.InPathOrder(len(rels), func(i int) string { return rels[i] }, func(i int) bool { return !vs[i].Present }, func(i int) error {
		if !write[i] {
			return nil
		}
		w, err := sync.WriteUnsynced(s.WorktreePath, rels[i], vs[i])
		if w != nil {
			syncs.Add(w.Settle)
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
	if err := rn.DB.Tx(ctx, func(q store.Querier) error {
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

// selectorWorkspace takes the deltas of the plan's records out of the
// workspace, newest first (a record already rejected was done before a
// crash), and marks them rejected. A rewind makes no record of its own:
// its safety checkpoint keeps the review state, and a rewind to it gives
// that back.
func (rn *rewinder) selectorWorkspace(ctx context.Context, s *prsm.Session, st *sessionState, p *selectorPayload, syncs *workspace.DiskSyncs) error {
	p.session = s.ID
	var undone []*prsm.Record
	for _, id := range p.Undo {
		r, err := store.GetRecord(ctx, rn.DB.Q(), s.ID, id)
		if errors.Is(err, prsm.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		undone = append(undone, r)
	}
	return rn.undoByRecord(ctx, s, undone, map[string]bool{})
}

// undoByRecord takes the deltas of recs (newest first; those rejected were
// done before a crash) out of the workspace one by one, the ones that
// reached it only, and marks them rejected. After a conflict the rest of
// the file's records are marked conflict and the file is left as it is.
func (rn *rewinder) undoByRecord(ctx context.Context, s *prsm.Session, recs []*prsm.Record, conflicted map[string]bool) error {
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
			b, a, err := rn.rec.versions(ctx, r)
			if err != nil {
				return err
			}
			if state, err = rn.ws.Sync(s.ID, r.RelPath, a, b); err != nil {
				rn.Log.Error("rollback: workspace", "session", s.ID, "record", r.ID, "err", err)
			}
			if state == prsm.SyncConflict {
				conflicted[r.RelPath] = true
			}
		} else if conflicted[r.RelPath] {
			state = prsm.SyncConflict
		}
		if err := rn.rec.setState(ctx, r, prsm.StatusRejected, state); err != nil {
			return err
		}
		crashPoint("rollback:workspace")
	}
	return nil
}

// restoreWorktree puts paths back as they were before a failed rewind.
func (rn *rewinder) restoreWorktree(ctx context.Context, s *prsm.Session, st *sessionState, before map[string]sync.Version) error {
	var errs []string
	rels := workspace.PathOrdered(sortedKeys(before), func(rel string) string { return rel }, func(rel string) bool { return !before[rel].Present })
	for _, rel := range rels {
		v := before[rel]
		if err := sync.Write(s.WorktreePath, rel, v); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		st.tracker.Learn(rel, v)
		if err := store.PutFileState(ctx, rn.DB.Q(), s.ID, rel, tracker.StateOf(v)); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}
