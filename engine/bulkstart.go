package engine

import (
	"context"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
)

// Bulk is Engine.Bulk's work.
func (bk *bulker) Bulk(ctx context.Context, sessionID string, accept bool, file string) (*api.Records, error) {
	j, err := bk.startBulk(ctx, sessionID, accept, file, false)
	if err != nil {
		return nil, err
	}
	return bk.jobs.jobAnswer(ctx, j)
}

// StartBulk is Engine.StartBulk's work.
func (bk *bulker) StartBulk(ctx context.Context, sessionID string, accept bool, file string) (*api.Job, error) {
	j, err := bk.startBulk(ctx, sessionID, accept, file, true)
	if err != nil {
		return nil, err
	}
	info := j.snapshot()
	return &info, nil
}

func (bk *bulker) startBulk(ctx context.Context, sessionID string, accept bool, file string, async bool) (*job, error) {
	s, st, unlock, err := bk.sessions.lockSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	rel := ""
	if file != "" {
		if rel, err = bk.rec.relPath(file); err != nil {
			unlock()
			return nil, err
		}
	}
	kind := api.JobRejectAll
	if accept {
		kind = api.JobAcceptAll
	}
	run, err := bk.planBulk(ctx, s, st, accept, rel, false)
	if err != nil {
		unlock()
		return nil, err
	}
	return bk.jobs.startJob(kind, s.ID, run.total(), async, func(j *job) ([]*prsm.Record, error) {
		defer unlock()
		j.leave(run.left, false)
		return run.run(ctx, j)
	}), nil
}

// bulkRun is a planned bulk decision of one session's pending records.
type bulkRun struct {
	e      *bulker
	accept *acceptRun
	reject *rejectRun
	// left counts the pending records the run leaves: of files with a
	// record in conflict.
	left int
}

func (b *bulkRun) total() int {
	if b.reject != nil {
		return len(b.reject.seqs)
	}
	return len(b.accept.seqs)
}

// planBulk plans the bulk decision of the session's pending records (of
// the file rel when set), written down for a reject (a discard's when
// end); the caller holds the session's lock.
func (bk *bulker) planBulk(ctx context.Context, s *prsm.Session, st *sessionState, accept bool, rel string, end bool) (*bulkRun, error) {
	b := &bulkRun{e: bk}
	pend, err := store.PendingRefs(ctx, bk.DB.Q(), s.ID, rel)
	if err != nil {
		return nil, err
	}
	if !end {
		pend, b.left = withoutConflicts(pend)
	}
	if accept {
		if b.accept, err = bk.planAccept(ctx, s, pend); err != nil {
			return nil, err
		}
		return b, nil
	}
	// Rejecting the earliest pending record of each file cascades to the
	// rest: the file goes back to that record's before state.
	seen := map[string]bool{}
	var roots []store.RecordRef
	for _, r := range pend {
		if !seen[r.RelPath] {
			seen[r.RelPath] = true
			roots = append(roots, r)
		}
	}
	if b.reject, err = bk.planReject(ctx, s, st, rejectPlan(pend, roots), end); err != nil {
		return nil, err
	}
	return b, nil
}

// run decides the planned records and returns them (up to answerLimit).
func (b *bulkRun) run(ctx context.Context, j *job) ([]*prsm.Record, error) {
	if b.reject != nil {
		return b.e.runReject(ctx, b.reject, j)
	}
	return b.e.runAccept(ctx, b.accept, j)
}

// BulkAll is Engine.BulkAll's work.
func (bk *bulker) BulkAll(ctx context.Context, accept bool) (*api.Records, error) {
	j, err := bk.startBulkAll(ctx, accept, false)
	if err != nil {
		return nil, err
	}
	return bk.jobs.jobAnswer(ctx, j)
}

// StartBulkAll is Engine.StartBulkAll's work.
func (bk *bulker) StartBulkAll(ctx context.Context, accept bool) (*api.Job, error) {
	j, err := bk.startBulkAll(ctx, accept, true)
	if err != nil {
		return nil, err
	}
	info := j.snapshot()
	return &info, nil
}

func (bk *bulker) startBulkAll(ctx context.Context, accept, async bool) (*job, error) {
	sessions, err := store.ListSessions(ctx, bk.DB.Q(), "")
	if err != nil {
		return nil, err
	}
	total := 0
	var ids []string
	for _, s := range sessions {
		if s.PendingCount > 0 {
			total += s.PendingCount
			ids = append(ids, s.ID)
		}
	}
	kind := api.JobRejectAll
	if accept {
		kind = api.JobAcceptAll
	}
	return bk.jobs.startJob(kind, "", total, async, func(j *job) ([]*prsm.Record, error) {
		ctx := context.WithoutCancel(ctx)
		var all []*prsm.Record
		for _, id := range ids {
			s, st, unlock, err := bk.sessions.lockSession(ctx, id)
			if err != nil {
				return nil, err
			}
			run, err := bk.planBulk(ctx, s, st, accept, "", false)
			var recs []*prsm.Record
			if err == nil {
				j.leave(run.left, true)
				recs, err = run.run(ctx, j)
			}
			unlock()
			if err != nil {
				return nil, err
			}
			if total <= answerLimit {
				all = append(all, recs...)
			}
		}
		return all, nil
	}), nil
}

// withoutConflicts is pend less the records of every file that has a
// record in conflict: a conflict is resolved (Resolve), never accepted or
// rejected in bulk, and the file's other pending records are built on it
// or under it. It returns how many it left out.
func withoutConflicts(pend []store.RecordRef) ([]store.RecordRef, int) {
	conflicted := map[string]bool{}
	for _, r := range pend {
		if r.SyncState == prsm.SyncConflict {
			conflicted[r.RelPath] = true
		}
	}
	if len(conflicted) == 0 {
		return pend, 0
	}
	kept := pend[:0:0]
	for _, r := range pend {
		if !conflicted[r.RelPath] {
			kept = append(kept, r)
		}
	}
	return kept, len(pend) - len(kept)
}
