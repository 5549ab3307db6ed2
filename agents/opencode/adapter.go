package opencode

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents/agent"
	"github.com/prsm-dev/prsm/api"
)

// opencode has no command hooks: the plugin `prsm hooks install opencode`
// writes (opencodePlugin) runs inside opencode and pipes each event it
// cares about, as one JSON object (opencodePayload), to `prsm hook
// opencode`. Both ends are prsm's, so the payload's shape is ours; its
// fields are what opencode 1.18.33 hands the plugin.

// The events the plugin sends, named as opencode's plugin API names them.
const (
	opencodeBefore  = "tool.execute.before" // before a tool runs
	opencodeAfter   = "tool.execute.after"  // after it ran (none for a failed or blocked call)
	opencodeMessage = "chat.message"        // a user message, before the model sees it
	opencodeIdle    = "session.idle"        // the session's loop stopped: the turn is over
)

// opencodePayload is one event as the plugin sends it.
type opencodePayload struct {
	HookEventName string          `json:"hook_event_name"`
	SessionID     string          `json:"session_id"`
	Cwd           string          `json:"cwd"`     // opencode's directory: the session's worktree under prsm
	Tool          string          `json:"tool"`    // before, after: "write", "edit", "bash", ...
	CallID        string          `json:"call_id"` // before, after: the model's tool call id
	Args          json.RawMessage `json:"args"`    // before, after
	Title         string          `json:"title"`   // after
	Exit          json.RawMessage `json:"exit"`    // after, bash: metadata.exit
	Prompt        string          `json:"prompt"`  // chat.message: the text of the user's message
	// Hears is set by a plugin that hands the answer's feedback to the
	// model (on tool.execute.after and chat.message); an older plugin,
	// which ignores the answer, leaves the feedback queued.
	Hears bool `json:"hears"`
}

// handle is the adapter: it handles one event of prsm's opencode plugin.
func handle(ctx context.Context, h *agent.Host, in io.Reader) error {
	data, err := agent.ReadEvent(in)
	if err != nil {
		return err
	}
	var p opencodePayload
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("malformed opencode event (want one JSON object): %v", err)
	}
	call, err := p.call()
	if err != nil || call == nil {
		return err
	}
	if !p.Hears {
		return h.Send(ctx, p.Cwd, call, p.HookEventName)
	}
	return h.SendHearing(ctx, Agent{}.Feedback(), "opencode", p.Cwd, call, p.HookEventName)
}

// call maps an event to its server call; nil means the event needs none.
func (p *opencodePayload) call() (*agent.Call, error) {
	switch p.HookEventName {
	case "":
		return nil, errors.New("malformed opencode event: no hook_event_name")
	case opencodeMessage:
		return &agent.Call{Kind: agent.CallTurn, Turn: api.TurnRequest{Prompt: p.Prompt}}, nil
	case opencodeIdle:
		return &agent.Call{Kind: agent.CallTurnEnd}, nil
	case opencodeBefore, opencodeAfter:
	default:
		return nil, nil
	}
	if strings.TrimSpace(p.Tool) == "" {
		return nil, fmt.Errorf("malformed %s event: no tool", p.HookEventName)
	}
	id, name, args := p.toolCallID(), prsm.CanonicalToolName(p.Tool), opencodeArgs(p.Args)
	if p.HookEventName == opencodeBefore {
		return &agent.Call{Kind: agent.CallStart, ToolCallID: id, Start: api.ToolCallRequest{
			ToolCallID: id, ToolName: name, Args: args, AgentID: "opencode", Cwd: p.Cwd,
		}}, nil
	}
	result := map[string]json.RawMessage{}
	if p.Title != "" {
		result["title"], _ = json.Marshal(p.Title)
	}
	if len(p.Exit) > 0 && string(p.Exit) != "null" {
		result["exit"] = p.Exit
	}
	res, err := json.Marshal(result)
	if err != nil {
		return nil, err
	}
	return &agent.Call{Kind: agent.CallComplete, ToolCallID: id, Complete: api.CompleteRequest{
		Result: res, ToolName: name, Args: args, AgentID: "opencode", Cwd: p.Cwd,
	}}, nil
}

// toolCallID is opencode's callID, the model's tool call id, which before
// and after share. One the server would refuse (or none) is hashed with
// what both events carry alike.
func (p *opencodePayload) toolCallID() string {
	if prsm.ValidToolCallID(p.CallID) {
		return p.CallID
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", p.SessionID, p.CallID, strings.TrimSpace(p.Tool))
	if p.CallID == "" {
		h.Write(agent.CanonicalJSON(p.Args))
	}
	return "opencode-" + hex.EncodeToString(h.Sum(nil))[:32]
}

// opencodeArgKeys are opencode's camelCase argument names with the names
// prsm reads a tool's file from (and the review shows), Claude Code's.
var opencodeArgKeys = map[string]string{
	"filePath":   "file_path",
	"oldString":  "old_string",
	"newString":  "new_string",
	"replaceAll": "replace_all",
}

// opencodeArgs adds the snake_case twin of each camelCase argument opencode
// names a file or an edit with, so that the server finds the file a write
// or an edit names; everything else stays as sent. Arguments that are not
// a JSON object pass unchanged.
func opencodeArgs(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		return raw
	}
	changed := false
	for from, to := range opencodeArgKeys {
		if v, ok := m[from]; ok {
			if _, taken := m[to]; !taken {
				m[to] = v
				changed = true
			}
		}
	}
	if !changed {
		return raw
	}
	b, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return b
}
