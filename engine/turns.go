package engine

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
)

// Turn is Engine.Turn's work.
func (cr *capturer) Turn(ctx context.Context, sessionID string, req api.TurnRequest) (*prsm.Checkpoint, error) {
	s, st, unlock, err := cr.lockBetweenTurns(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cr.health.hookTurn(s.ID, true)
	// What changed since the last look was written before this turn (a
	// command's flush that failed, a watcher's record that waits for a
	// busy store): it is recorded now, as the turn before's.
	if _, err := os.Stat(s.WorktreePath); err == nil {
		if err := cr.watch.settleUnclaimed(ctx, s, st); err != nil {
			return nil, err
		}
	}
	on, err := cr.ckpt.autoCheckpointsOn(ctx, s, st)
	if err != nil {
		return nil, err
	}
	if on {
		if c, err := cr.retakeTurn(ctx, s, st, req); c != nil || err != nil {
			return c, err
		}
	}
	// Adapters that cannot count prompts leave message_index out: the
	// server counts turns.
	if req.MessageIndex <= 0 {
		req.MessageIndex = st.turn + 1
	}
	if req.MessageIndex > st.turn {
		st.turn = req.MessageIndex
	}
	// The prompt, whole, for blame and prsm commit's messages.
	if err := store.PutTurn(ctx, cr.DB.Q(), s.ID, req.MessageIndex, req.Prompt, time.Now()); err != nil {
		return nil, err
	}
	if !on {
		return nil, nil // the turn is counted; automatic checkpoints are off
	}
	c, err := cr.ckpt.checkpoint(ctx, s, st, prsm.CheckpointAuto, turnName(req), "", req.MessageIndex, "")
	if err == nil {
		st.lastTurn = c
	}
	return c, err
}

// turnName is the name of a turn's checkpoint.
func turnName(req api.TurnRequest) string {
	desc := fmt.Sprintf("turn %d", req.MessageIndex)
	if p := short(req.Prompt, 60); p != "" {
		desc += ": " + p
	}
	return desc
}

// retakeTurn gives the turn req the checkpoint of the turn before, when
// that is still the session's newest checkpoint, nothing was recorded
// or decided since, the worktree is as it was then, and the user did not annotate it:
// `prsm run -- claude` starts a turn for the run, and Claude Code's hook
// one for the prompt a moment later, on the same tree. The checkpoint is
// renamed after the newer prompt; the empty turn is not counted again (the
// turn keeps its number unless the adapter gives one). nil means req
// needs a checkpoint of its own. The caller holds the session's lock.
func (cr *capturer) retakeTurn(ctx context.Context, s *prsm.Session, st *sessionState, req api.TurnRequest) (*prsm.Checkpoint, error) {
	last := st.lastTurn
	if last == nil {
		return nil, nil
	}
	c, err := store.GetCheckpoint(ctx, cr.DB.Q(), s.ID, last.ID)
	if err != nil || c.Annotation != "" {
		return nil, nil // gone, or the user's now: a new one
	}
	later, err := store.ListRecords(ctx, cr.DB.Q(), store.RecordFilter{SessionID: s.ID, AfterSeq: c.RecordSeq})
	if err != nil || len(later) > 0 {
		return nil, err
	}
	// A decision since (an accept between the turns) makes the review
	// state another one, which a rewind to this turn gives back.
	if since, err := store.StatesAt(ctx, cr.DB.Q(), s.ID, c.DecisionSeq); err != nil || len(since) > 0 {
		return nil, err
	}
	ts, err := cr.ckpt.stateTree(ctx, s, st)
	if err != nil || ts.tree != c.Tree {
		return nil, err
	}
	if req.MessageIndex <= 0 {
		req.MessageIndex = c.MessageIndex
	}
	st.turn = max(st.turn, req.MessageIndex)
	name := turnName(req)
	if err := store.RenameCheckpoint(ctx, cr.DB.Q(), s.ID, c.ID, name, req.MessageIndex); err != nil {
		return nil, err
	}
	c.Name, c.MessageIndex = name, req.MessageIndex
	st.lastTurn = c
	ev := *c
	cr.Events.Publish(api.EventCheckpoint, &ev)
	return c, nil
}

// EndTurn is Engine.EndTurn's work.
func (cr *capturer) EndTurn(ctx context.Context, sessionID string) ([]*prsm.Record, error) {
	s, st, unlock, err := cr.lockBetweenTurns(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cr.health.hookTurn(s.ID, false)
	if _, err := os.Stat(s.WorktreePath); err != nil {
		return nil, nil // reconcile deals with a worktree gone
	}
	return cr.watch.watchRecord(ctx, s, st, 0)
}

// lockBetweenTurns locks an active session at a turn's start or end, when
// none of the agent's tools runs: every tool call still open lost its
// PostToolUse and is closed.
func (cr *capturer) lockBetweenTurns(ctx context.Context, sessionID string) (*prsm.Session, *sessionState, func(), error) {
	s, st, unlock, err := cr.sessions.lockActive(ctx, sessionID)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := cr.closeDangling(ctx, s, st, 0); err != nil {
		unlock()
		return nil, nil, nil, err
	}
	return s, st, unlock, nil
}
