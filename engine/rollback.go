package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/store"
	prsmsync "github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/tracker"
	"github.com/prsm-dev/prsm/worktree"
)

// rollback is what a plan will do: the records it undoes (newest first)
// and, for a rewind, the exact worktree target of every differing path.
type rollback struct {
	plan    *Plan
	undo    []*prsm.Record
	targets map[string]prsmsync.Version // nil: reverse-merge the records in the worktree too
	// from is, for a rewind, what each target path holds now as far as
	// prsm knows: the workspace takes the net change from -> target.
	from map[string]prsmsync.Version
	// now is the tree of the current state a rewind planned against: the
	// safety checkpoint's tree, not built twice.
	now *treeState
	// wsTargets (a rewind in review mode) are the workspace's targets
	// where they are not the worktree's (reviewTargets); wsConflict the
	// paths whose target could not be worked out, left as they are.
	wsTargets  map[string]prsmsync.Version
	wsConflict map[string]bool
	// byRecord (a rewind in review mode) are the paths whose workspace
	// takes the undone records' deltas out one by one (reviewTargets).
	byRecord map[string]bool
	// hidden (a rewind in review mode) are, by path, the records rejected
	// since the checkpoint without ever reaching the workspace (made after
	// it, or made before it and not rejected by the user by then): the
	// workspace's side of the worktree leaves them out too, where an
	// undone record brings them back (broughtBack).
	hidden map[string][]*prsm.Record
}

// RewindPlan previews rolling the session back to checkpoint id.
func (e *Engine) RewindPlan(ctx context.Context, sessionID, id string) (*Plan, error) {
	return e.Rewind(ctx, sessionID, id, true)
}

