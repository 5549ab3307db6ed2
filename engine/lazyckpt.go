package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/worktree"
)

// The automatic checkpoint before a tool call is lazy: the capture stores
// it as what changed since the checkpoint before it (a recipe of paths,
// modes and blob hashes, in the checkpoint's row), and its tree and commit
// are built later, off the tool call's path: by the flusher, or first
// thing by whatever reads checkpoints or builds on them (materialize).
// Building them is the costliest part of a capture's background work,
// which runs beside the agent's tool on a machine with few cores
// (docs/performance.md). After a crash the
// next start builds them from the recipes (FlushObjects).

// lazyCkpt is a stored checkpoint whose tree and commit are not built.
type lazyCkpt struct {
	c *prsm.Checkpoint
	r recipe
	// changes are r's, with contents (nil after a restart: read from
	// the store when built).
	changes []worktree.TreeChange
	// recovered: left in the store by the process before. What changed
	// after it was known to that process only, so the next checkpoint
	// of this one is built against the base commit, with every path
	// known to differ, as after any restart.
	recovered bool
}

// recipe is what a lazy checkpoint holds against the checkpoint before it
// (or, with Base, against the session's base commit).
type recipe struct {
	Base  bool          `json:"base,omitempty"`
	Files []recipeEntry `json:"files"`
}

type recipeEntry struct {
	Path string `json:"path"`
	Mode uint32 `json:"mode,omitempty"` // 0: the file is absent
	Hash string `json:"hash,omitempty"` // blob hash of the content
}

// lazyCheckpoint prepares the checkpoint before tool call tc (nil when
// the session switched them off): its recipe, from the paths the tracker
// saw change since the checkpoint before. The caller holds the session's
// lock, stores it (store) and then calls lazyStored.
func (ck *checkpointer) lazyCheckpoint(ctx context.Context, s *prsm.Session, st *sessionState, tc *prsm.ToolCall, target string) (*lazyCkpt, error) {
	on, err := ck.autoCheckpointsOn(ctx, s, st)
	if err != nil || !on {
		return nil, err
	}
	desc := "before " + tc.ToolName
	if what := short(target, 60); what != "" {
		desc += ": " + what
	}
	st.ckptMu.Lock()
	fromBase := st.ckptTree == "" && (len(st.lazy) == 0 || st.lazy[len(st.lazy)-1].recovered)
	st.ckptMu.Unlock()
	changes, err := ck.knownChanges(ctx, st, fromBase)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	lz := &lazyCkpt{changes: changes, r: recipe{Base: fromBase, Files: make([]recipeEntry, 0, len(changes))}}
	for _, c := range changes {
		en := recipeEntry{Path: c.Path}
		if c.File != nil {
			en.Mode, en.Hash = c.File.Mode, store.HashBlob(c.File.Content)
			if fs, ok := st.tracker.Known[c.Path]; ok && fs.Present && fs.Size == int64(len(c.File.Content)) {
				en.Hash = fs.Hash // the known state's hash: the same, not hashed again
			}
		}
		lz.r.Files = append(lz.r.Files, en)
	}
	lz.c = &prsm.Checkpoint{ID: newID(), SessionID: s.ID, Kind: prsm.CheckpointAuto, Name: desc,
		MessageIndex: tc.MessageIndex, ToolCallID: tc.ID, CreatedAt: time.Now().UTC(), FilesChanged: len(changes)}
	return lz, nil
}

// store writes the lazy checkpoint in the transaction q (stampRecordSeq
// first, as for any checkpoint).
func (lz *lazyCkpt) store(ctx context.Context, q store.Querier) error {
	if err := stampRecordSeq(ctx, q, lz.c); err != nil {
		return err
	}
	b, err := json.Marshal(lz.r)
	if err != nil {
		return err
	}
	return store.InsertLazyCheckpoint(ctx, q, lz.c, string(b))
}

// eagerFiles is the size of recipe from which a capture builds its
// checkpoint at once (still after its answer): after a large change (a
// Bash call, a rewind) a rewind is likely to come soon, and would
// otherwise build it, as part of the rewind. A one-file edit's stays lazy.
const eagerFiles = 8

// lazyStored queues a stored lazy checkpoint for building, as the start
// of the next one, and has the flusher build it soon, or builds it now
// when it is large (eagerFiles). The caller holds the session's lock.
func (ck *checkpointer) lazyStored(ctx context.Context, st *sessionState, lz *lazyCkpt) {
	st.ckptMu.Lock()
	st.lazy = append(st.lazy, lz)
	st.ckptMu.Unlock()
	st.lastTurn = nil
	st.tracker.Touched = map[string]bool{}
	crashPoint("checkpoint:stored")
	if len(lz.r.Files) > eagerFiles {
		if err := ck.materialize(ctx, st); err != nil {
			ck.Log.Error("build checkpoints", "session", st.tracker.ID, "err", err)
		}
		return
	}
	ck.kickFlush()
}

