package engine

import (
	"context"
	"slices"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/tracker"
)

// reviewView is the workspace file rel with the session's pending records
// of it applied, oldest first: what accepting them all would leave. The
// workspace file alone where one does not apply cleanly.
func (e *Engine) reviewView(ctx context.Context, sessionID, rel string) (sync.Version, error) {
	ws, err := sync.ReadVersion(e.Repo.Root, rel)
	if err != nil {
		return ws, err
	}
	pend, err := store.ListRecords(ctx, e.DB.Q(), store.RecordFilter{SessionID: sessionID, RelPath: rel, Status: prsm.StatusPending})
	if err != nil {
		return ws, err
	}
	v := ws
	for _, r := range pend {
		b, a, err := e.versions(ctx, r)
		if err != nil {
			return ws, err
		}
		var ok bool
		if v, ok = sync.Merge(b, v, a); !ok {
			return ws, nil
		}
	}
	return v, nil
}

// rollbackPart is one of the records a rollback stores of a path.
type rollbackPart struct {
	ch            tracker.Change
	status, state string
}

// reviewRollbackParts are a review-mode rollback's records of path rel,
// whose worktree went from -> now, while the workspace followed part of
// that: it lost the undone records' deltas that had reached it (record by
// record) or took a rewind's net change. In the worktree's terms, the
// workspace's side of from (side: without the deltas it never had) went
// to end (reviewWorkspaceEnd).
//
// The records are three parts. from -> side takes out the changes the
// workspace never had: never applied, and pending where that brings back
// changes for review (as in auto mode). side -> end is the part the
// workspace followed, accepted and synced, so that a later rollback to the
// safety checkpoint takes exactly that out of the workspace again. end ->
// now never reached the workspace: pending where applying it would change
// the workspace (offered for review again), accepted otherwise. Where side
// cannot be worked out, or the workspace's move (record by record) cannot
// be taken from it, its move is the synced records' deltas taken out of
// from (mid): from -> mid (synced), mid -> now. A workspace file left as it is (conflict) followed
// nothing: one record, pending unless the workspace has it, in conflict.
func (e *Engine) reviewRollbackParts(ctx context.Context, p *rollbackPayload, rel string, undone []*prsm.Record, from, now sync.Version, conflict bool) ([]rollbackPart, error) {
	// What the user would have on accepting everything offered: the
	// workspace file with the path's pending records applied, and then
	// each offer of this rollback. An offer that changes nothing there
	// needs no review.
	var view *sync.Version
	offer := func(a, b sync.Version, state string) rollbackPart {
		if view == nil {
			v, err := e.reviewView(ctx, p.session, rel)
			if err != nil {
				e.Log.Warn("rollback: read what the workspace would have", "file", rel, "err", err)
			}
			view = &v
		}
		status := prsm.StatusAccepted
		if v, ok := sync.Merge(a, *view, b); !ok || !sameVersion(v, *view) {
			status = prsm.StatusPending
			if ok {
				*view = v
			}
		}
		return rollbackPart{tracker.Change{Rel: rel, Before: a, After: b}, status, state}
	}
	conflicted := func() ([]rollbackPart, error) {
		if sameVersion(from, now) {
			return nil, nil
		}
		return []rollbackPart{offer(from, now, prsm.SyncConflict)}, nil
	}
	if conflict || slices.Contains(p.WorkspaceConflict, rel) {
		return conflicted()
	}
	// Taking out pending changes needs no review; taking out a rollback's
	// record of them (accepted, never applied) brings them back, for
	// review again.
	var pending, brings []*prsm.Record
	for _, r := range undone {
		switch p.Unsynced[r.ID] {
		case "":
		case prsm.StatusAccepted:
			brings = append(brings, r)
		default:
			pending = append(pending, r)
		}
	}
	side, ok, err := e.rollbackSide(ctx, p, rel, undone, from)
	if err != nil {
		return nil, err
	}
	var end sync.Version
	if ok {
		if end, ok, err = e.reviewWorkspaceEnd(ctx, p, rel, undone, side, now); err != nil {
			return nil, err
		}
	}
	if !ok {
		if p.Net && !slices.Contains(p.ByRecord, rel) {
			return conflicted()
		}
		// The pending records' deltas come out first where they can (no
		// review needed), so that neither part holds a line nobody
		// accepted that the workspace does not have.
		var parts []rollbackPart
		start := from
		if len(pending) > 0 {
			v, ok, err := e.workspaceSide(ctx, from, pending)
			if err != nil {
				return nil, err
			}
			if ok && !sameVersion(v, from) {
				parts = append(parts, rollbackPart{tracker.Change{Rel: rel, Before: from, After: v}, prsm.StatusAccepted, prsm.SyncPendingReview})
				start = v
			}
		}
		mid, ok, err := e.takeOut(ctx, start, undone, p, false)
		if err != nil || !ok {
			if err == nil {
				return conflicted()
			}
			return nil, err
		}
		if !sameVersion(start, mid) {
			parts = append(parts, rollbackPart{tracker.Change{Rel: rel, Before: start, After: mid}, prsm.StatusAccepted, prsm.SyncSynced})
		}
		if !sameVersion(mid, now) {
			parts = append(parts, offer(mid, now, prsm.SyncPendingReview))
		}
		return parts, nil
	}
	var parts []rollbackPart
	// Where the rollback both takes out pending changes and brings back
	// others, two records and the parts come apart: rejecting the offer
	// then takes out what it brings back only. They come apart even where
	// they cancel (from is side): the changes the pending records held
	// are offered again, not lost with them.
	mid, split := from, len(pending) > 0 && len(brings) > 0
	if split {
		if mid, split, err = e.workspaceSide(ctx, from, pending); err == nil && split {
			var whole sync.Version
			whole, split, err = e.rollbackSide(ctx, p, rel, brings, mid)
			split = split && sameVersion(whole, side)
		}
		if err != nil {
			return nil, err
		}
		if !split {
			mid = from // they do not come apart: nothing was taken out first
		}
	}
	if split && !sameVersion(from, mid) {
		parts = append(parts, rollbackPart{tracker.Change{Rel: rel, Before: from, After: mid}, prsm.StatusAccepted, prsm.SyncPendingReview})
	}
	if (split || len(brings) > 0) && !sameVersion(mid, side) && !sameVersion(side, end) {
		// What is brought back never reached the workspace: the part the
		// workspace followed goes first, from where it stood (mid), so
		// that its record holds none of the brought-back lines (a later
		// rollback taking it out of the workspace must not add them), and
		// one offer brings the rest.
		if moved, ok := sync.Merge(side, mid, end); ok {
			if !sameVersion(mid, moved) {
				parts = append(parts, rollbackPart{tracker.Change{Rel: rel, Before: mid, After: moved}, prsm.StatusAccepted, prsm.SyncSynced})
			}
			if !sameVersion(moved, now) {
				parts = append(parts, offer(moved, now, prsm.SyncPendingReview))
			}
			return parts, nil
		}
	}
	switch {
	case split:
		if !sameVersion(mid, side) {
			parts = append(parts, offer(mid, side, prsm.SyncPendingReview))
		}
	case sameVersion(from, side):
	case len(brings) > 0:
		parts = append(parts, offer(from, side, prsm.SyncPendingReview))
	default:
		parts = append(parts, rollbackPart{tracker.Change{Rel: rel, Before: from, After: side}, prsm.StatusAccepted, prsm.SyncPendingReview})
	}
	if !sameVersion(side, end) {
		parts = append(parts, rollbackPart{tracker.Change{Rel: rel, Before: side, After: end}, prsm.StatusAccepted, prsm.SyncSynced})
	}
	if !sameVersion(end, now) {
		parts = append(parts, offer(end, now, prsm.SyncPendingReview))
	}
	return parts, nil
}

