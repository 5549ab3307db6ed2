package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/worktree"
)

// RewindPlan previews rolling the session back to checkpoint id.
func (e *Engine) RewindPlan(ctx context.Context, sessionID, id string) (*api.Plan, error) {
	return e.Rewind(ctx, sessionID, id, true)
}

// Rewind rolls the session back to checkpoint id: the worktree becomes the
// checkpoint exactly, the later records' deltas leave the workspace by
// reverse merges (user edits stay) and are marked rejected. A safety
// checkpoint is taken first, so the rollback can itself be rolled back.
func (e *Engine) Rewind(ctx context.Context, sessionID, id string, dryRun bool) (*api.Plan, error) {
	s, c, err := e.Checkpoint(ctx, sessionID, id)
	if err != nil {
		return nil, err
	}
	if err := requireActive(s); err != nil {
		return nil, err
	}
	s, st, unlock, err := e.lockSession(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	lock := &heldLock{unlock}
	defer lock.release()
	if err := e.settleUnclaimed(ctx, s, st); err != nil {
		return nil, err
	}
	rb, err := e.planRewind(ctx, s, st, c)
	if err != nil {
		return nil, err
	}
	if dryRun {
		rb.plan.DryRun = true
		return rb.plan, nil
	}
	return e.runRollback(ctx, s, st, lock, rb, "rewind to "+describe(c))
}

func describe(c *prsm.Checkpoint) string {
	if c.Name != "" {
		return fmt.Sprintf("%s (%s)", c.ID, short(c.Name, 40))
	}
	return c.ID
}

func (e *Engine) planRewind(ctx context.Context, s *prsm.Session, st *sessionState, c *prsm.Checkpoint) (*rollback, error) {
	objs, err := e.Repo.Objects()
	if err != nil {
		return nil, err
	}
	now, err := e.nowTree(ctx, s, st)
	if err != nil {
		return nil, err
	}
	defer now.done()
	diffs, err := objs.DiffTrees(now.tree, c.Tree)
	if err != nil {
		return nil, err
	}
	after, err := store.ListRecords(ctx, e.DB.Q(), store.RecordFilter{SessionID: s.ID, AfterSeq: c.RecordSeq})
	if err != nil {
		return nil, err
	}
	var undo []*prsm.Record
	for _, r := range after {
		if r.Status != prsm.StatusRejected {
			undo = append(undo, r)
		}
	}
	sortRecords(undo, true)
	rb := &rollback{plan: &api.Plan{CheckpointID: c.ID}, undo: undo, targets: map[string]sync.Version{}, from: map[string]sync.Version{}, now: now}
	for _, d := range diffs {
		rb.targets[d.Path] = fileVersion(d.To)
		rb.from[d.Path] = fileVersion(d.From)
	}
	eol, err := e.asCheckedOut(ctx, s, st, c, diffs, rb)
	if err != nil {
		return nil, err
	}
	if s.Mode == prsm.ModeReview {
		if err := e.reviewTargets(ctx, s, st, c, rb); err != nil {
			return nil, err
		}
	}
	return rb, e.fillPlan(ctx, s, rb, func(path string) (string, bool) {
		d, ok := findDiff(diffs, path)
		if !ok {
			if eol[path] {
				return "restore", true
			}
			return "", false
		}
		switch {
		case d.To == nil:
			return "delete", true
		case d.From == nil:
			return "create", true
		}
		return "restore", true
	})
}

// asCheckedOut gives a rewind's targets of files that the checkpoint had
// as git checked them out (no record up to it had changed them) the
// content the checkout wrote (asCheckout). The worktree's side needs no
// such reading: a file with no record at all is the base's in both trees,
// so it is in no diff, and one with records holds their bytes. It returns
// the paths it adds to the rewind: files whose trees agree though their
// bytes do not (the agent's LF now, git's CRLF at the checkpoint). Paths
// no conversion can apply to (in most repositories, all) cost nothing.
func (e *Engine) asCheckedOut(ctx context.Context, s *prsm.Session, st *sessionState, c *prsm.Checkpoint, diffs []worktree.TreeDiff, rb *rollback) (map[string]bool, error) {
	then := e.unchangedBy(ctx, s, c.RecordSeq)
	inDiff := map[string]bool{}
	for _, d := range diffs {
		inDiff[d.Path] = true
		to, _, err := e.asCheckout(ctx, st, d.Path, d.To, then)
		if err != nil {
			return nil, err
		}
		rb.targets[d.Path] = to
	}
	added := map[string]bool{}
	objs, err := e.Repo.Objects()
	if err != nil {
		return nil, err
	}
	for _, r := range rb.undo {
		path := r.RelPath
		if inDiff[path] || added[path] {
			continue
		}
		// Not in the diff: the checkpoint's tree has the file the
		// worktree's tree has now, which is the base's where no record
		// had changed it by the checkpoint (asCheckout checks both).
		f, err := objs.ReadFile(st.tracker.Base, path)
		if errors.Is(err, worktree.ErrNoFile) {
			continue
		}
		if err != nil {
			return nil, err
		}
		to, converted, err := e.asCheckout(ctx, st, path, &f, then)
		if err != nil || !converted {
			if err != nil {
				return nil, err
			}
			continue
		}
		from, err := st.tracker.KnownVersion(path, e.blobs(ctx))
		if err != nil {
			return nil, err
		}
		if from.Present && from.Mode == to.Mode && bytes.Equal(from.Content, to.Content) {
			continue
		}
		rb.targets[path], rb.from[path] = to, from
		added[path] = true
	}
	return added, nil
}

// reviewTargets adds a review-mode rewind's workspace side. The workspace
// followed the user's accepts only. A workspace file that no change since
// the checkpoint ever reached is left as it is. Where the undone records
// explain the whole change since the checkpoint (taking their deltas out
// of the worktree's file gives the checkpoint's), the workspace loses the
// deltas of those that reached it, record by record, as a selector
// rollback does: no merge touches what it never had. Elsewhere (the
// rewind also brings back changes rejected since the checkpoint, or
// undoes a rollback's records without the ones it rejected) it takes the
// net change, from the part of the worktree's file it followed
// (workspaceSide) to the checkpoint's file without the deltas of the
// records before the checkpoint that were rejected without ever reaching
// the workspace (their sync state stayed pending_review). A path the
// rewind leaves as it is in the worktree, though it undoes records of it,
// is planned too, with its content as target: the workspace may hold an
// accepted change of it that a later record, never accepted, took out of
// the worktree.
func (e *Engine) reviewTargets(ctx context.Context, s *prsm.Session, st *sessionState, c *prsm.Checkpoint, rb *rollback) error {
	undo := map[string][]*prsm.Record{} // newest first
	for _, r := range rb.undo {
		undo[r.RelPath] = append(undo[r.RelPath], r)
		if _, ok := rb.targets[r.RelPath]; ok {
			continue
		}
		v, err := st.tracker.KnownVersion(r.RelPath, e.blobs(ctx))
		if err != nil {
			return err
		}
		rb.targets[r.RelPath], rb.from[r.RelPath] = v, v
	}
	rejected, err := store.ListRecords(ctx, e.DB.Q(), store.RecordFilter{SessionID: s.ID, Status: prsm.StatusRejected})
	if err != nil {
		return err
	}
	never := map[string][]*prsm.Record{}
	rb.hidden = map[string][]*prsm.Record{}
	// gone: per path, the changes after the checkpoint that reached the
	// workspace and were taken out of it since (rejected): the target has
	// none of them.
	gone := map[string][]*prsm.Record{}
	// reached: the paths whose workspace file prsm changed since the
	// checkpoint: a record after it reached it (undone now or rejected
	// before), or a reject after it took an applied change out.
	reached := map[string]bool{}
	for _, r := range rb.undo {
		if r.SyncState == prsm.SyncSynced {
			reached[r.RelPath] = true
		}
	}
	for _, r := range rejected {
		if r.SyncState == prsm.SyncSynced && r.Seq > c.RecordSeq {
			gone[r.RelPath] = append(gone[r.RelPath], r)
		}
		if r.SyncState == prsm.SyncSynced && (r.Seq > c.RecordSeq || r.RejectedAt.IsZero() || !r.RejectedAt.Before(c.CreatedAt)) {
			reached[r.RelPath] = true
		}
		if r.SyncState != prsm.SyncPendingReview {
			continue
		}
		if r.Seq <= c.RecordSeq {
			// Rejected by the user before the checkpoint was taken: its
			// change had left the worktree by then, with no record of
			// its own, so the checkpoint's file does not hold it. (A
			// rollback's rejects leave their change in the history,
			// paired with the rollback's record that took it out.)
			if !r.RejectedAt.IsZero() && r.RejectedAt.Before(c.CreatedAt) {
				continue
			}
			never[r.RelPath] = append(never[r.RelPath], r)
			// A rewind after the checkpoint may have taken it out of
			// the worktree in a record now undone, which brings it back:
			// the workspace's side leaves it out with that record.
			rb.hidden[r.RelPath] = append(rb.hidden[r.RelPath], r)
		} else {
			// A rollback's offer rejected since (by the user, or by a
			// later rewind that took it out of the worktree and offered
			// it again) is hidden as an agent's change is: the
			// workspace never had it either.
			rb.hidden[r.RelPath] = append(rb.hidden[r.RelPath], r)
		}
	}
	// A rollback's bookkeeping records before the checkpoint (accepted,
	// never applied: they took out of the worktree changes the workspace
	// never had) go with the changes they took out: the two cancel.
	accepted, err := store.ListRecords(ctx, e.DB.Q(), store.RecordFilter{SessionID: s.ID, Status: prsm.StatusAccepted})
	if err != nil {
		return err
	}
	for _, r := range accepted {
		if r.ToolName == "Rollback" && r.SyncState == prsm.SyncPendingReview && r.Seq <= c.RecordSeq && len(never[r.RelPath]) > 0 {
			never[r.RelPath] = append(never[r.RelPath], r)
		}
	}
	for _, recs := range rb.hidden {
		sortRecords(recs, true)
	}
	late, err := e.lateHunks(ctx, s, c)
	if err != nil {
		return err
	}
	rb.wsTargets, rb.wsConflict, rb.byRecord = map[string]sync.Version{}, map[string]bool{}, map[string]bool{}
	for _, path := range sortedVersions(rb.targets) {
		to := rb.targets[path]
		if len(undo[path]) > 0 && !reached[path] {
			// No change since the checkpoint ever reached the workspace's
			// file: it is what it was then (less what the user did), and
			// the records come out of the worktree only. Record by
			// record, none of them touches it.
			rb.byRecord[path] = true
			continue
		}
		if recs := undo[path]; len(recs) > 0 && !bringsBack(recs, gone[path]) {
			ok, err := e.explains(ctx, s, path, rb.from[path], to, recs)
			if err != nil {
				return err
			}
			if ok {
				ok, err = e.hiddenAgree(ctx, rb.from[path], recs, rb.hidden[path])
				if err != nil {
					return err
				}
			}
			if ok {
				rb.byRecord[path] = true
				continue
			}
		}
		recs := never[path]
		if len(recs) == 0 && len(late[path]) == 0 {
			continue
		}
		side, ok := to, true
		if len(recs) > 0 {
			sortRecords(recs, true)
			if side, ok, err = e.workspaceSide(ctx, to, recs); err != nil {
				return err
			}
		}
		// Hunks rejected since the checkpoint, of changes made before it
		// that were pending then: the workspace never had their lines,
		// which the checkpoint's file holds. They stay out of it (the
		// rewind offers them again, as the rest of the difference).
		for _, h := range late[path] {
			if ok {
				side, ok = sync.Merge(h.from, side, h.to)
			}
		}
		if !ok {
			rb.wsConflict[path] = true
		} else if !sameVersion(side, to) {
			rb.wsTargets[path] = side
		}
	}
	return nil
}

// bringsBack reports whether taking the workspace deltas of recs (the
// records a review-mode rewind undoes) out one by one would bring back a
// change of gone (changes after the checkpoint, rejected since, that had
// reached the workspace): a rollback's record among recs that reached the
// workspace after one of them may be what took it out. Record by record,
// the rewind would then undo the rollback and leave what it had rejected
// in the workspace, though the checkpoint never held it; the net change
// (the worktree's, from the file to the checkpoint's) is taken instead.
func bringsBack(recs, gone []*prsm.Record) bool {
	for _, r := range recs {
		if r.ToolName != "Rollback" || r.SyncState != prsm.SyncSynced {
			continue
		}
		for _, g := range gone {
			if g.Seq < r.Seq {
				return true
			}
		}
	}
	return false
}

// hiddenAgree reports whether the records rejected since the
// checkpoint without reaching the workspace (hidden) leave the
// workspace's side of the worktree's file from as the undone records
// alone (recs) give it. Record by record, a rewind takes out of the
// workspace the deltas of the undone records that reached it, which
// holds only where the workspace is the worktree less the deltas of the
// undone records that never did. Where the hidden ones change that side,
// the workspace is elsewhere: a rewind rejected a rollback's record that
// had reached the workspace (taking an accepted offer out of it) while
// leaving the workspace as it was, so that no record left to undo holds
// that change, and only the net change, from that side to the
// checkpoint's, brings it back.
func (e *Engine) hiddenAgree(ctx context.Context, from sync.Version, recs, hidden []*prsm.Record) (bool, error) {
	if len(hidden) == 0 {
		return true, nil
	}
	var unsynced []*prsm.Record
	status := map[string]string{}
	for _, r := range recs {
		if r.SyncState != prsm.SyncSynced {
			unsynced = append(unsynced, r)
			status[r.ID] = r.Status
		}
	}
	alone, okAlone, err := e.workspaceSide(ctx, from, unsynced)
	if err != nil {
		return false, err
	}
	with, okWith, err := e.workspaceSideOf(ctx, from, unsynced, status, hidden)
	if err != nil {
		return false, err
	}
	return okAlone == okWith && sameVersion(alone, with), nil
}

// explains reports whether a review-mode rewind of a path may take the
// undone records recs (newest first) out of the workspace one by one: the
// worktree's file from without their deltas is the checkpoint's (to), and
// the workspace's part of that, the deltas of those that reached it taken
// out, brings back no line that neither the checkpoint's file nor a change
// that reached the workspace once (an agent's record the user accepted,
// rejected or not since) holds. A line that came
// back otherwise would be one the workspace lost to a rollback of a change
// it never had, a change nobody accepted: such paths take the net change
// instead, which never writes more than the checkpoint holds.
func (e *Engine) explains(ctx context.Context, s *prsm.Session, rel string, from, to sync.Version, recs []*prsm.Record) (bool, error) {
	undone, ok, err := e.workspaceSide(ctx, from, recs)
	if err != nil || !ok || !sameVersion(undone, to) {
		return false, err
	}
	var synced []*prsm.Record
	for _, r := range recs {
		if r.SyncState == prsm.SyncSynced {
			synced = append(synced, r)
		}
	}
	mid, ok, err := e.workspaceSide(ctx, from, synced)
	if err != nil || !ok {
		return false, err
	}
	known := map[string]bool{}
	add := func(v sync.Version) {
		for _, l := range bytes.SplitAfter(v.Content, []byte("\n")) {
			known[string(l)] = true
		}
	}
	add(from)
	add(to)
	loaded := false
	for _, l := range bytes.SplitAfter(mid.Content, []byte("\n")) {
		if known[string(l)] || loaded {
			if !known[string(l)] {
				return false, nil
			}
			continue
		}
		loaded = true
		recs, err := store.ListRecords(ctx, e.DB.Q(), store.RecordFilter{SessionID: s.ID, RelPath: rel})
		if err != nil {
			return false, err
		}
		for _, r := range recs {
			if r.ToolName == "Rollback" || r.SyncState != prsm.SyncSynced {
				continue // not the agent's, or never in the workspace
			}
			_, a, err := e.versions(ctx, r)
			if err != nil {
				return false, err
			}
			add(a)
		}
		if !known[string(l)] {
			return false, nil
		}
	}
	return true, nil
}

func findDiff(diffs []worktree.TreeDiff, path string) (worktree.TreeDiff, bool) {
	i := sort.Search(len(diffs), func(i int) bool { return diffs[i].Path >= path })
	if i < len(diffs) && diffs[i].Path == path {
		return diffs[i], true
	}
	return worktree.TreeDiff{}, false
}
