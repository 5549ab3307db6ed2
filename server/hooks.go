package server

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/feedback"
	"github.com/prsm-dev/prsm/hook"
)

// agentHook is POST /hooks/{agent}: an agent's own hook event, as its
// http hooks send it (Claude Code's `"type": "http"`, and Copilot CLI's,
// whose URL names the event: /hooks/copilot?event=preToolUse). The
// mapping is the command hook's (package hook); the engine is called in
// process. The answer is what the agent reads: Claude's
// hookSpecificOutput, or {}. Claude Code goes on whatever the status, so
// a failed call is only an error status (and logged); Copilot may read a
// failed preToolUse hook as a deny, so its failed call is logged and
// answered {}, as its command hook exits 0. An event that cannot be read
// (for Copilot, one whose URL names no event) is 400, and one of another
// session than a hook token's is 403.
func (s *Server) agentHook(c echo.Context) error {
	agentName := c.Param("agent")
	if agentName != "claude" && agentName != "copilot" {
		return apiError(api.CodeUnknownAgent, "no http hooks for agent %q; prsm serves them for claude and copilot", agentName)
	}
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	only, _ := c.Get(hookSessionKey).(string) // set for a hook token
	ctx := c.Request().Context()
	var ans []byte
	eh := &engineHooks{eng: s.eng, fb: s.fb}
	if agentName == "copilot" {
		ans, err = hook.ServeCopilot(ctx, c.QueryParam("event"), body, s.eng.ProjectDir, s.eng.Repo.Root, only, eh)
	} else {
		ans, err = hook.ServeClaude(ctx, body, s.eng.ProjectDir, s.eng.Repo.Root, only, eh)
	}
	if errors.Is(err, hook.ErrBadEvent) {
		return apiError(api.CodeBadHookEvent, "%v", err)
	}
	if errors.Is(err, hook.ErrOtherSession) {
		return apiError(api.CodeHookTokenScope, "%v", err)
	}
	if err != nil {
		if agentName != "copilot" && (ans == nil || string(ans) == "{}") {
			return err
		}
		// Claude's answer moves a write into the worktree: it must
		// reach Claude, or the write lands in the workspace unrecorded.
		// Copilot's {} lets the tool run.
		s.log.Warn(agentName+" http hook", "err", err)
		if ans == nil {
			ans = []byte("{}")
		}
	}
	return notes{s}.answerHook(c, ans, eh)
}

// answerHook writes an http hook's answer, and then, once it is out,
// marks the feedback it carries delivered; an answer that did not get
// out leaves it delivering, to be handed out once more
// (feedback.Staleness).
func (s notes) answerHook(c echo.Context, ans []byte, eh *engineHooks) error {
	if err := c.JSONBlob(http.StatusOK, ans); err != nil || eh.sessionID == "" {
		return err
	}
	if err := http.NewResponseController(c.Response().Writer).Flush(); err != nil {
		s.log.Warn("hook answer with feedback not sent", "session", eh.sessionID, "err", err)
		return nil
	}
	if err := s.fb.Confirm(context.WithoutCancel(c.Request().Context()), eh.sessionID, eh.taken); err != nil {
		s.log.Warn("feedback not confirmed", "session", eh.sessionID, "err", err)
	}
	return nil
}

// engineHooks is the engine, and the feedback queue, as the hook
// adapters' Server. What an event's answer carries of the queue is
// taken here and confirmed by answerHook once the answer is written.
type engineHooks struct {
	eng       *engine.Engine
	fb        *feedback.Queue
	sessionID string
	taken     []int64
}

// TakeFeedback hands out the session's feedback, to be confirmed by
// answerHook.
func (e *engineHooks) TakeFeedback(ctx context.Context, sessionID string, req api.TakeFeedbackRequest) (*api.Delivery, error) {
	d, err := e.fb.Take(ctx, sessionID, req)
	if err == nil && len(d.IDs) > 0 {
		e.sessionID, e.taken = sessionID, append(e.taken, d.IDs...)
	}
	return d, err
}

// ConfirmFeedback does nothing: answerHook confirms once the answer is
// out.
func (e *engineHooks) ConfirmFeedback(context.Context, string, []int64) error { return nil }

func (e *engineHooks) StartToolCall(ctx context.Context, sessionID string, req api.ToolCallRequest) error {
	_, err := e.eng.StartToolCall(ctx, sessionID, req)
	return err
}

// CompleteToolCall answers before the records are made: the agent does not
// read them, and its wait is what prsm costs it.
func (e *engineHooks) CompleteToolCall(ctx context.Context, sessionID, toolCallID string, req api.CompleteRequest) error {
	return e.eng.CompleteToolCallLater(ctx, sessionID, toolCallID, req)
}

func (e *engineHooks) Turn(ctx context.Context, sessionID string, req api.TurnRequest) error {
	_, err := e.eng.Turn(ctx, sessionID, req)
	return err
}

func (e *engineHooks) EndTurn(ctx context.Context, sessionID string) error {
	_, err := e.eng.EndTurn(ctx, sessionID)
	return err
}
