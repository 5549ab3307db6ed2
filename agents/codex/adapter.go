package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents/agent"
	"github.com/prsm-dev/prsm/api"
)

// codexPayload is the part of a Codex hook event prsm uses (verified on
// Codex 0.169.0); other fields are ignored. tool_response is a string
// (a shell call's output, a patch's summary), passed on as it comes.
type codexPayload struct {
	SessionID     string          `json:"session_id"`
	TurnID        string          `json:"turn_id"`
	Cwd           string          `json:"cwd"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolUseID     string          `json:"tool_use_id"`
	ToolInput     json.RawMessage `json:"tool_input"`
	ToolResponse  json.RawMessage `json:"tool_response"` // PostToolUse
	Prompt        string          `json:"prompt"`        // UserPromptSubmit
}

// readCodexPayload reads and decodes one Codex hook event.
func readCodexPayload(in io.Reader) (*codexPayload, error) {
	return agent.DecodeEvent(in, func(p *codexPayload) string { return p.HookEventName })
}

// call maps a Codex event to its server call; nil means the event needs
// none (SessionStart, PermissionRequest, the compaction and subagent
// events, and any event prsm does not know).
func (p *codexPayload) call() (*agent.Call, error) {
	switch p.HookEventName {
	case "PreToolUse", "PostToolUse":
	case "UserPromptSubmit":
		return &agent.Call{Kind: agent.CallTurn, Turn: api.TurnRequest{Prompt: p.Prompt}}, nil
	case "Stop":
		return &agent.Call{Kind: agent.CallTurnEnd}, nil
	default:
		return nil, nil
	}
	if strings.TrimSpace(p.ToolName) == "" {
		return nil, fmt.Errorf("malformed %s event: no tool_name", p.HookEventName)
	}
	// Canonical already here, so that the records' tool name does not
	// depend on the server's table: Bash stays Bash, apply_patch is Edit
	// (prsm.CanonicalToolName says why).
	id, name := p.toolCallID(), prsm.CanonicalToolName(p.ToolName)
	if p.HookEventName == "PreToolUse" {
		return &agent.Call{Kind: agent.CallStart, ToolCallID: id, Start: api.ToolCallRequest{
			ToolCallID: id, ToolName: name, Args: p.ToolInput, AgentID: "codex", Cwd: p.Cwd,
		}}, nil
	}
	return &agent.Call{Kind: agent.CallComplete, ToolCallID: id, Complete: api.CompleteRequest{
		Result: p.ToolResponse, ToolName: name, Args: p.ToolInput, AgentID: "codex", Cwd: p.Cwd,
	}}, nil
}

// toolCallID is tool_use_id, the model's call_id, which Codex sends alike
// in PreToolUse and PostToolUse. Without one (or with one the server
// would refuse) it is derived from what both events carry: the session,
// the turn, the tool and its input.
func (p *codexPayload) toolCallID() string {
	return agent.DerivedCallID("codex", p.ToolUseID, p.ToolInput, p.SessionID, p.TurnID, strings.TrimSpace(p.ToolName))
}

// handle is the adapter: it handles one Codex hook event.
func handle(ctx context.Context, h *agent.Host, in io.Reader) error {
	p, err := readCodexPayload(in)
	if err != nil {
		return err
	}
	call, err := p.call()
	if err != nil || call == nil {
		return err
	}
	return h.SendHearing(ctx, Agent{}.Feedback(), "codex", p.Cwd, call, p.HookEventName)
}
