package engine

import (
	"bytes"
	"context"
	"errors"
	"math"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/worktree"
)

// Checkout conversions on the engine's side. A checkpoint's tree holds,
// for a file no record changed, the base commit's blob as git stores it;
// the worktree held it as git's checkout wrote it, which .gitattributes
// line ends or filters make differ (a .bat file stored with LF and checked
// out with CRLF). Rewinds and checkpoint diffs read such files through
// asCheckout, so that they speak of the bytes the worktree had.

// unchangedBy reports, for session s, whether no record up to seq (a
// checkpoint's RecordSeq; math.MaxInt64 for all of them) changed path.
func (ck *checkpointer) unchangedBy(ctx context.Context, s *prsm.Session, seq int64) func(path string) (bool, error) {
	return func(path string) (bool, error) {
		recs, err := store.ListRecords(ctx, ck.DB.Q(), store.RecordFilter{SessionID: s.ID, RelPath: path})
		if err != nil {
			return false, err
		}
		return len(recs) == 0 || recs[0].Seq > seq, nil
	}
}

// asCheckout returns f, path's file in a tree of the session, as the
// worktree held it: the base's blob as git's checkout converted it, when
// a conversion can apply to path, unchanged(path) says no record had
// changed it by then, and f is the base's blob (the same blob written by
// the agent, who turned a file into LF, keeps its bytes). converted says
// whether it differs from f's own content.
func (ck *checkpointer) asCheckout(ctx context.Context, st *sessionState, path string, f *worktree.File, unchanged func(string) (bool, error)) (v sync.Version, converted bool, err error) {
	v = fileVersion(f)
	if f == nil {
		return v, false, nil
	}
	base := st.tracker.Base
	if may, err := ck.Repo.MayConvert(ctx, base, path); err != nil || !may {
		return v, false, err
	}
	if ok, err := unchanged(path); err != nil || !ok {
		return v, false, err
	}
	objs, err := ck.Repo.Objects()
	if err != nil {
		return v, false, err
	}
	b, err := objs.ReadFile(base, path)
	if errors.Is(err, worktree.ErrNoFile) {
		return v, false, nil
	}
	if err != nil {
		return v, false, err
	}
	if b.Mode != f.Mode || !bytes.Equal(b.Content, f.Content) {
		return v, false, nil
	}
	c, err := st.tracker.BaseVersion(path)
	if err != nil {
		return v, false, err
	}
	return c, !bytes.Equal(c.Content, f.Content), nil
}

// allRecords is unchangedBy's seq for "any record, up to now".
const allRecords = math.MaxInt64
