package history

import (
	"context"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/internal/bigfile"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync/patch"
	"github.com/prsm-dev/prsm/worktree"
)

// History is the workspace's history of kept work: its store and its
// repository.
type History struct {
	DB   *store.DB
	Repo *worktree.Repo
	// Version is prsm's version, the trace records' tool.version.
	Version string
}

// sides are record r's contents before and after (nil for a side where
// the file did not exist), its rejected hunks left out of after: the
// change as it now stands. A side too large to keep is prsm.ErrNotFound.
func (h *History) sides(ctx context.Context, r *prsm.Record) (before, after []byte, err error) {
	get := func(side, hash string) ([]byte, error) {
		if hash == "" {
			return nil, nil
		}
		b, err := store.GetBlob(ctx, h.DB.Q(), hash)
		if err != nil {
			return nil, err
		}
		if _, big := bigfile.Parse(b); big {
			return nil, prsm.Errorf(prsm.ErrNotFound, "too_large", "", "the %s side of %s is too large: prsm keeps no copy of its content", side, r.ID)
		}
		return b, nil
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
