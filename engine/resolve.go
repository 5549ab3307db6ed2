package engine

import (
	"context"
	stdsync "sync"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
)

// Conflicts are resolved, never merely accepted (SPEC rule 5). A change
// in conflict (sync_state conflict: the user's edits and the agent's
// overlap, and the workspace file was left as the user had it) is settled
// one of three ways:
//
//   - mine: the change is rejected; the workspace stays as it is (the
//     worktree loses the change, as any reject);
//   - agent: the workspace file becomes the agent's version (auto mode:
//     the worktree's file; review mode: the change's after side) and the
//     change is accepted;
//   - markers: the workspace file gets both sides between git's conflict
//     markers; once the user has removed every marker (the scanner looks
//     every ScanInterval), the change is accepted.

// Ways to resolve a conflict.
const (
	ResolveMine    = "mine"
	ResolveAgent   = "agent"
	ResolveMarkers = "markers"
)

// markersNote is the note of a change whose conflict waits in the
// workspace file between markers.
const markersNote = "merge in your editor: both versions are in the workspace file between conflict markers; prsm accepts the change once the markers are gone"

// markerWatch is a conflict left to the editor: the records, and the file.
type markerWatch struct {
	sessionID, rel string
	ids            []string
}

// markers holds the conflicts left to the editor, by session and file.
type markers struct {
	mu    stdsync.Mutex
	watch map[string]markerWatch
	once  stdsync.Once
}

// Resolve is Engine.Resolve's work.
func (rv *reviewer) Resolve(ctx context.Context, sessionID, id, how string) (*api.Records, error) {
	switch how {
	case ResolveMine, ResolveAgent, ResolveMarkers:
	default:
		return nil, prsm.Errorf(prsm.ErrInvalid, "invalid_how", "use mine, agent or markers", "unknown way to resolve %q", how)
	}
	s, st, unlock, err := rv.sessions.lockSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	all, err := rv.rec.recordsOf(ctx, s, id)
	if err != nil {
		return nil, err
	}
	var recs []*prsm.Record
	for _, r := range all {
		if r.SyncState == prsm.SyncConflict && r.Status != prsm.StatusRejected && r.Status != prsm.StatusRewound {
			recs = append(recs, r)
		}
	}
	if len(recs) == 0 {
		return nil, prsm.Errorf(prsm.ErrConflict, "not_in_conflict", "accept or reject it instead",
			"change %s is not in conflict", id)
	}
	for _, r := range recs {
		if r.Note != markersNote {
			continue
		}
		// Its markers are in the file: a second set would nest in them,
		// and keeping yours means taking the markers out by hand (prsm
		// does not keep your file as it was before them).
		switch how {
		case ResolveMarkers:
			return nil, prsm.Errorf(prsm.ErrConflict, "markers_in_file", "remove the markers in your editor, or take the agent's",
				"change %s is being merged in your editor: its conflict markers are in %s", r.ID, r.RelPath)
		case ResolveMine:
			return nil, prsm.Errorf(prsm.ErrConflict, "markers_in_file", "keep your side between the markers in your editor; prsm accepts the change when they are gone",
				"change %s is being merged in your editor: its conflict markers are in %s", r.ID, r.RelPath)
		}
	}
	if how == ResolveMine {
		out, err := rv.reject(ctx, s, st, recs)
		if err != nil {
			return nil, err
		}
		rv.forgetMarkers(s.ID, recs)
		return rv.rec.answer(ctx, out)
	}
	byPath := map[string][]*prsm.Record{}
	var paths []string
	for _, r := range recs {
		if byPath[r.RelPath] == nil {
			paths = append(paths, r.RelPath)
		}
		byPath[r.RelPath] = append(byPath[r.RelPath], r)
	}
	var out []*prsm.Record
	for _, rel := range paths {
		rs := byPath[rel]
		sortRecords(rs, false)
		oldest, newest := rs[0], rs[len(rs)-1]
		base, _, err := rv.rec.versions(ctx, oldest)
		if err != nil {
			return nil, err
		}
		_, agent, err := rv.rec.versions(ctx, newest)
		if err != nil {
			return nil, err
		}
		if how == ResolveAgent && s.Mode == prsm.ModeAuto && s.Status == prsm.SessionActive {
			// Auto mode: the workspace follows the worktree, whose file
			// holds every change of the agent to it.
			if agent, err = sync.ReadVersion(s.WorktreePath, rel); err != nil {
				return nil, err
			}
		}
		unlockFile := rv.ws.Lock(rel)
		mine, err := sync.ReadVersion(rv.Repo.Root, rel)
		if err == nil {
			target := agent
			if how == ResolveMarkers {
				target, err = markersVersion(base, mine, agent, newest.ID)
			}
			if err == nil {
				// From the workspace as read to the target: the target,
				// unless the user saved again in between (then a merge,
				// or left as it is).
				var outcome sync.Outcome
				outcome, err = rv.ws.ApplyLocked(rel, mine, target)
				if err == nil && outcome == sync.Conflict {
					err = prsm.Errorf(prsm.ErrConflict, "file_changed", "try again", "%s changed while prsm wrote it; nothing was resolved", rel)
				}
			}
		}
		unlockFile()
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			if how == ResolveAgent {
				if err := rv.rec.setState(ctx, r, prsm.StatusAccepted, prsm.SyncSynced); err != nil {
					return nil, err
				}
			} else {
				if err := store.UpdateRecordNote(ctx, rv.DB.Q(), s.ID, r.ID, markersNote); err != nil {
					return nil, err
				}
				r.Note = markersNote
				rv.publishStatus(r) // its status is as it was; its note says where it stands
			}
			out = append(out, r)
		}
		if how == ResolveMarkers {
			rv.watchMarkers(s.ID, rel, rs)
		} else {
			rv.forgetMarkers(s.ID, rs)
		}
	}
	rv.publishSession(ctx, s.ID)
	return rv.rec.answer(ctx, out)
}

