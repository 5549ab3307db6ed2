package history

import (
	"context"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync/patch"
	"github.com/prsm-dev/prsm/worktree"
)

// History is the workspace's history of kept work: its store, its
// repository, and how to read a record's contents.
type History struct {
	DB   *store.DB
	Repo *worktree.Repo
	// Content is one side ("before" or "after") of a record as stored,
	// its rejected hunks still in (engine.Content); sides leaves them
	// out.
	Content func(ctx context.Context, sessionID, recordID, side string) ([]byte, error)
	// Version is prsm's version, the trace records' tool.version.
	Version string
}

// sides are record r's contents before and after (nil for a side where
// the file did not exist), its rejected hunks left out of after: the
// change as it now stands.
func (h *History) sides(ctx context.Context, r *prsm.Record) (before, after []byte, err error) {
	get := func(side, hash string) ([]byte, error) {
		if hash == "" {
			return nil, nil
		}
		return h.Content(ctx, r.SessionID, r.ID, side)
	}
	if before, err = get("before", r.OldHash); err != nil {
		return nil, nil, err
	}
	if after, err = get("after", r.NewHash); err != nil {
		return nil, nil, err
	}
	if hasRejected(r) {
		after, err = patch.ApplyHunks(before, after, func(i int) bool {
			return i < len(r.Hunks) && r.Hunks[i].Status != prsm.StatusRejected
		})
	}
	return before, after, err
}
