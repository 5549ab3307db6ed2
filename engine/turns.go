package engine

import (
	"context"
	"fmt"
	"os"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// Turn marks the start of a turn: an automatic checkpoint of the worktree as
// it is, described by the prompt. With automatic checkpoints off (for the
// session or by configuration) the turn is only counted, and the answer is
// nil.
func (e *Engine) Turn(ctx context.Context, sessionID string, req api.TurnRequest) (*prsm.Checkpoint, error) {
	s, st, unlock, err := e.lockBetweenTurns(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	// Adapters that cannot count prompts leave message_index out: the
	// server counts turns.
	if req.MessageIndex <= 0 {
		req.MessageIndex = st.turn + 1
	}
	if req.MessageIndex > st.turn {
		st.turn = req.MessageIndex
	}
	on, err := e.autoCheckpointsOn(ctx, s, st)
	if err != nil {
		return nil, err
	}
	if !on {
		return nil, nil // the turn is counted; automatic checkpoints are off
	}
	desc := fmt.Sprintf("turn %d", req.MessageIndex)
	if p := short(req.Prompt, 60); p != "" {
		desc += ": " + p
	}
	return e.checkpoint(ctx, s, st, prsm.CheckpointAuto, desc, "", req.MessageIndex, "")
}

// EndTurn is the end of an agent's turn (Claude Code's Stop event). No
// tool of the turn runs any more: a call still in flight lost its
// PostToolUse (its tool was denied) and is closed now, not at the next
// prompt, so it no longer holds up a rewind or the watcher's records.
// What changed in the worktree that no tool call claimed is recorded at
// once, as a Watch call: the turn ends settled. The records made are
// returned.
func (e *Engine) EndTurn(ctx context.Context, sessionID string) ([]*prsm.Record, error) {
	s, st, unlock, err := e.lockBetweenTurns(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := os.Stat(s.WorktreePath); err != nil {
		return nil, nil // reconcile deals with a worktree gone
	}
	return e.watchRecord(ctx, s, st)
}

// lockBetweenTurns locks an active session at a turn's start or end, when
// none of the agent's tools runs: every tool call still open lost its
// PostToolUse and is closed.
func (e *Engine) lockBetweenTurns(ctx context.Context, sessionID string) (*prsm.Session, *sessionState, func(), error) {
	s, st, unlock, err := e.lockActive(ctx, sessionID)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := e.closeDangling(ctx, s, st, 0); err != nil {
		unlock()
		return nil, nil, nil, err
	}
	return s, st, unlock, nil
}
