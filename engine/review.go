package engine

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine/workspace"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
)

// reviewer decides records one by one: accept, reject, the hunks of
// one, the conflicts left in the workspace (review.go, hunks.go,
// resolve.go), and stores and announces their states (states.go). It
// owns the conflicts left to the editor (markers) and their scanner.
type reviewer struct {
	*Engine
	// markers are the conflicts left to the editor (resolve.go).
	markers markers
}

// Accept is Engine.Accept's work.
func (rv *reviewer) Accept(ctx context.Context, sessionID, id string) (*api.Records, error) {
	return rv.AcceptChange(ctx, sessionID, id, api.AcceptRequest{WithEarlier: true})
}

// AcceptChange is Engine.AcceptChange's work.
func (rv *reviewer) AcceptChange(ctx context.Context, sessionID, id string, req api.AcceptRequest) (*api.Records, error) {
	s, _, unlock, err := rv.sessions.lockSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	recs, err := rv.rec.recordsOf(ctx, s, id)
	if err != nil {
		return nil, err
	}
	if err := refuseRewound(recs); err != nil {
		return nil, err
	}
	for _, r := range recs {
		if r.Status == prsm.StatusRejected {
			return nil, prsm.Errorf(prsm.ErrConflict, "already_rejected", "", "change %s was rejected; it cannot be accepted", r.ID)
		}
	}
	earlier, err := rv.earlierPending(ctx, s, recs)
	if err != nil {
		return nil, err
	}
	if req.DryRun {
		return rv.withEarlier(ctx, recs, earlier)
	}
	if len(earlier) > 0 && !req.WithEarlier {
		return nil, needsEarlier(id, earlier)
	}
	recs = removalsFirst(recs, func(r *prsm.Record) bool { return r.ChangeType == prsm.ChangeDelete })
	// The answer lists every record the accept touched: in review mode the
	// earlier pending records of the file are applied and accepted first.
	out := map[string]*prsm.Record{}
	changed := false
	for _, r := range recs {
		done, err := rv.accept(ctx, s, r)
		if err != nil {
			return nil, err
		}
		changed = changed || len(done) > 0
		out[r.ID] = r
		for _, d := range done {
			out[d.ID] = d
		}
	}
	list := make([]*prsm.Record, 0, len(out))
	for _, r := range out {
		list = append(list, r)
	}
	sortRecords(list, false)
	if changed {
		rv.publishSession(ctx, s.ID)
	}
	for _, r := range earlier {
		if d := out[r.ID]; d != nil {
			*r = *d
		}
	}
	return rv.withEarlier(ctx, list, earlier)
}

// earlierPending are the records that accepting recs would apply first
// (in review mode only): the pending records of their files older than
// a pending one of recs, and not among recs, oldest first.
func (rv *reviewer) earlierPending(ctx context.Context, s *prsm.Session, recs []*prsm.Record) ([]*prsm.Record, error) {
	if s.Mode != prsm.ModeReview {
		return nil, nil
	}
	named := map[string]bool{}
	for _, r := range recs {
		named[r.ID] = true
	}
	var out []*prsm.Record
	for _, r := range recs {
		if r.Status != prsm.StatusPending {
			continue
		}
		pend, err := store.ListRecords(ctx, rv.DB.Q(), store.RecordFilter{SessionID: s.ID, RelPath: r.RelPath, Status: prsm.StatusPending})
		if err != nil {
			return nil, err
		}
		for _, p := range pend {
			if p.Seq < r.Seq && !named[p.ID] {
				named[p.ID] = true
				out = append(out, p)
			}
		}
	}
	sortRecords(out, false)
	return out, nil
}

// needsEarlier refuses an accept of id that would apply the earlier
// pending records first without being told to.
func needsEarlier(id string, earlier []*prsm.Record) error {
	const show = 10
	var ids []string
	for i, r := range earlier {
		if i == show {
			ids = append(ids, fmt.Sprintf("and %d more", len(earlier)-show))
			break
		}
		ids = append(ids, r.ID+" ("+sync.QuotePath(r.RelPath)+")")
	}
	return prsm.Errorf(prsm.ErrConflict, "needs_earlier",
		"accept them with it (prsm changes accept --with-earlier, or with_earlier in the API), or decide them first",
		"accepting %s applies %s of the same file first: %s; nothing was accepted",
		id, prsm.Plural(len(earlier), "earlier pending change"), strings.Join(ids, ", "))
}