// markersVersion is mine and agent merged from base, with conflict
// markers where they disagree. Binary content and links cannot hold
// markers.
func markersVersion(base, mine, agent sync.Version, id string) (sync.Version, error) {
	for _, v := range []sync.Version{base, mine, agent} {
		if v.Present && (v.IsLink() || !sync.IsText(v.Content)) {
			return sync.Version{}, prsm.Errorf(prsm.ErrConflict, "not_text", "keep yours or take the agent's",
				"conflict markers need text on both sides")
		}
		if _, big := v.Big(); big {
			return sync.Version{}, prsm.Errorf(prsm.ErrConflict, "not_text", "keep yours or take the agent's",
				"conflict markers need the whole file, which prsm does not keep for a file this large")
		}
	}
	mode := mine.Mode
	if !mine.Present {
		mode = agent.Mode
	}
	return sync.Version{Present: true, Mode: mode,
		Content: sync.Merge3Markers(base.Content, mine.Content, agent.Content, "yours", "agent ("+id+")")}, nil
}

func markerKey(sessionID, rel string) string { return sessionID + "\x00" + rel }

func (rv *reviewer) watchMarkers(sessionID, rel string, recs []*prsm.Record) {
	rv.markers.mu.Lock()
	defer rv.markers.mu.Unlock()
	if rv.markers.watch == nil {
		rv.markers.watch = map[string]markerWatch{}
	}
	w := markerWatch{sessionID: sessionID, rel: rel}
	for _, r := range recs {
		w.ids = append(w.ids, r.ID)
	}
	rv.markers.watch[markerKey(sessionID, rel)] = w
}

func (rv *reviewer) forgetMarkers(sessionID string, recs []*prsm.Record) {
	rv.markers.mu.Lock()
	defer rv.markers.mu.Unlock()
	for _, r := range recs {
		delete(rv.markers.watch, markerKey(sessionID, r.RelPath))
	}
}

// checkMarkers accepts the changes whose conflict the user settled in the
// editor: their workspace file holds no conflict marker any more. The
// first call also finds the ones a restarted server left to the editor.
func (rv *reviewer) checkMarkers(ctx context.Context) {
	rv.markers.once.Do(func() {
		recs, err := store.ListRecordsWithNote(ctx, rv.DB.Q(), markersNote)
		if err != nil {
			rv.Log.Error("conflicts left to the editor", "err", err)
			return
		}
		for _, r := range recs {
			if r.SyncState == prsm.SyncConflict && r.Status != prsm.StatusRejected && r.Status != prsm.StatusRewound {
				rv.watchMarkers(r.SessionID, r.RelPath, []*prsm.Record{r})
			}
		}
	})
	rv.markers.mu.Lock()
	var todo []markerWatch
	for _, w := range rv.markers.watch {
		todo = append(todo, w)
	}
	rv.markers.mu.Unlock()
	for _, w := range todo {
		v, err := sync.ReadVersion(rv.Repo.Root, w.rel)
		if err != nil || (v.Present && sync.HasConflictMarkers(v.Content)) {
			continue
		}
		if err := rv.markersGone(ctx, w); err != nil {
			rv.Log.Error("accept a conflict settled in the editor", "session", w.sessionID, "file", w.rel, "err", err)
		}
	}
}

// markersGone accepts the changes of w, whose markers the user removed.
func (rv *reviewer) markersGone(ctx context.Context, w markerWatch) error {
	s, _, unlock, err := rv.sessions.lockSession(ctx, w.sessionID)
	if err != nil {
		return err
	}
	defer unlock()
	for _, id := range w.ids {
		r, err := store.GetRecord(ctx, rv.DB.Q(), s.ID, id)
		if err != nil {
			return err
		}
		if r.Note == markersNote {
			if err := store.UpdateRecordNote(ctx, rv.DB.Q(), s.ID, id, "resolved in your editor"); err != nil {
				return err
			}
			r.Note = "resolved in your editor"
		}
		if r.SyncState == prsm.SyncConflict && r.Status != prsm.StatusRejected && r.Status != prsm.StatusRewound {
			if err := rv.rec.setState(ctx, r, prsm.StatusAccepted, prsm.SyncSynced); err != nil {
				return err
			}
		}
	}
	rv.markers.mu.Lock()
	delete(rv.markers.watch, markerKey(w.sessionID, w.rel))
	rv.markers.mu.Unlock()
	rv.publishSession(ctx, s.ID)
	return nil
}

// ResolveMarkersNow is Engine.ResolveMarkersNow's work.
func (rv *reviewer) ResolveMarkersNow(ctx context.Context) { rv.checkMarkers(ctx) }
