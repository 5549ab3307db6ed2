package hook

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

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
	return decodeHookEvent(in, func(p *geminiPayload) string { return p.HookEventName })
}

// isToolEvent reports whether the event is about one tool call.
func (p *geminiPayload) isToolEvent() bool {
	return p.HookEventName == "BeforeTool" || p.HookEventName == "AfterTool"
}

// call maps an event to its server call, with id as the tool call's id;
// nil means the event needs none.
func (p *geminiPayload) call(id string) (*hookCall, error) {
	switch p.HookEventName {
	case "BeforeTool", "AfterTool":
	case "BeforeAgent":
		// Gemini fires it once per prompt (not per model round trip).
		return &hookCall{kind: hookTurn, turn: api.TurnRequest{Prompt: p.Prompt}}, nil
	case "AfterAgent", "SessionEnd":
		// The prompt is answered (or Gemini exits without AfterAgent,
		// after an error): a call left open was blocked or never ran.
		return &hookCall{kind: hookTurnEnd}, nil
	default:
		return nil, nil
	}
	if strings.TrimSpace(p.ToolName) == "" {
		return nil, fmt.Errorf("malformed %s event: no tool_name", p.HookEventName)
	}
	name, cwd := geminiToolName(p.ToolName), p.toolCwd()
	if p.HookEventName == "BeforeTool" {
		return &hookCall{kind: hookStart, toolCallID: id, start: api.ToolCallRequest{
			ToolCallID: id, ToolName: name, Args: p.ToolInput, AgentID: "gemini", Cwd: cwd,
		}}, nil
	}
	return &hookCall{kind: hookComplete, toolCallID: id, complete: api.CompleteRequest{
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

// Gemini handles one Gemini CLI hook event.
func (a *Adapter) Gemini(ctx context.Context, in io.Reader) error {
	p, err := readGeminiPayload(in)
	if err != nil {
		return err
	}
	if p.isToolEvent() && strings.TrimSpace(p.ToolName) == "" {
		return fmt.Errorf("malformed %s event: no tool_name", p.HookEventName)
	}
	id := ""
	if p.isToolEvent() {
		t, err := a.locateSession(ctx, p.Cwd)
		if err != nil || t == nil {
			return err
		}
		id = geminiToolCallID(filepath.Join(t.ProjectDir, "hooks"), p)
	}
	call, err := p.call(id)
	if err != nil || call == nil {
		return err
	}
	if call.kind == hookTurnEnd {
		if t, err := a.locateSession(ctx, p.Cwd); err == nil && t != nil {
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
	return a.sendHook(ctx, p.Cwd, call, p.HookEventName)
}

// Gemini CLI's hook events carry no tool call id. Its calls run one after
// another (BeforeTool, the tool, AfterTool), but each event is a new hook
// process, so the two events of one call must agree on an id without
// shared memory. A hash of session, tool and input alone (what the Claude
// adapter falls back to) gives two identical calls (the same `go test`
// twice) one id, and the second would be taken for a repeat of the first;
// asking the server for "the open call" needs a round trip and breaks
// when a BeforeTool was blocked by another hook. So each Gemini session
// gets a small state file: BeforeTool takes the next number and notes the
// call as open with its tool and input; AfterTool takes the newest open
// call with the same tool and input (else the newest open call, if of the
// same tool, as another hook may have rewritten the input), and closes it;
// the turn's end forgets calls left open (blocked), and the session's end
// removes the file. A random token in the file keeps the ids of a lost,
// removed or recreated file apart from the old ones.

// callState is the state file of one agent session whose calls carry no
// id of their own (Gemini CLI, Copilot CLI, Cursor): a random token that
// keeps two sessions' numbers apart, the last number given, and the calls
// open.
type callState struct {
	Token string     `json:"token"`
	Seq   int        `json:"seq"`
	Open  []openCall `json:"open,omitempty"`
}

// openCall is a call whose before-event came and whose after-event did not.
type openCall struct {
	Seq  int    `json:"seq"`
	Tool string `json:"tool"`
	Key  string `json:"key"` // hash of tool and input
}

// maxOpenCalls bounds the open calls kept: a call blocked after its
// before-event never closes.
const maxOpenCalls = 64

// callStatePath is the state file, in dir, of agent's session key.
func callStatePath(dir, agent, key string) string {
	sid := sha256.Sum256([]byte(key))
	return filepath.Join(dir, agent+"-"+hex.EncodeToString(sid[:])[:16]+".json")
}

// geminiStatePath is the state file of a Gemini session in dir.
func geminiStatePath(dir, sessionID string) string {
	return callStatePath(dir, "gemini", sessionID)
}

// forgetOpen drops the open calls of an agent session whose turn ended:
// the server closes them, and a later after-event must not pair with one.
// A session with no state file gets none.
func forgetOpen(path string) {
	if _, err := os.Stat(path); err != nil {
		return
	}
	withCallState(path, func(s *callState) { s.Open = nil })
}

// geminiForgetOpen is forgetOpen for a Gemini session.
func geminiForgetOpen(dir, sessionID string) { forgetOpen(geminiStatePath(dir, sessionID)) }

// The phases of a numbered call: its before-event opens it, its
// after-event closes it; an event alone (Cursor's afterFileEdit) is a
// call of its own.
const (
	callBefore = iota
	callAfter
	callAlone
)

// geminiToolCallID is the id of the tool call of a BeforeTool or AfterTool
// event, numbered in dir's state file of the event's Gemini session.
func geminiToolCallID(dir string, p *geminiPayload) string {
	phase := callBefore
	if p.HookEventName == "AfterTool" {
		phase = callAfter
	}
	return numberedCallID(dir, "gemini", p.SessionID, p.ToolName, p.ToolInput, phase)
}

// numberedCallID is the id of a call of an agent that gives none, numbered
// in dir's state file of the agent's session key: a before-event opens a
// call under the next number, its after-event closes the newest open call
// of the same tool and input and takes its number, so that two identical
// calls in a row get two ids and each before and after share one. The id
// is "<agent>-<12 hex of the session and its token>-<n>". When the state
// file cannot be used (or dir is ""), it falls back to a hash of session,
// tool and input, which still pairs the two events of one call but no
// longer tells identical calls apart.
func numberedCallID(dir, agent, key, tool string, input json.RawMessage, phase int) string {
	tool = strings.TrimSpace(tool)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", tool)
	h.Write(canonicalJSON(input))
	callKey := hex.EncodeToString(h.Sum(nil))[:32]
	fallback := func() string {
		f := sha256.Sum256([]byte(key + "\x00" + callKey))
		return agent + "-" + hex.EncodeToString(f[:])[:32]
	}
	if dir == "" {
		return fallback()
	}
	var id string
	err := withCallState(callStatePath(dir, agent, key), func(s *callState) {
		seq := 0
		if phase == callAfter {
			seq = s.close(tool, callKey)
		}
		if seq == 0 {
			s.Seq++
			seq = s.Seq
			if phase == callBefore {
				s.Open = append(s.Open, openCall{Seq: seq, Tool: tool, Key: callKey})
				if len(s.Open) > maxOpenCalls {
					s.Open = s.Open[len(s.Open)-maxOpenCalls:]
				}
			}
		}
		t := sha256.Sum256([]byte(key + "\x00" + s.Token))
		id = agent + "-" + hex.EncodeToString(t[:])[:12] + "-" + strconv.Itoa(seq)
	})
	if err != nil {
		return fallback()
	}
	return id
}

// close takes the newest open call of tool with key, else the newest open
// call if it is one of tool, out of the open list and returns its number;
// 0 when none is open.
func (s *callState) close(tool, key string) int {
	pick := -1
	for i := len(s.Open) - 1; i >= 0; i-- {
		if s.Open[i].Tool == tool && s.Open[i].Key == key {
			pick = i
			break
		}
	}
	if pick < 0 && len(s.Open) > 0 && s.Open[len(s.Open)-1].Tool == tool {
		// Calls run one after another: the newest open one.
		pick = len(s.Open) - 1
	}
	if pick < 0 {
		return 0
	}
	seq := s.Open[pick].Seq
	s.Open = append(s.Open[:pick], s.Open[pick+1:]...)
	return seq
}

// withCallState runs edit on the state file at path, holding an
// exclusive lock on it, and writes the result back. A missing or
// unreadable file starts afresh with a new token.
func withCallState(path string, edit func(*callState)) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	// Bounded: the hook must not hang the agent on a stuck lock.
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			return fmt.Errorf("lock %s: %w", path, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return err
	}
	var s callState
	if json.Unmarshal(data, &s) != nil || s.Token == "" || s.Seq < 0 {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		s = callState{Token: hex.EncodeToString(b[:])}
	}
	edit(&s)
	out, err := json.Marshal(&s)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(out, 0); err != nil {
		return err
	}
	return f.Truncate(int64(len(out)))
}
