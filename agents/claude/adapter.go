package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/prsm-dev/prsm/agents/agent"
	"github.com/prsm-dev/prsm/api"
)

// claudePayload is the part of a Claude Code hook event prsm uses; other
// fields are ignored, and so are optional ones that are missing. Raw fields
// are passed on as they come: their shapes differ between versions.
type claudePayload struct {
	SessionID      string          `json:"session_id"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	PermissionMode string          `json:"permission_mode"`
	AgentID        string          `json:"agent_id"`   // only inside a subagent
	AgentType      string          `json:"agent_type"` // a subagent's (or a --agent session's) type
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	ToolResponse   json.RawMessage `json:"tool_response"` // PostToolUse
	Error          json.RawMessage `json:"error"`         // PostToolUseFailure
	IsInterrupt    json.RawMessage `json:"is_interrupt"`  // PostToolUseFailure
	Prompt         string          `json:"prompt"`        // UserPromptSubmit
	// BackgroundTasks (Stop, 2.1.328) lists the work still in flight:
	// background subagents and shells.
	BackgroundTasks json.RawMessage `json:"background_tasks"`
}

// readClaudePayload reads and decodes one Claude Code hook event.
func readClaudePayload(in io.Reader) (*claudePayload, error) {
	return agent.DecodeEvent(in, func(p *claudePayload) string { return p.HookEventName })
}

// call maps an event to its server call; nil means the event needs none
// (SessionStart, SessionEnd, Notification and any event prsm does not
// know). An event whose answer can carry the review's feedback asks for
// it (Call.Ask).
func (p *claudePayload) call() (*agent.Call, error) {
	c, err := p.serverCall()
	if c != nil {
		c.Ask = p.ask(c.ToolCallID)
	}
	return c, err
}

// serverCall is call without the feedback's ask.
func (p *claudePayload) serverCall() (*agent.Call, error) {
	switch p.HookEventName {
	case "PreToolUse", "PostToolUse", "PostToolUseFailure":
	case "UserPromptSubmit":
		if n, ok := parseTaskNotification(p.Prompt); ok {
			return n.call(p)
		}
		// message_index is left out: the server counts the turns.
		return &agent.Call{Kind: agent.CallTurn, Turn: api.TurnRequest{Prompt: p.Prompt}}, nil
	case "Stop":
		if p.backgroundRunning() {
			// The main agent stopped, but a background subagent or shell
			// still works: its open calls must stay open for what it
			// writes. The next turn or a Stop with nothing in flight
			// closes them (the task's notification is no turn).
			return nil, nil
		}
		// The turn is over: a tool call still open was denied.
		return &agent.Call{Kind: agent.CallTurnEnd}, nil
	default:
		return nil, nil
	}
	if strings.TrimSpace(p.ToolName) == "" {
		return nil, fmt.Errorf("malformed %s event: no tool_name", p.HookEventName)
	}
	id, who := p.toolCallID(), p.agentID()
	if p.HookEventName == "PreToolUse" {
		return &agent.Call{Kind: agent.CallStart, ToolCallID: id, Start: api.ToolCallRequest{
			ToolCallID: id, ToolName: p.ToolName, Args: p.ToolInput, AgentID: who, Cwd: p.Cwd,
		}}, nil
	}
	if p.HookEventName == "PostToolUse" && p.inBackground() {
		// A shell sent to the background answers as it starts; what it
		// writes later is its own. Its call stays open until the task's
		// notification (or the turn's end) completes it.
		return nil, nil
	}
	result := p.ToolResponse
	if p.HookEventName == "PostToolUseFailure" {
		failure := map[string]json.RawMessage{"error": p.Error, "is_interrupt": p.IsInterrupt}
		for k, v := range failure {
			if len(v) == 0 {
				delete(failure, k)
			}
		}
		b, err := json.Marshal(failure)
		if err != nil {
			return nil, err
		}
		result = b
	}
	// The tool's name, arguments and agent go along, so that a complete
	// whose pre-tool capture never arrived still makes a full record.
	return &agent.Call{Kind: agent.CallComplete, ToolCallID: id, Complete: api.CompleteRequest{
		Result: result, ToolName: p.ToolName, Args: p.ToolInput, AgentID: who, Cwd: p.Cwd,
	}}, nil
}

// toolCallID is tool_use_id, which pairs PreToolUse with PostToolUse. Old
// Claude Code versions do not send it; then the id is derived from what
// both events carry alike (session, tool name, tool input), so the pair
// still meets. Two identical calls in one session then share an id: the
// second is taken for a repeat of the first, and its changes are left to
// the watcher. An id the server would refuse is hashed the same way.
func (p *claudePayload) toolCallID() string {
	return agent.DerivedCallID("claude", p.ToolUseID, p.ToolInput, p.SessionID, strings.TrimSpace(p.ToolName))
}

// agentID is "claude", or "claude/<type>" inside a subagent: agent_id is
// sent only there, agent_type names the kind of subagent (and alone, a
// session started with --agent, which is still the main agent).
func (p *claudePayload) agentID() string {
	if p.AgentID == "" {
		return "claude"
	}
	name := p.AgentType
	if strings.TrimSpace(name) == "" {
		name = p.AgentID
	}
	return agent.Label("claude/"+strings.TrimSpace(name), 100)
}

// handle is the adapter: it handles one Claude Code hook event.
func handle(ctx context.Context, h *agent.Host, in io.Reader) error {
	p, err := readClaudePayload(in)
	if err != nil {
		return err
	}
	// A write aimed at the workspace goes to the worktree (the capture
	// names the moved path too); Claude Code reads the answer on exit 0,
	// so a failed send is only reported: the write must not escape.
	answer := claudeIntoWorktree(ctx, h, p)
	call, err := p.call()
	if err != nil || call == nil {
		return err
	}
	err = h.Send(ctx, p.Cwd, call, p.HookEventName)
	var out []byte
	if answer != nil {
		// The moved path must reach Claude Code: a failed send is only
		// reported.
		if err != nil {
			fmt.Fprintln(h.Stderr, agent.OneLine("prsm hook: "+err.Error()))
			err = nil
		}
		if out, err = json.Marshal(answer); err != nil {
			return err
		}
	}
	if aerr := h.Answer(ctx, Agent{}.Feedback(), p.HookEventName, call, out); aerr != nil {
		return aerr
	}
	return err
}

// Translate maps a Claude Code-shaped hook event in data (Copilot CLI
// fires them for hooks it reads from Claude Code's settings) to its
// server call, with the call's agent named as, not "claude" ("copilot",
// "copilot/<type>" inside a subagent); cwd and event are the event's.
// A nil call means the event needs none. name is the event's name, for
// the error of one that cannot be decoded.
func Translate(data []byte, name, as string) (call *agent.Call, cwd, event string, err error) {
	var p claudePayload
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, "", "", fmt.Errorf("malformed %s event: %v", name, err)
	}
	call, err = p.call()
	if err != nil || call == nil {
		return nil, p.Cwd, p.HookEventName, err
	}
	who := as + strings.TrimPrefix(p.agentID(), "claude")
	call.Start.AgentID, call.Complete.AgentID = who, who
	// The feedback is Claude Code's to hear: the other agent's answer
	// does not carry it.
	call.Ask = nil
	return call, p.Cwd, p.HookEventName, nil
}
