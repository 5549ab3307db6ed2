package engine

import (
	"context"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
)

// stateChange is a record's new status and sync state.
type stateChange struct {
	r              *prsm.Record
	status, syncSt string
	// rejected: a reject took the record's change out of the worktree
	// with no record of its own (Record.RejectedAt).
	rejected bool
}

// setStates stores many records' states in one transaction (crash point
// point, when given, after each), then announces them: one commit instead
// of one per record.
func (rv *reviewer) setStates(ctx context.Context, changes []stateChange, point string) error {
	var todo []stateChange
	for _, c := range changes {
		if c.r.Status != c.status || c.r.SyncState != c.syncSt || (c.rejected && c.r.RejectedAt.IsZero()) {
			todo = append(todo, c)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	now := time.Now().UTC()
	err := rv.DB.Tx(ctx, func(q store.Querier) error {
		for _, c := range todo {
			if err := store.UpdateRecordState(ctx, q, c.r.SessionID, c.r.ID, c.status, c.syncSt); err != nil {
				return err
			}
			if c.rejected {
				if err := store.MarkRejected(ctx, q, c.r.SessionID, c.r.ID, now); err != nil {
					return err
				}
			}
			if point != "" {
				crashPoint(point)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, c := range todo {
		r := c.r
		r.Status, r.SyncState = c.status, c.syncSt
		if c.rejected && r.RejectedAt.IsZero() {
			r.RejectedAt = now // as MarkRejected stored it: the first time only
		}
		rv.publishStatus(r)
	}
	return nil
}

// publishStatus announces record r's status, sync state and hunks.
func (rv *reviewer) publishStatus(r *prsm.Record) {
	var hunks []prsm.Hunk
	for _, h := range r.Hunks {
		h.Status = prsm.HunkStatus(r.Status, h.Status)
		hunks = append(hunks, h)
	}
	rv.Events.Publish(api.EventFileChangeStatus, api.StatusEvent{
		SessionID: r.SessionID, ID: r.ID, ToolCallID: r.ToolCallID, RelPath: r.RelPath, FilePath: r.FilePath,
		Status: r.Status, SyncState: r.SyncState, Hunks: hunks, Note: r.Note,
	})
}
