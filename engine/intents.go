package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/store"
)

// Kinds of intents: each names the engine step to run again, for one
// record, when a crash cut it off. Every step is idempotent (3-way merges
// that find the result already in place write nothing), so finishing means
// running it once more.
const (
	intentSync   = "sync"   // apply a new record to the workspace (auto mode)
	intentAccept = "accept" // accept a record (review mode: apply it)
	intentRevert = "revert" // take a record's delta out of worktree and workspace
)

type intentPayload struct {
	Record string `json:"record"`
}

// intend writes down, before it starts, that r is about to go through kind.
func (e *Engine) intend(ctx context.Context, kind string, r *prsm.Record) (int64, error) {
	b, _ := json.Marshal(intentPayload{Record: r.ID})
	return store.AddIntent(ctx, e.DB.Q(), r.SessionID, kind, b)
}

// RecoverIntents finishes every operation a crash cut off (SPEC rule 6). It
// runs at start, before anything else touches the workspace.
func (e *Engine) RecoverIntents(ctx context.Context) (int, error) {
	open, err := store.OpenIntents(ctx, e.DB.Q())
	if err != nil {
		return 0, err
	}
	done := 0
	for _, in := range open {
		if err := e.recoverIntent(ctx, in); err != nil {
			e.Log.Error("finish interrupted operation", "kind", in.Kind, "session", in.SessionID, "err", err)
			continue
		}
		if err := store.DoneIntent(ctx, e.DB.Q(), in.ID); err != nil {
			return done, err
		}
		done++
	}
	if done > 0 {
		e.Log.Info("finished operations interrupted by a crash", "count", done)
	}
	return done, nil
}

func (e *Engine) recoverIntent(ctx context.Context, in store.Intent) error {
	var p intentPayload
	if err := json.Unmarshal(in.Payload, &p); err != nil {
		return fmt.Errorf("intent %d: %w", in.ID, err)
	}
	s, st, unlock, err := e.lockSession(ctx, in.SessionID)
	if errors.Is(err, prsm.ErrNotFound) {
		return nil // the session is gone: nothing left to finish
	}
	if err != nil {
		return err
	}
	defer unlock()
	r, err := store.GetRecord(ctx, e.DB.Q(), s.ID, p.Record)
	if errors.Is(err, prsm.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	switch in.Kind {
	case intentSync:
		if r.Status == prsm.StatusRejected {
			return nil
		}
		before, after, err := e.versions(ctx, r)
		if err != nil {
			return err
		}
		state, err := e.syncToWorkspace(ctx, s, r.RelPath, before, after)
		if err != nil {
			return err
		}
		return e.setState(ctx, r, r.Status, state)
	case intentAccept:
		_, err := e.accept(ctx, s, r)
		return err
	case intentRevert:
		if r.Status == prsm.StatusRejected {
			return nil
		}
		return e.revert(ctx, s, st, r)
	}
	return fmt.Errorf("intent %d: unknown kind %q", in.ID, in.Kind)
}
