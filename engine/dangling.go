package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/store"
)

// maxToolCall is how long a tool call may run: Claude Code's longest
// Bash timeout. A call in flight for longer lost its PostToolUse.
const maxToolCall = 10 * time.Minute

// closeDangling closes the session's tool calls in flight for longer than
// age (every one, for 0: a new prompt comes once the agent's tools are
// done). Such a call sends no PostToolUse: its tool was denied, or its
// agent died. It is stored complete, with no records: it no longer holds
// up Watch records, rewinds, or the next calls' claims, and what its
// tool may have changed is recorded like any unclaimed change.
func (cr *capturer) closeDangling(ctx context.Context, s *prsm.Session, st *sessionState, age time.Duration) error {
	now := time.Now().UTC()
	closed := 0
	closeOne := func(id, tool string) error {
		if err := store.CompleteToolCall(ctx, cr.DB.Q(), s.ID, id, []byte(`{"prsm":"closed: no PostToolUse came"}`), now); err != nil {
			return err
		}
		closed++
		cr.Log.Warn("tool call closed: it never completed", "session", s.ID, "tool_call", id, "tool", tool)
		return nil
	}
	if age == 0 {
		// Between turns no tool runs: a patch still open (it failed, or
		// Codex applied it from the shell) takes the files its text names.
		if err := cr.closeOpenPatches(ctx, s, st); err != nil {
			return err
		}
	}
	for id, c := range st.inflight {
		if now.Sub(c.tc.StartedAt) < age {
			continue
		}
		if c.early != nil {
			cr.endEarly(st, c.early)
		}
		if err := closeOne(id, c.tc.ToolName); err != nil {
			return err
		}
		delete(st.inflight, id)
	}
	if age == 0 && !st.openChecked {
		// Calls captured before a restart are in the store only.
		open, err := store.OpenToolCalls(ctx, cr.DB.Q(), s.ID)
		if err != nil {
			return err
		}
		for id := range open {
			if st.inflight[id] == nil {
				if err := closeOne(id, ""); err != nil {
					return err
				}
			}
		}
		st.openChecked = true
	}
	if closed > 0 && cr.Watcher != nil {
		// What they changed is nobody's: a Watch record, once quiet.
		// (Without a watcher, the periodic scan or the next look finds
		// it.)
		cr.watch.changed(s.ID)
	}
	return nil
}

// crashedResult is the result stored for a tool call closed at start.
var crashedResult = []byte(`{"prsm":"closed at start: the server stopped before the call's PostToolUse came"}`)

// closeCrashed closes the session's tool calls that an earlier run of
// the server captured and never completed: it was killed while their
// tools ran, or before their completes came. Left open, each would stop
// rewinds as a call in flight for maxToolCall. Each is completed as
// its complete would have been, from its capture's snapshot, and what
// changed is recorded under its own id; the calls share the changes as
// calls running together do (claim). The look is a full scan: a watcher
// started now saw nothing of what changed before. An agent whose
// PostToolUse comes later gets these records (a repeated complete);
// what its tool changes after this start is recorded like any unclaimed
// change. The caller holds the session's lock, at start, before any
// call of this run is captured. A syncError means the calls are closed
// and recorded, and the workspace is behind, as their records say.
func (cr *capturer) closeCrashed(ctx context.Context, s *prsm.Session, st *sessionState) ([]*prsm.Record, error) {
	open, err := store.OpenToolCalls(ctx, cr.DB.Q(), s.ID)
	if err != nil || len(open) == 0 {
		return nil, err
	}
	var calls []*inflightCall
	for id := range open {
		if st.inflight[id] != nil {
			continue // captured by this run: in flight
		}
		tc, err := store.GetToolCall(ctx, cr.DB.Q(), s.ID, id)
		if err != nil {
			return nil, err
		}
		c := &inflightCall{tc: tc, rel: cr.argPath(s, tc.Args, tc.Cwd)}
		if tc.ToolName == "Bash" {
			c.targets = cr.bashPaths(s, tc.Args, tc.Cwd)
		}
		if c.patch, c.patchCall = cr.patchCall(s, tc.ToolName, tc.Args, tc.Cwd); c.patchCall && tc.ToolName == "Bash" {
			c.targets = dedupe(append(c.targets, c.patch...))
		}
		calls = append(calls, c)
	}
	byStart(calls)
	// In flight together while they close, so that each claims only its
	// own changes; none is left in flight whatever happens.
	for _, c := range calls {
		st.inflight[c.tc.ID] = c
	}
	defer func() {
		for _, c := range calls {
			delete(st.inflight, c.tc.ID)
		}
	}()
	var all []*prsm.Record
	var behind error
	for _, c := range calls {
		recs, finish, err := cr.detectAndRecord(ctx, s, st, c.tc, c, crashedResult, true)
		finish()
		delete(st.inflight, c.tc.ID)
		if se := (*syncError)(nil); errors.As(err, &se) {
			behind = err // recorded; the workspace is behind
		} else if err != nil {
			return all, fmt.Errorf("close tool call %s: %w", c.tc.ID, err)
		}
		cr.Log.Warn("tool call closed at start: the server stopped while it ran", "session", s.ID,
			"tool_call", c.tc.ID, "tool", c.tc.ToolName, "records", len(recs))
		all = append(all, recs...)
	}
	st.openChecked = true
	return all, behind
}

// inFlight reports a tool call of the session that started and has not
// completed (within the last ten minutes: an agent that died mid-call must
// not block rewinds forever).
func (cr *capturer) inFlight(ctx context.Context, sessionID string) (string, error) {
	open, err := store.OpenToolCalls(ctx, cr.DB.Q(), sessionID)
	if err != nil {
		return "", err
	}
	ids := make([]string, 0, len(open))
	for id, started := range open {
		if time.Since(started) < maxToolCall {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return "", nil
	}
	sort.Strings(ids)
	return ids[0], nil
}
