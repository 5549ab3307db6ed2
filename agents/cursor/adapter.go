package cursor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents/agent"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/safepath"
)

// Cursor's hooks (cursor.com/docs, "Hooks") send snake_case events with
// conversation_id, generation_id, hook_event_name and workspace_roots, and
// no tool call id. Cursor has no CLI here that fires hooks, so this follows
// its documentation. A file edit is reported only after it happened
// (afterFileEdit): prsm records it as a tool call whose pre-tool capture
// never came, with the file's content before the edit taken from what prsm
// last knew of it. Newer builds also send preToolUse, postToolUse and
// postToolUseFailure with tool_name and tool_input (and tool_use_id where
// they have one), as Claude Code does; prsm's hooks file does not ask for
// them (a shell command would come twice, as beforeShellExecution and as
// preToolUse), but a user's own hooks may run `prsm hook cursor` on them.

// cursorPayload is the part of a Cursor hook event prsm uses.
type cursorPayload struct {
	HookEventName  string          `json:"hook_event_name"`
	ConversationID string          `json:"conversation_id"`
	GenerationID   string          `json:"generation_id"`
	WorkspaceRoots []string        `json:"workspace_roots"`
	Command        string          `json:"command"`   // shell events
	Cwd            string          `json:"cwd"`       // shell events
	Output         json.RawMessage `json:"output"`    // afterShellExecution
	FilePath       string          `json:"file_path"` // afterFileEdit
	Edits          json.RawMessage `json:"edits"`     // afterFileEdit: [{old_string, new_string}]
	Prompt         string          `json:"prompt"`    // beforeSubmitPrompt
	// preToolUse, postToolUse, postToolUseFailure (newer builds)
	ToolName   string          `json:"tool_name"`
	ToolInput  json.RawMessage `json:"tool_input"`
	ToolUseID  string          `json:"tool_use_id"`
	ToolOutput json.RawMessage `json:"tool_output"` // postToolUse
	Error      json.RawMessage `json:"error"`       // postToolUseFailure
}

// handle is the adapter: it handles one Cursor hook event.
func handle(ctx context.Context, h *agent.Host, in io.Reader) error {
	data, err := agent.ReadEvent(in)
	if err != nil {
		return err
	}
	var p cursorPayload
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("malformed Cursor hook event (want one JSON object): %v", err)
	}
	if p.HookEventName == "" {
		return fmt.Errorf("malformed Cursor hook event: no hook_event_name")
	}
	// Calls are numbered in a state file of the conversation, in the prsm
	// session's project: outside every session nothing is sent.
	t, err := h.Locate(ctx, p.dir())
	if err != nil || t == nil {
		return err
	}
	dir := filepath.Join(t.ProjectDir, "hooks")
	call, err := p.call(dir)
	if err != nil || call == nil {
		return err
	}
	if call.Kind == agent.CallTurnEnd {
		agent.ForgetOpen(agent.CallStatePath(dir, "cursor", p.conversation()))
	}
	return h.Send(ctx, p.dir(), call, p.HookEventName)
}