// materialize builds the trees and commits of the session's lazy
// checkpoints, in order, and stores them (with their objects, for the
// flusher) in one transaction; each is announced then. Nothing is built
// when none waits. It does not need the session's lock.
func (ck *checkpointer) materialize(ctx context.Context, st *sessionState) error {
	st.ckptMu.Lock()
	defer st.ckptMu.Unlock()
	if len(st.lazy) == 0 {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	objs, err := ck.Repo.Objects()
	if err != nil {
		return err
	}
	sid := st.tracker.ID
	tree, commit := st.ckptTree, st.ckptCommit
	if commit == "" {
		// After a restart: the chain goes on from the newest checkpoint
		// built.
		list, err := store.ListCheckpoints(ctx, ck.DB.Q(), sid)
		if err != nil {
			return err
		}
		for i := len(list) - 1; i >= 0; i-- {
			if list[i].Commit != "" {
				tree, commit = list[i].Tree, list[i].Commit
				break
			}
		}
	}
	type built struct {
		lz      *lazyCkpt
		refs    []string
		pending []worktree.Object
	}
	var out []built
	unstage := func() {
		for _, b := range out {
			objs.Unstage(b.pending)
		}
	}
	for _, lz := range st.lazy {
		changes, err := ck.recipeChanges(ctx, lz)
		if err != nil {
			unstage()
			return err
		}
		base := tree
		if lz.r.Base || base == "" {
			if base, err = objs.CommitTreeID(st.tracker.Base); err != nil {
				unstage()
				return err
			}
		}
		b := objs.NewBatch()
		t, err := b.BuildTree(base, changes)
		if err != nil {
			unstage()
			return fmt.Errorf("checkpoint tree: %w", err)
		}
		var refs []string
		c := commit
		if t != tree || commit == "" {
			parent := commit
			if parent == "" {
				parent = st.tracker.Base
			}
			if c, err = b.Commit(t, parent, checkpointMessage(lz.c.ID, lz.c.Name), lz.c.CreatedAt); err != nil {
				unstage()
				return err
			}
			refs = []string{headRef(sid)}
		} else {
			b = objs.NewBatch() // nothing changed since: the same commit
		}
		lz.c.Tree, lz.c.Commit = t, c
		out = append(out, built{lz: lz, refs: refs, pending: b.Objects()})
		objs.Stage(b.Objects())
		tree, commit = t, c
	}
	err = ck.DB.Tx(ctx, func(q store.Querier) error {
		for _, b := range out {
			if err := store.SetCheckpointTree(ctx, q, sid, b.lz.c.ID, b.lz.c.Tree, b.lz.c.Commit); err != nil {
				return err
			}
			if len(b.refs) > 0 {
				if err := store.AddPending(ctx, q, &store.Pending{SessionID: sid, Commit: b.lz.c.Commit, Refs: b.refs, Objects: storeObjects(b.pending)}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		unstage()
		for _, lz := range st.lazy {
			lz.c.Tree, lz.c.Commit = "", ""
		}
		return fmt.Errorf("build checkpoints: %w", err)
	}
	st.ckptTree, st.ckptCommit = tree, commit
	if st.lazy[len(st.lazy)-1].recovered {
		// The tracker's touched paths are not against it: the next
		// checkpoint starts from the base commit and finds its parent in
		// the store (prepareCheckpoint, materialize).
		st.ckptTree, st.ckptCommit = "", ""
	}
	st.lazy = nil
	for _, b := range out {
		ev := *b.lz.c
		ck.Events.Publish(api.EventCheckpoint, &ev)
	}
	ck.kickFlush()
	return nil
}

// recipeChanges returns the tree changes of a lazy checkpoint, reading
// the contents a restart did not keep from the store.
func (ck *checkpointer) recipeChanges(ctx context.Context, lz *lazyCkpt) ([]worktree.TreeChange, error) {
	if lz.changes != nil || len(lz.r.Files) == 0 {
		return lz.changes, nil
	}
	changes := make([]worktree.TreeChange, 0, len(lz.r.Files))
	for _, f := range lz.r.Files {
		c := worktree.TreeChange{Path: f.Path}
		if f.Mode != 0 {
			data, err := store.GetBlob(ctx, ck.DB.Q(), f.Hash)
			if err != nil {
				return nil, fmt.Errorf("checkpoint %s: %w", lz.c.ID, err)
			}
			c.File = &worktree.File{Mode: f.Mode, Content: data}
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// loadLazy queues the lazy checkpoints a session left in the store (a
// crash, or a stop before the flusher ran) on its state, as it is loaded.
func loadLazy(ctx context.Context, q store.Querier, st *sessionState) error {
	rows, err := store.ListLazyCheckpoints(ctx, q, st.tracker.ID)
	if err != nil {
		return err
	}
	for _, row := range rows {
		lz := &lazyCkpt{c: row.Checkpoint, recovered: true}
		if err := json.Unmarshal([]byte(row.Changes), &lz.r); err != nil {
			return fmt.Errorf("checkpoint %s: bad changes: %w", row.ID, err)
		}
		st.lazy = append(st.lazy, lz)
	}
	return nil
}

// materializeSession builds the lazy checkpoints of session s, loading
// its state if needed: for what reads its checkpoints.
func (ck *checkpointer) materializeSession(ctx context.Context, s *prsm.Session) error {
	st, err := ck.sessions.state(ctx, s)
	if err != nil {
		return err
	}
	return ck.materialize(ctx, st)
}

// materializeAll builds the lazy checkpoints of every session, those a
// crash left in the store included.
func (ck *checkpointer) materializeAll(ctx context.Context) error {
	rows, err := store.ListLazyCheckpoints(ctx, ck.DB.Q(), "")
	if err != nil {
		return err
	}
	ids := map[string]bool{}
	for _, r := range rows {
		ids[r.SessionID] = true
	}
	ck.sessions.each(func(id string, st *sessionState) {
		st.ckptMu.Lock()
		if len(st.lazy) > 0 {
			ids[id] = true
		}
		st.ckptMu.Unlock()
	})
	// One session whose checkpoints cannot be built (a bad row) keeps
	// neither the others' from the repository nor the server from
	// starting: its error is logged, and returned with the others'.
	var errs []error
	for id := range ids {
		s, err := store.GetSession(ctx, ck.DB.Q(), id)
		if err == nil {
			err = ck.materializeSession(ctx, s)
		}
		if err != nil {
			ck.Log.Error("build checkpoints", "session", id, "err", err)
			errs = append(errs, fmt.Errorf("session %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}
