package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/worktree"
)

func storeObjects(objs []worktree.Object) []store.PendingObject {
	out := make([]store.PendingObject, len(objs))
	for i, o := range objs {
		out[i] = store.PendingObject{ID: o.Hash, Data: o.Loose()}
	}
	return out
}

// FlushDelay is how long after a checkpoint its objects are written: the
// checkpoints of a burst of tool calls go in one flush, which then does not
// compete for the disk with the calls themselves. They are safe meanwhile:
// committed to the store, and read from memory.
var FlushDelay = 250 * time.Millisecond

// kickFlush starts a flush in the background, FlushDelay from now, unless
// one is due or runs; one that runs goes round again, so nothing kicked is
// left waiting.
func (ck *checkpointer) kickFlush() {
	ck.flushMu.Lock()
	defer ck.flushMu.Unlock()
	if ck.closed {
		return
	}
	if ck.flushing {
		ck.flushAgain = true
		return
	}
	ck.flushing = true
	ck.flushWG.Add(1)
	ck.flushTimer = time.AfterFunc(FlushDelay, func() {
		defer ck.flushWG.Done()
		for {
			ck.flushMu.Lock()
			closed := ck.closed
			ck.flushMu.Unlock()
			if closed {
				return
			}
			if err := ck.FlushObjects(context.Background()); err != nil {
				ck.Log.Error("write checkpoint objects", "err", err)
			}
			ck.flushMu.Lock()
			if !ck.flushAgain || ck.closed {
				ck.flushing = false
				ck.flushMu.Unlock()
				return
			}
			ck.flushAgain = false
			ck.flushMu.Unlock()
		}
	})
}

// FlushObjects is Engine.FlushObjects's work.
func (ck *checkpointer) FlushObjects(ctx context.Context) error {
	ck.sessions.awaitAllAnswered() // the newest checkpoints too
	// What is pending first: after a restart the lazy checkpoints build
	// on trees only the pending rows hold.
	if err := ck.writePending(ctx); err != nil {
		return err
	}
	if err := ck.materializeAll(ctx); err != nil {
		return err
	}
	return ck.writePending(ctx)
}

// flushAtStart writes what a crash left pending (FlushObjects) and then,
// every checkpoint's refs set, releases the packs a crash left kept
// (worktree.Objects.ReleaseKeeps): the flush that kept them never set
// their refs, or stopped before it released them.
func (ck *checkpointer) flushAtStart(ctx context.Context) error {
	if err := ck.FlushObjects(ctx); err != nil {
		return err
	}
	objs, err := ck.Repo.Objects()
	if err != nil {
		return err
	}
	if n, err := objs.ReleaseKeeps(); err != nil {
		return fmt.Errorf("release kept packs: %w", err)
	} else if n > 0 {
		ck.Log.Info("released the packs of checkpoint objects a crash left kept", "count", n)
	}
	return nil
}

// parsePending reads the objects of a pending row.
func parsePending(r *store.Pending) ([]worktree.Object, error) {
	if r.Bad != nil {
		return nil, r.Bad
	}
	obs := make([]worktree.Object, 0, len(r.Objects))
	for _, o := range r.Objects {
		ob, err := worktree.ParseLoose(o.ID, o.Data)
		if err != nil {
			return nil, fmt.Errorf("pending checkpoint %s: %w", r.Commit, err)
		}
		obs = append(obs, ob)
	}
	return obs, nil
}

// setAside moves a pending row that cannot be written out aside, so that
// one bad row (corrupt bytes) keeps neither the other checkpoints from
// the repository nor the server from starting. The checkpoint whose
// objects it held cannot be rewound to; everything else is served.
func (ck *checkpointer) setAside(ctx context.Context, r *store.Pending, why error) {
	ck.Log.Error("checkpoint objects that cannot be written set aside (table pending_objects_aside): that checkpoint cannot be rewound to",
		"seq", r.Seq, "session", r.SessionID, "commit", r.Commit, "err", why)
	if err := ck.DB.Tx(ctx, func(q store.Querier) error {
		return store.SetPendingAside(ctx, q, r.Seq, why.Error())
	}); err != nil {
		ck.Log.Error("set pending objects aside", "seq", r.Seq, "err", err)
	}
}

// writePending writes the objects of the pending rows and points their
// refs (FlushObjects).
func (ck *checkpointer) writePending(ctx context.Context) error {
	ck.writeMu.Lock()
	defer ck.writeMu.Unlock()
	listed, err := store.ListPending(ctx, ck.DB.Q())
	if err != nil || len(listed) == 0 {
		return err
	}
	objs, err := ck.Repo.Objects()
	if err != nil {
		return err
	}
	var all []worktree.Object
	var rows []*store.Pending
	seen := map[plumbing.Hash]bool{}
	bad := map[string]int64{} // sessions with a row set aside: its seq
	for _, r := range listed {
		obs, err := parsePending(r)
		if seq, ok := bad[r.SessionID]; ok && err == nil {
			// Its trees may share objects only that row held.
			err = fmt.Errorf("pending checkpoint %s builds on pending objects %d, set aside", r.Commit, seq)
		}
		if err != nil {
			ck.setAside(ctx, r, err)
			if _, ok := bad[r.SessionID]; !ok {
				bad[r.SessionID] = r.Seq
			}
			continue
		}
		for _, ob := range obs {
			if !seen[ob.Hash] {
				seen[ob.Hash] = true
				all = append(all, ob)
			}
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil
	}
	// One pack, kept until the refs are set: no git gc prunes its
	// objects while no ref reaches them (worktree/pack.go).
	kept, err := objs.WriteKept(all)
	if err != nil {
		return fmt.Errorf("write checkpoint objects: %w", err)
	}
	crashPoint("flush:written")
	// Refs last, in order: a ref only ever names a commit whose objects
	// are all in place.
	last := map[string]string{}
	var order []string
	for _, r := range rows {
		for _, ref := range r.Refs {
			if _, ok := last[ref]; !ok {
				order = append(order, ref)
			}
			last[ref] = r.Commit
		}
	}
	for _, ref := range order {
		if err := objs.SetRef(ref, last[ref]); err != nil {
			// The pack stays kept: a start releases it (ReleaseKeeps),
			// once a flush set the refs.
			return fmt.Errorf("checkpoint ref: %w", err)
		}
	}
	// Reachable now: the pack, and the large blobs the trees name
	// (written apart, as their trees were built), are git's to keep.
	if err := errors.Join(kept.Release(), objs.ReleaseLarge(all)); err != nil {
		ck.Log.Warn("release kept checkpoint objects", "err", err)
	}
	// On the transaction connection, like every write: a write on a pool
	// connection makes the transaction connection drop its page cache,
	// and the next tool call's transaction read its pages again (15
	// preads of a complete after each flush).
	if err := ck.DB.Tx(ctx, func(q store.Querier) error {
		return store.DeletePending(ctx, q, rows[len(rows)-1].Seq)
	}); err != nil {
		return err
	}
	for _, r := range rows {
		staged := make([]worktree.Object, len(r.Objects))
		for i, o := range r.Objects {
			staged[i] = worktree.Object{Hash: o.ID}
		}
		objs.Unstage(staged)
	}
	return nil
}
