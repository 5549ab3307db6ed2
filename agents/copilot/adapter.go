package copilot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents/agent"
	"github.com/prsm-dev/prsm/agents/claude"
	"github.com/prsm-dev/prsm/api"
)

// GitHub Copilot CLI sends two shapes of hook event. Its own, camelCase
// events (preToolUse, postToolUse, userPromptSubmitted, agentStop) carry
// sessionId, timestamp, cwd, toolName and toolArgs (postToolUse adds
// toolResult) and no tool call id. The PascalCase ones (PreToolUse, ...),
// which it fires for hooks it reads from Claude Code's settings, are Claude
// Code's payloads with Claude's tool names: the Claude mapping takes them.
// Checked on the real Copilot CLI 1.0.102, run offline in its BYOK mode
// (TestRealAgentCopilot): toolArgs is an object, agentStop carries
// stopReason, and no payload names its event or a tool call id.

// copilotPayload is a Copilot CLI event: camelCase fields, or (with
// hook_event_name) a Claude-shaped one.
type copilotPayload struct {
	HookEventName string          `json:"hook_event_name"` // PascalCase (Claude-shaped) events only
	Event         string          `json:"hookEventName"`   // set by some versions on camelCase events
	SessionID     string          `json:"sessionId"`
	Cwd           string          `json:"cwd"`
	ToolName      string          `json:"toolName"`
	ToolArgs      json.RawMessage `json:"toolArgs"`   // an object, or a JSON string holding one
	ToolResult    json.RawMessage `json:"toolResult"` // postToolUse
	Error         json.RawMessage `json:"error"`      // postToolUseFailure
	Prompt        string          `json:"prompt"`     // userPromptSubmitted
}

// handle is the adapter: it handles one Copilot CLI hook event. Every failure is one line
// on stderr and exit 0: Copilot reads a failed preToolUse hook as a deny.
func handle(ctx context.Context, h *agent.Host, in io.Reader) error {
	if err := copilotEvent(ctx, h, in); err != nil {
		fmt.Fprintln(h.Stderr, agent.OneLine("prsm hook copilot: "+err.Error()))
	}
	return nil
}

func copilotEvent(ctx context.Context, h *agent.Host, in io.Reader) error {
	data, err := agent.ReadEvent(in)
	if err != nil {
		return err
	}
	var p copilotPayload
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("malformed Copilot hook event (want one JSON object): %v", err)
	}
	if p.HookEventName != "" {
		// Claude Code's shape and names.
		call, cwd, event, err := claude.Translate(data, p.HookEventName, "copilot")
		if err != nil || call == nil {
			return err
		}
		return h.Send(ctx, cwd, call, event)
	}
	event := p.event(h.Getenv)
	// Calls are numbered in a state file of the Copilot session, in the
	// prsm session's project: outside every session nothing is sent.
	t, err := h.Locate(ctx, p.Cwd)
	if err != nil || t == nil {
		return err
	}
	dir := filepath.Join(t.ProjectDir, "hooks")
	call, err := p.call(event, dir)
	if err != nil || call == nil {
		return err
	}
	if call.Kind == agent.CallTurnEnd {
		if state := agent.CallStatePath(dir, "copilot", p.SessionID); event == "sessionEnd" {
			os.Remove(state)
		} else {
			agent.ForgetOpen(state)
		}
	}
	return h.SendHearing(ctx, Agent{}.Feedback(), "copilot", p.Cwd, call, event)
}

// CopilotEventEnv names the event a hook runs for: `prsm hooks install
// copilot` sets it in each hook's env, as Copilot's camelCase payloads do
// not name their event.
const CopilotEventEnv = "PRSM_COPILOT_EVENT"

// event names a camelCase event: $PRSM_COPILOT_EVENT, else a name in the
// payload, else what its fields say (toolResult only after a tool,
// toolName before it, prompt at a prompt). "" is an event prsm cannot
// tell, and ignores.
func (p *copilotPayload) event(getenv func(string) string) string {
	switch {
	case getenv(CopilotEventEnv) != "":
		return getenv(CopilotEventEnv)
	case p.Event != "":
		return p.Event
	case len(p.ToolResult) > 0:
		return "postToolUse"
	case len(p.Error) > 0 && p.ToolName != "":
		return "postToolUseFailure"
	case p.ToolName != "":
		return "preToolUse"
	case p.Prompt != "":
		return "userPromptSubmitted"
	}
	return ""
}

// call maps a camelCase event to its server call; nil means none. dir
// holds the state file that numbers the Copilot session's calls.
func (p *copilotPayload) call(event, dir string) (*agent.Call, error) {
	switch event {
	case "userPromptSubmitted":
		return &agent.Call{Kind: agent.CallTurn, Turn: api.TurnRequest{Prompt: p.Prompt}}, nil
	case "agentStop", "sessionEnd":
		return &agent.Call{Kind: agent.CallTurnEnd}, nil
	case "preToolUse", "postToolUse", "postToolUseFailure":
	default:
		return nil, nil
	}
	if strings.TrimSpace(p.ToolName) == "" {
		return nil, fmt.Errorf("malformed %s event: no toolName", event)
	}
	args, err := p.args()
	if err != nil {
		return nil, fmt.Errorf("malformed %s event: %v", event, err)
	}
	phase := agent.PhaseAfter
	if event == "preToolUse" {
		phase = agent.PhaseBefore
	}
	id := agent.NumberedCallID(dir, "copilot", p.SessionID, p.ToolName, args, phase)
	name := prsm.CanonicalToolName(p.ToolName)
	if event == "preToolUse" {
		return &agent.Call{Kind: agent.CallStart, ToolCallID: id, Start: api.ToolCallRequest{
			ToolCallID: id, ToolName: name, Args: args, AgentID: "copilot", Cwd: p.Cwd,
		}}, nil
	}
	result := p.ToolResult
	if event == "postToolUseFailure" {
		b, err := json.Marshal(map[string]json.RawMessage{"error": p.Error})
		if err != nil || len(p.Error) == 0 {
			b = json.RawMessage(`{"error":null}`)
		}
		result = b
	}
	return &agent.Call{Kind: agent.CallComplete, ToolCallID: id, Complete: api.CompleteRequest{
		Result: result, ToolName: name, Args: args, AgentID: "copilot", Cwd: p.Cwd,
	}}, nil
}

// args is toolArgs as a JSON value: the documentation shows it both as an
// object and as a string holding the object's JSON.
func (p *copilotPayload) args() (json.RawMessage, error) {
	if len(p.ToolArgs) == 0 || string(p.ToolArgs) == "null" {
		return json.RawMessage("{}"), nil
	}
	var s string
	if json.Unmarshal(p.ToolArgs, &s) != nil {
		return p.ToolArgs, nil
	}
	if !json.Valid([]byte(s)) {
		return nil, errors.New("toolArgs is a string that is not JSON")
	}
	return json.RawMessage(s), nil
}