// withEarlier is the answer of an accept: recs, and in Earlier the
// earlier pending records it applied first (or would).
func (rv *reviewer) withEarlier(ctx context.Context, recs, earlier []*prsm.Record) (*api.Records, error) {
	ans, err := rv.rec.answer(ctx, recs)
	if err != nil {
		return nil, err
	}
	if len(earlier) > 0 {
		if err := rv.rec.FillContent(ctx, earlier); err != nil {
			return nil, err
		}
		ans.Earlier = earlier
	}
	return ans, nil
}

// accept accepts r and, in review mode, applies the pending records of its
// file up to it, oldest first.
func (rv *reviewer) accept(ctx context.Context, s *prsm.Session, r *prsm.Record) ([]*prsm.Record, error) {
	if r.Status != prsm.StatusPending {
		return nil, nil
	}
	chain := []*prsm.Record{r}
	if s.Mode == prsm.ModeReview {
		pend, err := store.ListRecords(ctx, rv.DB.Q(), store.RecordFilter{SessionID: s.ID, RelPath: r.RelPath, Status: prsm.StatusPending})
		if err != nil {
			return nil, err
		}
		chain = chain[:0]
		for _, p := range pend {
			if p.Seq <= r.Seq {
				chain = append(chain, p)
			}
		}
	}
	// The whole chain is written down before its first step, like a
	// reject's cascade: a crash halfway leaves the rest to the next start.
	intents, err := rv.intents.intendAll(ctx, intentAccept, chain)
	if err != nil {
		return nil, err
	}
	// Written down: it runs to its end even if the caller goes away.
	ctx = context.WithoutCancel(ctx)
	for i, c := range chain {
		intent := intents[i]
		state := c.SyncState
		// pending_review means the change never reached the workspace:
		// in review mode it waited for this accept; in auto mode its sync
		// failed (a disk error, say), and accepting it tries again.
		if c.SyncState == prsm.SyncPendingReview {
			before, after, err := rv.rec.versions(ctx, c)
			if err != nil {
				return nil, err
			}
			if state, err = rv.ws.Sync(s.ID, c.RelPath, before, after); err != nil {
				return nil, err
			}
		}
		status := decidedStatus(c)
		if status == prsm.StatusPartial {
			// Its hunks not rejected one by one are accepted with it.
			for i := range c.Hunks {
				if c.Hunks[i].Status == prsm.StatusPending {
					c.Hunks[i].Status = prsm.StatusAccepted
				}
			}
			if err := store.UpdateRecordHunks(ctx, rv.DB.Q(), s.ID, c.ID, c.Hunks); err != nil {
				return nil, err
			}
		}
		if err := rv.rec.setState(ctx, c, status, state); err != nil {
			return nil, err
		}
		if err := store.DoneIntent(ctx, rv.DB.Q(), intent); err != nil {
			return nil, err
		}
		if c.ID == r.ID {
			r.Status, r.SyncState = c.Status, c.SyncState
		}
		crashPoint("accept:applied")
	}
	return chain, nil
}

// Reject is Engine.Reject's work.
func (rv *reviewer) Reject(ctx context.Context, sessionID, id string) (*api.Records, error) {
	s, st, unlock, err := rv.sessions.lockSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	recs, err := rv.rec.recordsOf(ctx, s, id)
	if err == nil {
		err = refuseRewound(recs)
	}
	var run *rejectRun
	if err == nil {
		run, err = rv.planRecords(ctx, s, st, recs)
	}
	if err != nil || run == nil {
		unlock()
		if err != nil {
			return nil, err
		}
		return rv.rec.answer(ctx, nil)
	}
	j := rv.jobs.startJob(api.JobReject, s.ID, len(run.seqs), false, func(j *job) ([]*prsm.Record, error) {
		defer unlock()
		return rv.bulk.runReject(ctx, run, j)
	})
	return rv.jobs.jobAnswer(ctx, j)
}

// reject rejects recs and their cascades, newest first per file, now;
// the caller holds the session's lock.
func (rv *reviewer) reject(ctx context.Context, s *prsm.Session, st *sessionState, recs []*prsm.Record) ([]*prsm.Record, error) {
	run, err := rv.planRecords(ctx, s, st, recs)
	if err != nil || run == nil {
		return nil, err
	}
	return rv.bulk.runReject(ctx, run, nil)
}

// planRecords plans and writes down the reject of recs (those not
// rejected yet) and their cascades; nil when there is nothing to do.
func (rv *reviewer) planRecords(ctx context.Context, s *prsm.Session, st *sessionState, recs []*prsm.Record) (*rejectRun, error) {
	var roots []store.RecordRef
	for _, r := range recs {
		if r.Status != prsm.StatusRejected {
			roots = append(roots, refOf(r))
		}
	}
	if len(roots) == 0 {
		return nil, nil
	}
	pend, err := rv.bulk.pendingOf(ctx, s.ID, roots)
	if err != nil {
		return nil, err
	}
	return rv.bulk.planReject(ctx, s, st, rejectPlan(pend, roots), false)
}

