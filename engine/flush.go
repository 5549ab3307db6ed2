package engine

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/worktree"
)

func storeObjects(objs []worktree.Object) []store.PendingObject {
	out := make([]store.PendingObject, len(objs))
	for i, o := range objs {
		out[i] = store.PendingObject{ID: o.Hash, Data: o.Data}
	}
	return out
}

// kickFlush starts a flush in the background unless one runs; one that
// runs goes round again, so nothing kicked is left waiting.
func (e *Engine) kickFlush() {
	e.flushMu.Lock()
	if e.flushing {
		e.flushAgain = true
		e.flushMu.Unlock()
		return
	}
	e.flushing = true
	e.flushMu.Unlock()
	go func() {
		for {
			if err := e.FlushObjects(context.Background()); err != nil {
				e.Log.Error("write checkpoint objects", "err", err)
			}
			e.flushMu.Lock()
			if !e.flushAgain {
				e.flushing = false
				e.flushMu.Unlock()
				return
			}
			e.flushAgain = false
			e.flushMu.Unlock()
		}
	}()
}

// FlushObjects writes the objects of every checkpoint still pending into
// the repository's object store, points their refs at their commits, and
// forgets them: after it returns, git (and git gc) sees every checkpoint.
// The server runs it in the background after each checkpoint, at start
// (what a crash left) and before it stops.
func (e *Engine) FlushObjects(ctx context.Context) error {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	rows, err := store.ListPending(ctx, e.DB.Q())
	if err != nil || len(rows) == 0 {
		return err
	}
	objs, err := e.Repo.Objects()
	if err != nil {
		return err
	}
	var all []worktree.Object
	seen := map[plumbing.Hash]bool{}
	for _, r := range rows {
		for _, o := range r.Objects {
			if !seen[o.ID] {
				seen[o.ID] = true
				all = append(all, worktree.Object{Hash: o.ID, Data: o.Data})
			}
		}
	}
	if err := objs.WriteObjects(all); err != nil {
		return fmt.Errorf("write checkpoint objects: %w", err)
	}
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
			return fmt.Errorf("checkpoint ref: %w", err)
		}
	}
	if err := store.DeletePending(ctx, e.DB.Q(), rows[len(rows)-1].Seq); err != nil {
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