// Rewind rolls the session back to checkpoint id: the worktree becomes the
// checkpoint exactly, the later records' deltas leave the workspace by
// reverse merges (user edits stay) and are marked rejected. A safety
// checkpoint is taken first, so the rollback can itself be rolled back.
func (e *Engine) Rewind(ctx context.Context, sessionID, id string, dryRun bool) (*Plan, error) {
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
	rb := &rollback{plan: &Plan{CheckpointID: c.ID}, undo: undo, targets: map[string]prsmsync.Version{}, from: map[string]prsmsync.Version{}, now: now}
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
	rb.wsTargets, rb.wsConflict, rb.byRecord = map[string]prsmsync.Version{}, map[string]bool{}, map[string]bool{}
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
		if len(recs) == 0 {
			continue
		}
		sortRecords(recs, true)
		side, ok, err := e.workspaceSide(ctx, to, recs)
		if err != nil {
			return err
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
func (e *Engine) hiddenAgree(ctx context.Context, from prsmsync.Version, recs, hidden []*prsm.Record) (bool, error) {
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
func (e *Engine) explains(ctx context.Context, s *prsm.Session, rel string, from, to prsmsync.Version, recs []*prsm.Record) (bool, error) {
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
	add := func(v prsmsync.Version) {
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

// fillPlan lists operations, warnings and conflicts. opType names the
// operation of a path (false: the worktree does not change there).
func (e *Engine) fillPlan(ctx context.Context, s *prsm.Session, rb *rollback, opType func(string) (string, bool)) error {
	p := rb.plan
	p.Operations, p.AffectedFiles, p.Conflicts, p.Warnings = []Operation{}, []string{}, []Conflict{}, []string{}
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
		op := Operation{Type: typ, Path: path, RecordIDs: []string{}}
		recs := byPath[path]
		for i := len(recs) - 1; i >= 0; i-- {
			op.RecordIDs = append(op.RecordIDs, recs[i].ID)
		}
		if len(recs) == 0 {
			if rb.targets != nil {
				p.Warnings = append(p.Warnings, fmt.Sprintf("%s changed since the checkpoint through rejects only; it goes back as the checkpoint has it", path))
			} else {
				p.Warnings = append(p.Warnings, fmt.Sprintf("%s changed in the worktree without a record; only the worktree is restored", path))
			}
		}
		p.Operations = append(p.Operations, op)
		p.AffectedFiles = append(p.AffectedFiles, path)
	}
	// Simulate the workspace's reverse merges to find the conflicts.
	for _, path := range sortedSet(paths) {
		ws, err := prsmsync.ReadVersion(e.Repo.Root, path)
		if err != nil {
			p.Conflicts = append(p.Conflicts, Conflict{Path: path, Reason: err.Error()})
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
				p.Conflicts = append(p.Conflicts, Conflict{Path: path,
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
				p.Conflicts = append(p.Conflicts, Conflict{Path: path,
					Reason: "changes never applied to the workspace overlap later ones; the workspace file will be left as it is"})
				continue
			}
			if _, ok := prsmsync.Merge(side, ws, to); !ok {
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
				p.Conflicts = append(p.Conflicts, Conflict{Path: path,
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
			if ws, ok = prsmsync.Merge(after, ws, before); !ok {
				p.Conflicts = append(p.Conflicts, Conflict{Path: path,
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
func (e *Engine) workspaceSide(ctx context.Context, from prsmsync.Version, unsynced []*prsm.Record) (prsmsync.Version, bool, error) {
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
func (e *Engine) workspaceSideOf(ctx context.Context, from prsmsync.Version, unsynced []*prsm.Record, status map[string]string, hidden []*prsm.Record) (prsmsync.Version, bool, error) {
	by, err := e.broughtBack(ctx, unsynced, status, hidden)
	if err != nil {
		return prsmsync.Version{}, false, err
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
		return prsmsync.Version{}, false, err
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
		next, ok := prsmsync.Merge(ds[i].after, side, ds[i].before)
		if !ok {
			return prsmsync.Version{}, false, nil
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
			in, ok := prsmsync.Merge(ha, d.before, hb)
			if !ok || sameVersion(in, d.before) {
				continue // not in its before side
			}
			if still, ok := prsmsync.Merge(ha, d.after, hb); ok && !sameVersion(still, d.after) {
				continue // still in its after side
			}
			out[h.ID] = brings[i].ID
			break
		}
	}
	return out, nil
}

// delta is one record's change of a file.
type delta struct{ before, after prsmsync.Version }

// deltas are the changes of recs, in their order.
func (e *Engine) deltas(ctx context.Context, recs []*prsm.Record) ([]delta, error) {
	ds := make([]delta, len(recs))
	for i, r := range recs {
		b, a, err := e.versions(ctx, r)
		if err != nil {
			return nil, err
		}
		ds[i] = delta{b, a}
	}
	return ds, nil
}

// cancelling returns the last index j of a run of deltas from i (newest
// first, each one's before the next one's after) whose net change is
// nothing (the oldest one's before is the newest one's after); i where
// there is none.
func cancelling(ds []delta, i int) int {
	for k := i; k < len(ds); k++ {
		if sameVersion(ds[k].before, ds[i].after) {
			return k
		}
		if k+1 < len(ds) && !sameVersion(ds[k].before, ds[k+1].after) {
			break
		}
	}
	return i
}

// rollbackSide is workspaceSide for a running rollback: recs are the
// undone records of path rel (newest first), and the payload says which
// of them had not reached the workspace, and (a review-mode rewind) which
// records rejected since the checkpoint never did (Hidden).
func (e *Engine) rollbackSide(ctx context.Context, p *rollbackPayload, rel string, recs []*prsm.Record, from prsmsync.Version) (prsmsync.Version, bool, error) {
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
			return prsmsync.Version{}, false, err
		}
		hidden = append(hidden, r)
	}
	return e.workspaceSideOf(ctx, from, unsynced, p.Unsynced, hidden)
}

// newestFirst is the records of a and b, newest first.
func newestFirst(a, b []*prsm.Record) []*prsm.Record {
	out := append(append([]*prsm.Record{}, a...), b...)
	sortRecords(out, true)
	return out
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// SelectRollback previews or runs a rollback of the records a selector
// picks: an agent's, those after a time, a file's, or the last N.
func (e *Engine) SelectRollback(ctx context.Context, sessionID string, req RollbackRequest) (*Plan, error) {
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
		if rel, err = e.relPath(req.File); err != nil {
			return nil, err
		}
	}
	s, st, unlock, err := e.lockSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	lock := &heldLock{unlock}
	defer lock.release()
	if err := requireActive(s); err != nil {
		return nil, err
	}
	if err := e.settleUnclaimed(ctx, s, st); err != nil {
		return nil, err
	}
	all, err := store.ListRecords(ctx, e.DB.Q(), store.RecordFilter{SessionID: s.ID})
	if err != nil {
		return nil, err
	}
	var live []*prsm.Record
	for _, r := range all {
		// A rollback's own records are undone through its safety
		// checkpoint, not picked by selectors.
		if r.Status != prsm.StatusRejected && r.ToolName != "Rollback" {
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
	// A rollback's pending record (a change it offered for review again)
	// that follows an undone record of its file, so that the undo leaves
	// it nothing to offer (a deletion of a file the undo takes out), goes
	// too, as a reject's cascade takes it: rejecting it later would bring
	// back what this rollback took out.
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
		if left, err := e.offersAfter(ctx, r, recs); err != nil {
			return nil, err
		} else if !left {
			undo = append(undo, r)
		}
	}
	sortRecords(undo, true)
	rb := &rollback{plan: &Plan{}, undo: undo}
	err = e.fillPlan(ctx, s, rb, func(path string) (string, bool) {
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
	if req.DryRun {
		// The run would refuse: so does its preview.
		if _, err := e.selectorTargets(ctx, s, undo); err != nil {
			return nil, err
		}
		rb.plan.DryRun = true
		return rb.plan, nil
	}
	return e.runRollback(ctx, s, st, lock, rb, "rollback of "+short(selectorText(req), 40))
}

// offersAfter reports whether record r still changes something once the
// deltas of recs (newest first) are taken out of both its sides.
func (e *Engine) offersAfter(ctx context.Context, r *prsm.Record, recs []*prsm.Record) (bool, error) {
	b, a, err := e.versions(ctx, r)
	if err != nil {
		return false, err
	}
	ds, err := e.deltas(ctx, recs)
	if err != nil {
		return false, err
	}
	for _, d := range ds {
		var okb, oka bool
		b, okb = prsmsync.Merge(d.after, b, d.before)
		a, oka = prsmsync.Merge(d.after, a, d.before)
		if !okb || !oka {
			return false, nil
		}
	}
	return !sameVersion(b, a), nil
}

func selectorText(r RollbackRequest) string {
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

// rollbackPayload is a rollback's intent (SPEC rule 6): everything needed
// to finish it after a crash, decided before its first write. The worktree
// side is exact targets, so writing them again is harmless; the workspace
// side is the records to undo, and those already marked rejected are done.
type rollbackPayload struct {
	Safety   string                     `json:"safety"`   // the safety checkpoint taken first
	Undo     []string                   `json:"undo"`     // records it undoes, newest first
	Worktree map[string]store.FileState `json:"worktree"` // the exact target of every worktree path it writes
	Before   map[string]store.FileState `json:"before"`   // what those paths held before (as prsm knew them)
	// Net (a rewind): the workspace takes each path's net change out
	// (Before -> Worktree) in one merge, rather than record by record. A
	// rewind may undo a rollback's own record without the records that
	// rollback rejected: record by record, that would bring back in the
	// workspace what the rollback took out.
	Net bool `json:"net,omitempty"`
	// ByRecord lists paths a rewind takes out record by record: in review
	// mode, those whose change the undone records explain (reviewTargets);
	// in payloads of older versions, those with Unsynced records.
	ByRecord []string `json:"by_record,omitempty"`
	// Unsynced are the undone records that had not reached the workspace
	// (review mode, a failed sync), with the status each had. The
	// workspace takes none of their deltas (workspaceSide), and the
	// rollback's own records tell that part apart (recordRollback).
	Unsynced map[string]string `json:"unsynced,omitempty"`
	// Workspace (a rewind in review mode) holds the workspace's target of
	// each path where it is not the worktree's (reviewTargets), and
	// WorkspaceConflict the paths whose workspace file is left as it is.
	Workspace         map[string]store.FileState `json:"workspace,omitempty"`
	WorkspaceConflict []string                   `json:"workspace_conflict,omitempty"`
	// Hidden (a rewind in review mode) lists by path, newest first, the
	// records rejected since the checkpoint without ever reaching the
	// workspace (rollback.hidden): taken out with the Unsynced ones that
	// bring them back (rollbackSide).
	Hidden map[string][]string `json:"hidden,omitempty"`

	session string // the session's id, not stored
}

// workspaceTarget is the target of the workspace file rel in a rewind:
// the worktree's (to) unless the payload says otherwise.
func (e *Engine) workspaceTarget(ctx context.Context, p *rollbackPayload, rel string, to prsmsync.Version) (prsmsync.Version, error) {
	if w, ok := p.Workspace[rel]; ok {
		return e.stateVersion(ctx, w)
	}
	return to, nil
}

// runRollback executes a plan: safety checkpoint, then (written down first
// as an intent) worktree, workspace, statuses and the rollback's own
// records. A failure while writing the worktree puts it back as it was.
// The files' syncs to the disk run after the answer, holding the
// session's lock (taken over from lock), and the intent is done once they
// are: a crash before that finishes the rollback again at the next start.
func (e *Engine) runRollback(ctx context.Context, s *prsm.Session, st *sessionState, lock *heldLock, rb *rollback, what string) (*Plan, error) {
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
		for _, x := range []prsmsync.Version{v, before} {
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

// selectorTargets are the worktree files a selector rollback leaves: each
// undone record's delta taken out by a reverse merge, newest first. It
// refuses (worktree_conflict) where a later change overlaps one.
func (e *Engine) selectorTargets(ctx context.Context, s *prsm.Session, undo []*prsm.Record) (map[string]prsmsync.Version, error) {
	targets := map[string]prsmsync.Version{}
	for _, r := range undo {
		cur, ok := targets[r.RelPath]
		if !ok {
			var err error
			if cur, err = prsmsync.ReadVersion(s.WorktreePath, r.RelPath); err != nil {
				return nil, err
			}
		}
		b, a, err := e.versions(ctx, r)
		if err != nil {
			return nil, err
		}
		next, ok := prsmsync.Merge(a, cur, b)
		if !ok {
			return nil, prsm.Errorf(prsm.ErrConflict, "worktree_conflict", "rewind to a checkpoint instead",
				"change %s cannot be taken out of %s: later changes overlap it", r.ID, r.RelPath)
		}
		targets[r.RelPath] = next
	}
	return targets, nil
}

// reviewView is the workspace file rel with the session's pending records
// of it applied, oldest first: what accepting them all would leave. The
// workspace file alone where one does not apply cleanly.
func (e *Engine) reviewView(ctx context.Context, sessionID, rel string) (prsmsync.Version, error) {
	ws, err := prsmsync.ReadVersion(e.Repo.Root, rel)
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
		if v, ok = prsmsync.Merge(b, v, a); !ok {
			return ws, nil
		}
	}
	return v, nil
}

// stateVersion is the version a stored file state describes.
func (e *Engine) stateVersion(ctx context.Context, fs store.FileState) (prsmsync.Version, error) {
	if !fs.Present {
		return prsmsync.Absent, nil
	}
	b, err := store.GetBlob(ctx, e.DB.Q(), fs.Hash)
	if err != nil {
		return prsmsync.Version{}, err
	}
	return prsmsync.Version{Present: true, Mode: fs.Mode, Content: b}, nil
}

func (e *Engine) stateVersions(ctx context.Context, m map[string]store.FileState) (map[string]prsmsync.Version, error) {
	out := make(map[string]prsmsync.Version, len(m))
	for rel, fs := range m {
		v, err := e.stateVersion(ctx, fs)
		if err != nil {
			return nil, err
		}
		out[rel] = v
	}
	return out, nil
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
	vs := make([]prsmsync.Version, len(rels))
	write := make([]bool, len(rels))
	for i, rel := range rels {
		v, err := e.stateVersion(ctx, p.Worktree[rel])
		if err != nil {
			return err
		}
		cur, err := prsmsync.ReadVersion(s.WorktreePath, rel)
		vs[i] = v
		write[i] = err != nil || !prsmsync.Same(cur, v) || (v.Present && cur.Mode != v.Mode)
	}
	errs := inPathOrder(len(rels), func(i int) string { return rels[i] }, func(i int) bool { return !vs[i].Present }, func(i int) error {
		if !write[i] {
			return nil
		}
		w, err := prsmsync.WriteUnsynced(s.WorktreePath, rels[i], vs[i])
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

func rollbackToolCall(safety string) string { return "rollback-" + safety }

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
		from, target prsmsync.Version
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

func sortedVersions(m map[string]prsmsync.Version) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// restoreWorktree puts paths back as they were before a failed rollback.
func (e *Engine) restoreWorktree(ctx context.Context, s *prsm.Session, st *sessionState, before map[string]prsmsync.Version) error {
	var errs []string
	rels := pathOrdered(sortedVersions(before), func(rel string) string { return rel }, func(rel string) bool { return !before[rel].Present })
	for _, rel := range rels {
		v := before[rel]
		if err := prsmsync.Write(s.WorktreePath, rel, v); err != nil {
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
func (e *Engine) reviewRollbackParts(ctx context.Context, p *rollbackPayload, rel string, undone []*prsm.Record, from, now prsmsync.Version, conflict bool) ([]rollbackPart, error) {
	// What the user would have on accepting everything offered: the
	// workspace file with the path's pending records applied, and then
	// each offer of this rollback. An offer that changes nothing there
	// needs no review.
	var view *prsmsync.Version
	offer := func(a, b prsmsync.Version, state string) rollbackPart {
		if view == nil {
			v, err := e.reviewView(ctx, p.session, rel)
			if err != nil {
				e.Log.Warn("rollback: read what the workspace would have", "file", rel, "err", err)
			}
			view = &v
		}
		status := prsm.StatusAccepted
		if v, ok := prsmsync.Merge(a, *view, b); !ok || !sameVersion(v, *view) {
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
	var end prsmsync.Version
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
			var whole prsmsync.Version
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
		if moved, ok := prsmsync.Merge(side, mid, end); ok {
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
func (e *Engine) takeOut(ctx context.Context, v prsmsync.Version, recs []*prsm.Record, p *rollbackPayload, unsynced bool) (prsmsync.Version, bool, error) {
	for _, r := range recs {
		if _, ok := p.Unsynced[r.ID]; ok != unsynced {
			continue
		}
		b, a, err := e.versions(ctx, r)
		if err != nil {
			return prsmsync.Version{}, false, err
		}
		var ok bool
		if v, ok = prsmsync.Merge(a, v, b); !ok {
			return prsmsync.Version{}, false, nil
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
func (e *Engine) reviewWorkspaceEnd(ctx context.Context, p *rollbackPayload, rel string, undone []*prsm.Record, side, now prsmsync.Version) (prsmsync.Version, bool, error) {
	if p.Net && !slices.Contains(p.ByRecord, rel) {
		v, err := e.workspaceTarget(ctx, p, rel, now)
		return v, err == nil, err
	}
	return e.takeOut(ctx, side, undone, p, false)
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
func (e *Engine) recordRollback(ctx context.Context, s *prsm.Session, st *sessionState, p *rollbackPayload, undone map[string][]*prsm.Record, before map[string]prsmsync.Version, conflicted map[string]bool) error {
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