// checkParents refuses (before anything is written) a reject that would
// bring back a deleted file whose parent directory is now a file, one the
// same reject does not take out: a directory replaced by a file, and only
// the deletion of its files rejected.
func (rv *reviewer) checkParents(ctx context.Context, s *prsm.Session, order []store.RecordRef) error {
	if s.Status != prsm.SessionActive {
		return nil
	}
	removed := map[string]bool{}
	for _, r := range order {
		if r.ChangeType == prsm.ChangeCreate {
			removed[r.RelPath] = true
		}
	}
	for _, r := range order {
		if r.ChangeType != prsm.ChangeDelete {
			continue
		}
		for dir := path.Dir(r.RelPath); dir != "." && dir != "/"; dir = path.Dir(dir) {
			fi, err := os.Lstat(filepath.Join(s.WorktreePath, filepath.FromSlash(dir)))
			if err != nil || fi.IsDir() || removed[dir] {
				continue
			}
			by := "the change that made it one"
			if recs, err := store.ListRecords(ctx, rv.DB.Q(), store.RecordFilter{SessionID: s.ID, RelPath: dir}); err == nil && len(recs) > 0 {
				by = "change " + recs[len(recs)-1].ID
			}
			return prsm.Errorf(prsm.ErrConflict, "parent_is_file", "reject that change too, or the whole tool call",
				"%s cannot come back while %s is a file (%s)", r.RelPath, dir, by)
		}
	}
	return nil
}

// removalsFirst puts records in pathOrder where their paths nest (a file
// and a directory of one name): gone says whether applying (or undoing) a
// record leaves its path absent. Otherwise recs stay as they are.
func removalsFirst(recs []*prsm.Record, gone func(*prsm.Record) bool) []*prsm.Record {
	return workspace.PathOrdered(recs, func(r *prsm.Record) string { return r.RelPath }, gone)
}

// revert takes one record's delta out of the worktree and (if it reached it)
// the workspace by a reverse 3-way merge: base is the record's after side,
// theirs its before side, so later edits stay. The caller holds its intent.
// Running it again after a crash is harmless: a merge that finds the delta
// already gone writes nothing.
func (rv *reviewer) revert(ctx context.Context, s *prsm.Session, st *sessionState, r *prsm.Record) error {
	before, after, err := rv.rec.versions(ctx, r)
	if err != nil {
		return err
	}
	state, err := rv.revertDelta(ctx, s, st, r, after, before)
	if err != nil {
		return err
	}
	return rv.setStates(ctx, []stateChange{{r: r, status: prsm.StatusRejected, syncSt: rejectedState(r, state), rejected: true}}, "")
}

// revertDelta takes the delta from -> to (a part of record r's change, read
// backwards) out of the worktree (an active session's) and, if r reached
// it, the workspace, by reverse 3-way merges that keep every other edit.
// It returns r's sync state after it: conflict when either file changed
// where the delta lies and was left as it is, synced otherwise.
func (rv *reviewer) revertDelta(ctx context.Context, s *prsm.Session, st *sessionState, r *prsm.Record, from, to sync.Version) (string, error) {
	state := prsm.SyncSynced
	if s.Status == prsm.SessionActive {
		known, err := st.tracker.KnownVersion(r.RelPath, rv.capture.blobs(ctx))
		if err != nil {
			return "", err
		}
		out, now, err := sync.Apply(s.WorktreePath, r.RelPath, from, to)
		if err != nil {
			return "", err
		}
		if out == sync.Conflict {
			rv.Log.Warn("reject: worktree file changed since; left as it is", "session", s.ID, "record", r.ID)
			state = prsm.SyncConflict
		} else {
			// prsm's own write is known, so it never becomes a record.
			// What prsm knew loses the same delta: a change in the file
			// that no record has yet (a tool call's in flight, a shell's
			// the watcher has not recorded) stays a change, for its own
			// record, rather than pass for part of the reject.
			learned := now
			if k, ok := sync.Merge(from, known, to); ok {
				learned = k
			}
			// A merged result is new content: keep it in the blob store.
			if learned.Present {
				if _, err := store.PutBlob(ctx, rv.DB.Q(), learned.Content); err != nil {
					return "", err
				}
			}
			st.tracker.Learn(r.RelPath, learned)
			if err := store.PutFileState(ctx, rv.DB.Q(), s.ID, r.RelPath, trackerState(learned)); err != nil {
				return "", err
			}
		}
	}
	// Only a delta that reached the workspace is taken out of it.
	if mayHaveReached(s, r) {
		ws, err := rv.ws.Sync(s.ID, r.RelPath, from, to)
		if err != nil {
			return "", err
		}
		if ws == prsm.SyncConflict {
			state = prsm.SyncConflict
		}
	}
	return state, nil
}

