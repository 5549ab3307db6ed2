package engine

import (
	"context"
	"sort"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
)

// GC applies retention: it drops old automatic checkpoints beyond
// KeepAuto per session (named ones stay), the records, checkpoints and refs
// of ended sessions beyond KeepSessions or beyond the disk budget, and the
// content no longer referenced, then compacts the store. Active sessions
// and their pending work are never touched. git objects freed by the
// dropped refs go at the user's own next git gc.
func (e *Engine) GC(ctx context.Context, req api.GCRequest) (*api.GCReport, error) {
	e.sessions.awaitAllAnswered()
	if req.KeepSessions == 0 {
		req.KeepSessions = 30
	}
	if req.KeepAuto == 0 {
		req.KeepAuto = 200
	}
	if req.KeepSessions < 0 || req.KeepAuto < 0 || req.BudgetBytes < 0 {
		return nil, prsm.Errorf(prsm.ErrInvalid, "invalid_retention", "", "retention limits must be positive")
	}
	// Refs about to be dropped must not come back from a pending write.
	if err := e.ckpt.FlushObjects(ctx); err != nil {
		return nil, err
	}
	rep := &api.GCReport{SessionsRemoved: []string{}, BytesBefore: e.DB.Size()}
	sessions, err := store.ListSessions(ctx, e.DB.Q(), "")
	if err != nil {
		return nil, err
	}
	for _, s := range sessions {
		cps, err := store.ListCheckpoints(ctx, e.DB.Q(), s.ID)
		if err != nil {
			return nil, err
		}
		var autos []*prsm.Checkpoint
		for _, c := range cps {
			if c.Kind == prsm.CheckpointAuto {
				autos = append(autos, c)
			}
		}
		for i := 0; i < len(autos)-req.KeepAuto; i++ {
			if err := store.DeleteCheckpoint(ctx, e.DB.Q(), s.ID, autos[i].ID); err != nil {
				return nil, err
			}
			rep.CheckpointsRemoved++
		}
	}
	var ended []*prsm.Session
	for _, s := range sessions {
		if s.Status == prsm.SessionEnded {
			ended = append(ended, s)
		}
	}
	sort.Slice(ended, func(i, j int) bool { return endTime(ended[i]) > endTime(ended[j]) })
	drop := func(s *prsm.Session) error {
		if err := store.DeleteSession(ctx, e.DB.Q(), s.ID); err != nil {
			return err
		}
		if objs, err := e.Repo.Objects(); err == nil {
			objs.DeleteRefs("refs/prsm/" + s.ID + "/")
		}
		rep.SessionsRemoved = append(rep.SessionsRemoved, s.ID)
		return nil
	}
	for i := req.KeepSessions; i < len(ended); i++ {
		if err := drop(ended[i]); err != nil {
			return nil, err
		}
	}
	if len(ended) > req.KeepSessions {
		ended = ended[:req.KeepSessions]
	}
	sweep := func() error {
		n, _, err := e.DB.SweepBlobs(ctx)
		if err != nil {
			return err
		}
		rep.BlobsRemoved += n
		return e.DB.Compact(ctx)
	}
	if err := sweep(); err != nil {
		return nil, err
	}
	for req.BudgetBytes > 0 && e.DB.Size() > req.BudgetBytes && len(ended) > 0 {
		if err := drop(ended[len(ended)-1]); err != nil {
			return nil, err
		}
		ended = ended[:len(ended)-1]
		if err := sweep(); err != nil {
			return nil, err
		}
	}
	rep.BytesAfter = e.DB.Size()
	rep.BytesFreed = max(rep.BytesBefore-rep.BytesAfter, 0)
	rep.OverBudget = req.BudgetBytes > 0 && rep.BytesAfter > req.BudgetBytes
	e.Log.Info("gc", "sessions_removed", len(rep.SessionsRemoved), "checkpoints_removed", rep.CheckpointsRemoved,
		"blobs_removed", rep.BlobsRemoved, "bytes_freed", rep.BytesFreed)
	return rep, nil
}

func endTime(s *prsm.Session) string {
	if s.EndedAt != nil {
		return s.EndedAt.UTC().Format("2006-01-02T15:04:05.000000000")
	}
	return s.CreatedAt.UTC().Format("2006-01-02T15:04:05.000000000")
}
