package server

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/hook"
)

// agentHook is POST /hooks/{agent}: an agent's own hook event, as its
// http hooks send it (Claude Code's `"type": "http"`). The mapping is the
// command hook's (package hook); the engine is called in process. The
// answer is what the agent reads: Claude's hookSpecificOutput, or {}.
// Claude Code goes on whatever the status, so a failed call is only an
// error status (and logged); an event that cannot be read is 400, and
// one of another session than a hook token's is 403.
func (s *Server) agentHook(c echo.Context) error {
	if c.Param("agent") != "claude" {
		return apiError(api.CodeUnknownAgent, "no http hooks for agent %q; prsm serves them for claude", c.Param("agent"))
	}
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	only, _ := c.Get(hookSessionKey).(string) // set for a hook token
	ans, err := hook.ServeClaude(c.Request().Context(), body, s.eng.ProjectDir, s.eng.Repo.Root, only, engineHooks{s.eng})
	if errors.Is(err, hook.ErrBadEvent) {
		return apiError(api.CodeBadHookEvent, "%v", err)
	}
	if errors.Is(err, hook.ErrOtherSession) {
		return apiError(api.CodeHookTokenScope, "%v", err)
	}
	if err != nil {
		if ans == nil || string(ans) == "{}" {
			return err
		}
		// The answer moves a write into the worktree: it must reach
		// Claude, or the write lands in the workspace unrecorded.
		s.log.Warn("claude http hook", "err", err)
	}
	return c.JSONBlob(http.StatusOK, ans)
}

// engineHooks is the engine as the hook adapters' Server.
type engineHooks struct{ eng *engine.Engine }

func (e engineHooks) StartToolCall(ctx context.Context, sessionID string, req api.ToolCallRequest) error {
	_, err := e.eng.StartToolCall(ctx, sessionID, req)
	return err
}

// CompleteToolCall answers before the records are made: the agent does not
// read them, and its wait is what prsm costs it.
func (e engineHooks) CompleteToolCall(ctx context.Context, sessionID, toolCallID string, req api.CompleteRequest) error {
	return e.eng.CompleteToolCallLater(ctx, sessionID, toolCallID, req)
}

func (e engineHooks) Turn(ctx context.Context, sessionID string, req api.TurnRequest) error {
	_, err := e.eng.Turn(ctx, sessionID, req)
	return err
}

func (e engineHooks) EndTurn(ctx context.Context, sessionID string) error {
	_, err := e.eng.EndTurn(ctx, sessionID)
	return err
}
