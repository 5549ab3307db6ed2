package copilot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents/agent"
	"github.com/prsm-dev/prsm/agents/claude"
)

// Serve handles one Copilot CLI hook event, as the http hooks of prsm
// run's plugin POST it, inside the server of the workspace at workspace
// whose state is in projectDir; srv is that server's engine, called in
// process. event is the event's name, which the hook's URL carries
// (?event=preToolUse): Copilot's payloads do not name it, as the command
// hooks' $PRSM_COPILOT_EVENT makes up for. It means what `prsm hook
// copilot` means: the session is the one whose worktree holds the event's
// cwd (an event outside every session, or of a session that is gone or
// ended, does nothing), and calls are numbered in the same state file.
// The answer is {} (prsm allows every tool), with the review's
// feedback when the event carries it (Feedback). With only set (the
// session a hook token authorizes), an event of any other session is
// refused with agent.ErrOtherSession before anything is sent.
// Claude-shaped events (hook_event_name) are claude.Serve's.
func Serve(ctx context.Context, event string, body []byte, projectDir, workspace, only string, srv agent.Server) ([]byte, error) {
	var p copilotPayload
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("%w: malformed Copilot hook event (want one JSON object): %v", agent.ErrBadEvent, err)
	}
	if p.HookEventName != "" {
		return claude.Serve(ctx, body, projectDir, workspace, only, srv)
	}
	if event == "" {
		return nil, fmt.Errorf("%w: the hook's URL names no event; Copilot's payloads do not carry it (POST /hooks/copilot?event=preToolUse)", agent.ErrBadEvent)
	}
	answer := []byte("{}")
	t := agent.SessionIn(projectDir, p.Cwd)
	if t == nil {
		return answer, nil
	}
	if only != "" && t.SessionID != only {
		return nil, fmt.Errorf("%w: the event's cwd is in session %s's worktree, and this token is session %s's", agent.ErrOtherSession, t.SessionID, only)
	}
	dir := filepath.Join(t.ProjectDir, "hooks")
	call, err := p.call(event, dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", agent.ErrBadEvent, err)
	}
	if call == nil {
		return answer, nil
	}
	if call.Kind == agent.CallTurnEnd {
		if state := agent.CallStatePath(dir, "copilot", p.SessionID); event == "sessionEnd" {
			os.Remove(state)
		} else {
			agent.ForgetOpen(state)
		}
	}
	fb := Agent{}.Feedback()
	call.Ask = fb.AskOf("copilot", event, call.ToolCallID)
	err = agent.Deliver(ctx, srv, t.SessionID, call)
	// What the call heard of the review goes into the answer; srv
	// confirms it once the answer is written.
	if heard, ferr := fb.With(event, call, answer); ferr == nil {
		answer = heard
	}
	var pe *prsm.Error
	if errors.As(err, &pe) && (pe.Code == "session_not_found" || pe.Code == "session_ended") {
		err = nil
	}
	if err != nil {
		what := event
		if call.ToolCallID != "" {
			what += " " + call.ToolCallID
		}
		err = fmt.Errorf("%s: %w", what, err)
	}
	return answer, err
}
