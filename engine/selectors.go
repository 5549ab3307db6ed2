package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
)

// SelectRewind is Engine.SelectRewind's work.
func (rn *rewinder) SelectRewind(ctx context.Context, sessionID string, req api.RollbackRequest) (*api.Plan, error) {
	n := 0
	for _, set := range []bool{req.AgentID != "", req.After != "", req.File != "", req.Last != 0} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, prsm.Errorf(prsm.ErrInvalid, "bad_selector", "give one of agent_id, after, file or last", "a rollback needs exactly one selector, got %d", n)
	}
	var after time.Time
	if req.After != "" {
		var err error
		if after, err = time.Parse(time.RFC3339Nano, req.After); err != nil {
			return nil, prsm.Errorf(prsm.ErrInvalid, "bad_time", "use RFC 3339, e.g. 2026-11-22T10:00:00Z", "bad time %q", req.After)
		}
	}
	if req.Last < 0 {
		return nil, prsm.Errorf(prsm.ErrInvalid, "bad_selector", "", "last must be positive")
	}
	rel := ""
	if req.File != "" {
		var err error
		if rel, err = rn.rec.relPath(req.File); err != nil {
			return nil, err
		}
	}
	s, st, unlock, err := rn.sessions.lockActive(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	lock := &heldLock{unlock}
	defer lock.release()
	if err := rn.watch.settleUnclaimed(ctx, s, st); err != nil {
		return nil, err
	}
	all, err := store.ListRecords(ctx, rn.DB.Q(), store.RecordFilter{SessionID: s.ID})
	if err != nil {
		return nil, err
	}
	var live []*prsm.Record
	for _, r := range all {
		// A rewind's own records (made before rewinds stopped
		// making any) are undone through its safety checkpoint, not
		// picked by selectors; a rewound record is out already.
		if r.Status != prsm.StatusRejected && r.Status != prsm.StatusRewound && r.ToolName != "Rollback" {
			live = append(live, r)
		}
	}
	var undo []*prsm.Record
	for i, r := range live {
		switch {
		case req.AgentID != "" && r.AgentID == req.AgentID,
			req.After != "" && r.Timestamp.After(after),
			rel != "" && r.RelPath == rel,
			req.Last > 0 && i >= len(live)-req.Last:
			undo = append(undo, r)
		}
	}
	// A rewind's pending record (a change it offered for review again)
	// that follows an undone record of its file, so that the undo leaves
	// it nothing to offer (a deletion of a file the undo takes out), goes
	// too, as a reject's cascade takes it: rejecting it later would bring
	// back what this rewind took out.
	sortRecords(undo, true)
	byPath := map[string][]*prsm.Record{}
	for _, r := range undo {
		byPath[r.RelPath] = append(byPath[r.RelPath], r)
	}
	for _, r := range all {
		recs := byPath[r.RelPath]
		if len(recs) == 0 || r.ToolName != "Rollback" || r.Status != prsm.StatusPending || r.Seq < recs[len(recs)-1].Seq {
			continue
		}
		if left, err := rn.offersAfter(ctx, r, recs); err != nil {
			return nil, err
		} else if !left {
			undo = append(undo, r)
		}
	}
	sortRecords(undo, true)
	rb := &selectorRewind{plan: &api.Plan{}, undo: undo}
	err = rn.fillPlan(ctx, s, rb, func(path string) (string, bool) {
		var first, last *prsm.Record
		for _, r := range undo {
			if r.RelPath == path {
				if last == nil {
					last = r
				}
				first = r
			}
		}
		switch {
		case first == nil:
			return "", false
		case first.OldHash == "":
			return "delete", true
		case last.NewHash == "":
			return "create", true
		}
		return "restore", true
	})
	if err != nil {
		return nil, err
	}
	selectorSummary(rb.plan, undo)
	if req.DryRun {
		// The run would refuse: so does its preview.
		if _, err := rn.selectorTargets(ctx, s, undo); err != nil {
			return nil, err
		}
		rb.plan.DryRun = true
		return rb.plan, nil
	}
	return rn.runSelector(ctx, s, st, lock, rb, "rollback of "+short(selectorText(req), 40))
}

