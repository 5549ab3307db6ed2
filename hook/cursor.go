package hook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/safepath"
)

// Cursor's hooks (cursor.com/docs, "Hooks") send snake_case events with
// conversation_id, generation_id, hook_event_name and workspace_roots, and
// no tool call id. Cursor has no CLI here that fires hooks, so this follows
// its documentation. A file edit is reported only after it happened
// (afterFileEdit): prsm records it as a tool call whose pre-tool capture
// never came, with the file's content before the edit taken from what prsm
// last knew of it.

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
}

// hookCursor handles one Cursor hook event.
func (a *Adapter) Cursor(ctx context.Context, in io.Reader) error {
	data, err := readHookEvent(in)
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
	call, err := p.call()
	if err != nil || call == nil {
		return err
	}
	return a.sendHook(ctx, p.dir(), call, p.HookEventName)
}

// call maps an event to its server call; nil means the event needs none.
func (p *cursorPayload) call() (*hookCall, error) {
	switch p.HookEventName {
	case "beforeSubmitPrompt":
		return &hookCall{kind: hookTurn, turn: api.TurnRequest{Prompt: p.Prompt}}, nil
	case "stop":
		return &hookCall{kind: hookTurnEnd}, nil
	case "beforeShellExecution", "afterShellExecution":
		if strings.TrimSpace(p.Command) == "" {
			return nil, fmt.Errorf("malformed %s event: no command", p.HookEventName)
		}
		args, err := json.Marshal(map[string]string{"command": p.Command})
		if err != nil {
			return nil, err
		}
		id := p.toolCallID("shell", p.Command)
		if p.HookEventName == "beforeShellExecution" {
			return &hookCall{kind: hookStart, toolCallID: id, start: api.ToolCallRequest{
				ToolCallID: id, ToolName: prsm.ToolBash, Args: args, AgentID: "cursor", Cwd: p.Cwd,
			}}, nil
		}
		result, err := json.Marshal(map[string]json.RawMessage{"output": p.Output})
		if err != nil || len(p.Output) == 0 {
			result = json.RawMessage("{}")
		}
		return &hookCall{kind: hookComplete, toolCallID: id, complete: api.CompleteRequest{
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
		id := p.toolCallID("edit", p.FilePath+"\x00"+string(canonicalJSON(edits)))
		return &hookCall{kind: hookComplete, toolCallID: id, complete: api.CompleteRequest{
			Result: json.RawMessage("{}"), ToolName: prsm.ToolEdit, Args: args, AgentID: "cursor", Cwd: p.root(),
		}}, nil
	}
	return nil, nil
}

// toolCallID derives an id from the conversation, the generation and what
// the call is about (the command, or the file and its edits), which a
// before and its after share. The same command twice in one generation
// shares it: the second is taken for a repeat of the first.
func (p *cursorPayload) toolCallID(kind, what string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s", p.ConversationID, p.GenerationID, kind, what)
	return "cursor-" + hex.EncodeToString(h.Sum(nil))[:32]
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