// takeOut takes the deltas of recs (newest first) out of v: those that
// reached the workspace (synced false: the others, Unsynced in p).
func (e *Engine) takeOut(ctx context.Context, v sync.Version, recs []*prsm.Record, p *rollbackPayload, unsynced bool) (sync.Version, bool, error) {
	for _, r := range recs {
		if _, ok := p.Unsynced[r.ID]; ok != unsynced {
			continue
		}
		b, a, err := e.versions(ctx, r)
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

// reviewWorkspaceEnd is where the workspace file rel went in a
// review-mode rollback, in the worktree's terms: taken record by record,
// side without the deltas of the undone records that had reached it
// (newest first); in a rewind's net change, its target (workspaceTarget).
// false where the deltas cannot be taken out of side (side holds a file
// that a change the workspace never had created, and an undone record
// created the file the workspace has): the workspace's move has no
// place in the worktree's terms.
func (e *Engine) reviewWorkspaceEnd(ctx context.Context, p *rollbackPayload, rel string, undone []*prsm.Record, side, now sync.Version) (sync.Version, bool, error) {
	if p.Net && !slices.Contains(p.ByRecord, rel) {
		v, err := e.workspaceTarget(ctx, p, rel, now)
		return v, err == nil, err
	}
	return e.takeOut(ctx, side, undone, p, false)
}