// offersAfter reports whether record r still changes something once the
// deltas of recs (newest first) are taken out of both its sides.
func (rn *rewinder) offersAfter(ctx context.Context, r *prsm.Record, recs []*prsm.Record) (bool, error) {
	b, a, err := rn.rec.versions(ctx, r)
	if err != nil {
		return false, err
	}
	ds, err := rn.deltas(ctx, recs)
	if err != nil {
		return false, err
	}
	for _, d := range ds {
		var okb, oka bool
		b, okb = sync.Merge(d.after, b, d.before)
		a, oka = sync.Merge(d.after, a, d.before)
		if !okb || !oka {
			return false, nil
		}
	}
	return !sameVersion(b, a), nil
}

func selectorText(r api.RollbackRequest) string {
	switch {
	case r.AgentID != "":
		return "agent " + r.AgentID
	case r.After != "":
		return "changes after " + r.After
	case r.File != "":
		return r.File
	}
	return fmt.Sprintf("last %d changes", r.Last)
}

// selectorTargets are the worktree files a selector rewind leaves: each
// undone record's delta taken out by a reverse merge, newest first. It
// refuses (worktree_conflict) where a later change overlaps one.
func (rn *rewinder) selectorTargets(ctx context.Context, s *prsm.Session, undo []*prsm.Record) (map[string]sync.Version, error) {
	targets := map[string]sync.Version{}
	dirs := map[string]bool{} // paths where the worktree has a directory (fileAt)
	for _, r := range undo {
		cur, ok := targets[r.RelPath]
		if !ok {
			var err error
			var isDir bool
			if cur, isDir, err = fileAt(s.WorktreePath, r.RelPath); err != nil {
				return nil, err
			}
			dirs[r.RelPath] = isDir
		}
		b, a, err := rn.rec.versions(ctx, r)
		if err != nil {
			return nil, err
		}
		next, ok := sync.Merge(a, cur, b)
		if !ok {
			return nil, prsm.Errorf(prsm.ErrConflict, "worktree_conflict", "rewind to a checkpoint instead",
				"change %s cannot be taken out of %s: later changes overlap it", r.ID, r.RelPath)
		}
		targets[r.RelPath] = next
	}
	// A file or link comes back where a directory stands only if the
	// rewind takes out all that the directory holds.
	gone := func(rel string) bool { v, ok := targets[rel]; return ok && !v.Present }
	for _, rel := range sortedKeys(dirs) {
		if dirs[rel] && targets[rel].Present && !emptiedBy(s.WorktreePath, rel, gone) {
			return nil, prsm.Errorf(prsm.ErrConflict, "worktree_conflict", "rewind to a checkpoint instead",
				"%s cannot come back: the worktree has a directory there, holding files this rollback keeps", rel)
		}
	}
	return targets, nil
}

// selectorSummary lists a selector rewind's decisions (every undone
// record becomes rejected) and says what it does in plain words.
func selectorSummary(p *api.Plan, undo []*prsm.Record) {
	p.Decisions = []api.PlanDecision{}
	accepted := 0
	for i := len(undo) - 1; i >= 0; i-- {
		r := undo[i]
		p.Decisions = append(p.Decisions, api.PlanDecision{RecordID: r.ID, RelPath: r.RelPath, ToolName: r.ToolName, From: r.Status, To: prsm.StatusRejected})
		if r.Status == prsm.StatusAccepted {
			accepted++
		}
	}
	n := len(undo)
	p.Summary = []string{fmt.Sprintf("%s %s rejected: taken out of the session's worktree and, where %s reached it, your workspace; your own edits are kept.",
		prsm.Plural(n, "change"), one(n, "is", "are"), one(n, "it", "they"))}
	if accepted > 0 {
		p.Summary = append(p.Summary, fmt.Sprintf("%s of them you had accepted.", prsm.Plural(accepted, "change")))
	}
	p.Summary = append(p.Summary, "Undoing the rollback brings back the changes and your decisions.")
}
