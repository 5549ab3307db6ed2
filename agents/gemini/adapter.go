package gemini

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm/agents/agent"
	"github.com/prsm-dev/prsm/api"
)

// geminiPayload is the part of a Gemini CLI hook event prsm uses. cwd is
// always the project root (the directory Gemini runs in), whatever
// directory a shell command runs in.
type geminiPayload struct {
	SessionID     string          `json:"session_id"`
	Cwd           string          `json:"cwd"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	ToolResponse  json.RawMessage `json:"tool_response"` // AfterTool
	Prompt        string          `json:"prompt"`        // BeforeAgent, AfterAgent
}

// geminiTools maps Gemini CLI's file-changing tools to prsm's canonical
// names; other tools keep theirs (the server canonicalizes what it knows).
var geminiTools = map[string]string{
	"write_file":        "Write",
	"replace":           "Edit",
	"run_shell_command": "Bash",
}

// geminiToolName is the canonical name of a Gemini tool.
func geminiToolName(name string) string {
	name = strings.TrimSpace(name)
	if c, ok := geminiTools[name]; ok {
		return c
	}
	return name
}

// readGeminiPayload reads and decodes one Gemini CLI hook event.
func readGeminiPayload(in io.Reader) (*geminiPayload, error) {
	return agent.DecodeEvent(in, func(p *geminiPayload) string { return p.HookEventName })
}

// isToolEvent reports whether the event is about one tool call.
func (p *geminiPayload) isToolEvent() bool {
	return p.HookEventName == "BeforeTool" || p.HookEventName == "AfterTool"
}

// call maps an event to its server call, with id as the tool call's id;
// nil means the event needs none.
func (p *geminiPayload) call(id string) (*agent.Call, error) {
	switch p.HookEventName {
	case "BeforeTool", "AfterTool":
	case "BeforeAgent":
		// Gemini fires it once per prompt (not per model round trip).
		return &agent.Call{Kind: agent.CallTurn, Turn: api.TurnRequest{Prompt: p.Prompt}}, nil
	case "AfterAgent", "SessionEnd":
		// The prompt is answered (or Gemini exits without AfterAgent,
		// after an error): a call left open was blocked or never ran.
		return &agent.Call{Kind: agent.CallTurnEnd}, nil
	default:
		return nil, nil
	}
	if strings.TrimSpace(p.ToolName) == "" {
		return nil, fmt.Errorf("malformed %s event: no tool_name", p.HookEventName)
	}
	name, cwd := geminiToolName(p.ToolName), p.toolCwd()
	if p.HookEventName == "BeforeTool" {
		return &agent.Call{Kind: agent.CallStart, ToolCallID: id, Start: api.ToolCallRequest{
			ToolCallID: id, ToolName: name, Args: p.ToolInput, AgentID: "gemini", Cwd: cwd,
		}}, nil
	}
	return &agent.Call{Kind: agent.CallComplete, ToolCallID: id, Complete: api.CompleteRequest{
		Result: p.result(), ToolName: name, Args: p.ToolInput, AgentID: "gemini", Cwd: cwd,
	}}, nil
}

// toolCwd is where the tool works: a shell command's dir_path (relative
// to the project root) when it gives one, else the project root, against
// which Gemini resolves a relative file_path too.
func (p *geminiPayload) toolCwd() string {
	var in struct {
		DirPath string `json:"dir_path"`
	}
	if p.Cwd == "" || json.Unmarshal(p.ToolInput, &in) != nil || in.DirPath == "" {
		return p.Cwd
	}
	if filepath.IsAbs(in.DirPath) {
		return filepath.Clean(in.DirPath)
	}
	return filepath.Join(p.Cwd, in.DirPath)
}

// result is the part of tool_response worth keeping: the text the model
// saw and the error. returnDisplay repeats both files' whole contents for
// write_file and replace, which the record holds anyway.
func (p *geminiPayload) result() json.RawMessage {
	var r map[string]json.RawMessage
	if json.Unmarshal(p.ToolResponse, &r) != nil {
		return p.ToolResponse
	}
	delete(r, "returnDisplay")
	b, err := json.Marshal(r)
	if err != nil {
		return p.ToolResponse
	}
	return b
}

// handle is the adapter: it handles one Gemini CLI hook event.
func handle(ctx context.Context, h *agent.Host, in io.Reader) error {
	p, err := readGeminiPayload(in)
	if err != nil {
		return err
	}
	if p.isToolEvent() && strings.TrimSpace(p.ToolName) == "" {
		return fmt.Errorf("malformed %s event: no tool_name", p.HookEventName)
	}
	id := ""
	if p.isToolEvent() {
		t, err := h.Locate(ctx, p.Cwd)
		if err != nil || t == nil {
			return err
		}
		id = geminiToolCallID(filepath.Join(t.ProjectDir, "hooks"), p)
	}
	call, err := p.call(id)
	if err != nil || call == nil {
		return err
	}
	if call.Kind == agent.CallTurnEnd {
		if t, err := h.Locate(ctx, p.Cwd); err == nil && t != nil {
			dir := filepath.Join(t.ProjectDir, "hooks")
			if p.HookEventName == "SessionEnd" {
				// Gemini's session is over; one it resumes later
				// numbers its calls in a new file, with a new token.
				os.Remove(geminiStatePath(dir, p.SessionID))
			} else {
				geminiForgetOpen(dir, p.SessionID)
			}
		}
	}
	return h.SendHearing(ctx, Agent{}.Feedback(), "gemini", p.Cwd, call, p.HookEventName)
}

// geminiStatePath is the state file of a Gemini session in dir.
func geminiStatePath(dir, sessionID string) string {
	return agent.CallStatePath(dir, "gemini", sessionID)
}

// geminiForgetOpen is agent.ForgetOpen for a Gemini session.
func geminiForgetOpen(dir, sessionID string) { agent.ForgetOpen(geminiStatePath(dir, sessionID)) }

// geminiToolCallID is the id of the tool call of a BeforeTool or AfterTool
// event, numbered in dir's state file of the event's Gemini session.
func geminiToolCallID(dir string, p *geminiPayload) string {
	phase := agent.PhaseBefore
	if p.HookEventName == "AfterTool" {
		phase = agent.PhaseAfter
	}
	return agent.NumberedCallID(dir, "gemini", p.SessionID, p.ToolName, p.ToolInput, phase)
}