// call maps an event to its server call; nil means the event needs none.
// dir holds the state file that numbers the conversation's calls.
func (p *cursorPayload) call(dir string) (*agent.Call, error) {
	switch p.HookEventName {
	case "beforeSubmitPrompt":
		return &agent.Call{Kind: agent.CallTurn, Turn: api.TurnRequest{Prompt: p.Prompt}}, nil
	case "stop":
		return &agent.Call{Kind: agent.CallTurnEnd}, nil
	case "beforeShellExecution", "afterShellExecution":
		if strings.TrimSpace(p.Command) == "" {
			return nil, fmt.Errorf("malformed %s event: no command", p.HookEventName)
		}
		args, err := json.Marshal(map[string]string{"command": p.Command})
		if err != nil {
			return nil, err
		}
		phase := agent.PhaseAfter
		if p.HookEventName == "beforeShellExecution" {
			phase = agent.PhaseBefore
		}
		id := agent.NumberedCallID(dir, "cursor", p.conversation(), "shell", args, phase)
		if p.HookEventName == "beforeShellExecution" {
			return &agent.Call{Kind: agent.CallStart, ToolCallID: id, Start: api.ToolCallRequest{
				ToolCallID: id, ToolName: prsm.ToolBash, Args: args, AgentID: "cursor", Cwd: p.Cwd,
			}}, nil
		}
		result, err := json.Marshal(map[string]json.RawMessage{"output": p.Output})
		if err != nil || len(p.Output) == 0 {
			result = json.RawMessage("{}")
		}
		return &agent.Call{Kind: agent.CallComplete, ToolCallID: id, Complete: api.CompleteRequest{
			Result: result, ToolName: prsm.ToolBash, Args: args, AgentID: "cursor", Cwd: p.Cwd,
		}}, nil
	case "afterFileEdit":
		if strings.TrimSpace(p.FilePath) == "" {
			return nil, fmt.Errorf("malformed afterFileEdit event: no file_path")
		}
		edits := p.Edits
		if len(edits) == 0 {
			edits = json.RawMessage("[]")
		}
		args, err := json.Marshal(map[string]any{"file_path": p.FilePath, "edits": edits})
		if err != nil {
			return nil, fmt.Errorf("malformed afterFileEdit event: %v", err)
		}
		id := agent.NumberedCallID(dir, "cursor", p.conversation(), "edit", args, agent.PhaseAlone)
		return &agent.Call{Kind: agent.CallComplete, ToolCallID: id, Complete: api.CompleteRequest{
			Result: json.RawMessage("{}"), ToolName: prsm.ToolEdit, Args: args, AgentID: "cursor", Cwd: p.root(),
		}}, nil
	case "preToolUse", "postToolUse", "postToolUseFailure":
		return p.toolCall(dir)
	}
	return nil, nil
}

// toolCall maps the newer tool events: tool_use_id when Cursor sends a
// usable one, else a numbered id; the tool's name becomes prsm's.
func (p *cursorPayload) toolCall(dir string) (*agent.Call, error) {
	if strings.TrimSpace(p.ToolName) == "" {
		return nil, fmt.Errorf("malformed %s event: no tool_name", p.HookEventName)
	}
	args := p.ToolInput
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	id := p.ToolUseID
	if !prsm.ValidToolCallID(id) {
		phase := agent.PhaseAfter
		if p.HookEventName == "preToolUse" {
			phase = agent.PhaseBefore
		}
		id = agent.NumberedCallID(dir, "cursor", p.conversation(), p.ToolName, args, phase)
	}
	name := prsm.CanonicalToolName(p.ToolName)
	if p.HookEventName == "preToolUse" {
		return &agent.Call{Kind: agent.CallStart, ToolCallID: id, Start: api.ToolCallRequest{
			ToolCallID: id, ToolName: name, Args: args, AgentID: "cursor", Cwd: p.dir(),
		}}, nil
	}
	result := map[string]json.RawMessage{}
	if len(p.ToolOutput) > 0 {
		result["output"] = p.ToolOutput
	}
	if len(p.Error) > 0 {
		result["error"] = p.Error
	}
	res, err := json.Marshal(result)
	if err != nil {
		return nil, fmt.Errorf("malformed %s event: %v", p.HookEventName, err)
	}
	return &agent.Call{Kind: agent.CallComplete, ToolCallID: id, Complete: api.CompleteRequest{
		Result: res, ToolName: name, Args: args, AgentID: "cursor", Cwd: p.dir(),
	}}, nil
}

// conversation keys a conversation's call numbers (one state file per
// conversation, not per generation, which each prompt makes anew).
func (p *cursorPayload) conversation() string {
	if p.ConversationID == "" {
		return "generation\x00" + p.GenerationID
	}
	return p.ConversationID
}

// root is the workspace root that holds the event's file, else the first.
func (p *cursorPayload) root() string {
	for _, r := range p.WorkspaceRoots {
		if p.FilePath != "" && filepath.IsAbs(p.FilePath) {
			if _, err := safepath.Rel(r, p.FilePath); err == nil {
				return r
			}
		}
	}
	if len(p.WorkspaceRoots) > 0 {
		return p.WorkspaceRoots[0]
	}
	return ""
}

// dir is where the event happened, which names its session: the shell's
// cwd, the edited file's directory, or the workspace root.
func (p *cursorPayload) dir() string {
	switch {
	case p.Cwd != "":
		return p.Cwd
	case p.FilePath != "" && filepath.IsAbs(p.FilePath):
		return filepath.Dir(p.FilePath)
	}
	return p.root()
}