// mayHaveReached reports whether record r's change may be in the
// workspace: synced, or an auto-mode change still pending_review, whose
// sync's state is stored after the complete's answer (a busy store can
// leave it unstored until the next start). A reverse merge finds the
// delta there, or finds it absent and writes nothing.
func mayHaveReached(s *prsm.Session, r *prsm.Record) bool {
	return r.SyncState == prsm.SyncSynced || (s.Mode == prsm.ModeAuto && r.Status == prsm.StatusPending && r.SyncState == prsm.SyncPendingReview)
}

// rejectedState is the sync state of record r once rejected, when the
// workspace side of the reject went as planned (state): a record that
// never reached the workspace keeps pending_review, so that a later
// rewind in review mode can tell it never did (reviewTargets).
func rejectedState(r *prsm.Record, state string) string {
	if state == prsm.SyncSynced && r.SyncState == prsm.SyncPendingReview {
		return prsm.SyncPendingReview
	}
	return state
}

// Diff is Engine.Diff's work.
func (rv *reviewer) Diff(ctx context.Context, sessionID, id string) (string, error) {
	s, err := rv.sessions.Session(ctx, sessionID)
	if err != nil {
		return "", err
	}
	recs, err := rv.rec.recordsOf(ctx, s, id)
	if err != nil {
		return "", err
	}
	return rv.diffRecords(ctx, recs)
}

func (rv *reviewer) diffRecords(ctx context.Context, recs []*prsm.Record) (string, error) {
	var b strings.Builder
	for _, r := range recs {
		before, after, err := rv.rec.versions(ctx, r)
		if err != nil {
			return "", err
		}
		b.WriteString(diffOne(r, before, after, maxDiffText-b.Len()))
	}
	return b.String(), nil
}

// maxDiffText bounds the text of one diff answer (of a record, a tool
// call or a checkpoint; issue 42): the diff of a file that would pass
// what is left of it is named, not shown. A variable for tests.
var maxDiffText = 16 << 20

// diffOne is the git-style diff of one file; binary files are named as
// binary, and so is a file whose diff would pass room bytes.
func diffOne(r *prsm.Record, before, after sync.Version, room int) string {
	var b strings.Builder
	oldName, newName := "a/"+r.RelPath, "b/"+r.RelPath
	if !before.Present {
		oldName = "/dev/null"
	}
	if !after.Present {
		newName = "/dev/null"
	}
	// Names are quoted as git quotes them: a newline in one would split
	// the header, an escape would reach the reviewer's terminal.
	fmt.Fprintf(&b, "diff --git %s %s\n", sync.QuotePath("a/"+r.RelPath), sync.QuotePath("b/"+r.RelPath))
	switch {
	case !before.Present:
		fmt.Fprintf(&b, "new file mode %o\n", after.Mode)
	case !after.Present:
		fmt.Fprintf(&b, "deleted file mode %o\n", before.Mode)
	case before.Mode != after.Mode:
		fmt.Fprintf(&b, "old mode %o\nnew mode %o\n", before.Mode, after.Mode)
	}
	if r.Binary {
		fmt.Fprintf(&b, "Binary files %s and %s differ\n", sync.QuotePath(oldName), sync.QuotePath(newName))
		return b.String()
	}
	d, ok := sync.UnifiedDiffMax(oldName, newName, before.Content, after.Content, 3, room-b.Len())
	if !ok {
		where := "GET .../file-changes/" + r.ID + "/content?side=before|after serves each side"
		if r.ID == "" {
			where = "the file is in the session's worktree"
		}
		fmt.Fprintf(&b, "Diff of %s not shown: more than the %s of diff prsm sends at once; %s\n", r.RelPath, prsm.Size(int64(maxDiffText)), where)
		return b.String()
	}
	b.WriteString(d)
	return b.String()
}

// refuseRewound refuses a decision on a rewound record: its change is out
// of the worktree and the workspace, and only a rewind to a later
// checkpoint brings it back.
func refuseRewound(recs []*prsm.Record) error {
	for _, r := range recs {
		if r.Status == prsm.StatusRewound {
			return prsm.Errorf(prsm.ErrConflict, "rewound", "undo the rollback, or rewind to a checkpoint after it, to bring it back",
				"change %s was rewound: it is out of the worktree and the workspace", r.ID)
		}
	}
	return nil
}
