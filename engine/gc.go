package engine

import (
	"context"
	"sort"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
)

// GC is Engine.GC's work.
func (ss *sessionStates) GC(ctx context.Context, req api.GCRequest) (*api.GCReport, error) {
	ss.sessions.awaitAllAnswered()
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
	if err := ss.ckpt.FlushObjects(ctx); err != nil {
		return nil, err
	}
	rep := &api.GCReport{SessionsRemoved: []string{}, BytesBefore: ss.DB.Size()}
	sessions, err := store.ListSessions(ctx, ss.DB.Q(), "")
	if err != nil {
		return nil, err
	}
	for _, s := range sessions {
		cps, err := store.ListCheckpoints(ctx, ss.DB.Q(), s.ID)
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
			if err := store.DeleteCheckpoint(ctx, ss.DB.Q(), s.ID, autos[i].ID); err != nil {
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
		if err := store.DeleteSession(ctx, ss.DB.Q(), s.ID); err != nil {
			return err
		}
		if objs, err := ss.Repo.Objects(); err == nil {
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
		n, _, err := ss.DB.SweepBlobs(ctx)
		if err != nil {
			return err
		}
		rep.BlobsRemoved += n
		return ss.DB.Compact(ctx)
	}
	if err := sweep(); err != nil {
		return nil, err
	}
	for req.BudgetBytes > 0 && ss.DB.Size() > req.BudgetBytes && len(ended) > 0 {
		if err := drop(ended[len(ended)-1]); err != nil {
			return nil, err
		}
		ended = ended[:len(ended)-1]
		if err := sweep(); err != nil {
			return nil, err
		}
	}
	rep.BytesAfter = ss.DB.Size()
	rep.BytesFreed = max(rep.BytesBefore-rep.BytesAfter, 0)
	rep.OverBudget = req.BudgetBytes > 0 && rep.BytesAfter > req.BudgetBytes
	ss.Log.Info("gc", "sessions_removed", len(rep.SessionsRemoved), "checkpoints_removed", rep.CheckpointsRemoved,
		"blobs_removed", rep.BlobsRemoved, "bytes_freed", rep.BytesFreed)
	return rep, nil
}

func endTime(s *prsm.Session) string {
	if s.EndedAt != nil {
		return s.EndedAt.UTC().Format("2006-01-02T15:04:05.000000000")
	}
	return s.CreatedAt.UTC().Format("2006-01-02T15:04:05.000000000")
}
