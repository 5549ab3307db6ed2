package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents/agent"
)

// Serve handles one Claude Code hook event, as its http hooks POST
// it, inside the server of the workspace at workspace whose state is in
// projectDir; srv is that server's engine, called in process. It means
// what `prsm hook claude` means: the session is the one whose worktree
// holds the event's cwd (an event outside every session, or of a session
// that is gone or ended, does nothing), the event maps onto the same call,
// and a file tool's workspace path is moved onto the worktree. answer is
// what Claude Code reads (Claude's hookSpecificOutput, or {} for none);
// when it moves a path, it is returned even if the call failed (err), as
// the write must not escape to the workspace. With only set (the session
// a hook token authorizes), an event of any other session is refused
// with agent.ErrOtherSession, before anything is answered or sent.
func Serve(ctx context.Context, body []byte, projectDir, workspace, only string, srv agent.Server) (answer []byte, err error) {
	p, err := readClaudePayload(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", agent.ErrBadEvent, err)
	}
	// A write aimed at the workspace goes to the worktree, and the
	// capture names the moved path, as in the command hook.
	answer = []byte("{}")
	t := agent.SessionIn(projectDir, p.Cwd)
	if only != "" && t != nil && t.SessionID != only {
		return nil, fmt.Errorf("%w: the event's cwd is in session %s's worktree, and this token is session %s's", agent.ErrOtherSession, t.SessionID, only)
	}
	if t != nil && claudeMayMove(p) {
		if a := claudeMoveInto(p, t.Worktree, []string{workspace}); a != nil {
			if answer, err = json.Marshal(a); err != nil {
				return nil, err
			}
		}
	}
	call, err := p.call()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", agent.ErrBadEvent, err)
	}
	if t == nil {
		return []byte("{}"), nil
	}
	if call == nil {
		return answer, nil
	}
	err = agent.Deliver(ctx, srv, t.SessionID, call)
	// What the call heard of the review goes into the answer; srv
	// confirms it once the answer is written.
	if heard, ferr := (Agent{}).Feedback().With(p.HookEventName, call, answer); ferr == nil {
		answer = heard
	}
	var pe *prsm.Error
	if errors.As(err, &pe) && (pe.Code == "session_not_found" || pe.Code == "session_ended") {
		err = nil
	}
	if err != nil {
		what := p.HookEventName
		if call.ToolCallID != "" {
			what += " " + call.ToolCallID
		}
		err = fmt.Errorf("%s: %w", what, err)
	}
	return answer, err
}
