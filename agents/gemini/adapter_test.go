package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents/agent"
	"github.com/prsm-dev/prsm/hook"
)

// Payloads as Gemini CLI 0.61.0 builds them (hookEventHandler's
// createBaseInput and fire*Event in its bundle): session_id,
// transcript_path, cwd (the project root), hook_event_name, timestamp,
// and per event tool_name/tool_input, tool_response, prompt.
const (
	geminiWT   = "/home/u/.prsm/projects/repo-1234abcd/worktrees/0123456789ab"
	geminiBase = `"session_id": "6f1c2d4e-0000-4000-8000-aaaabbbbcccc", "transcript_path": "/home/u/.gemini/tmp/x/chats/session-1.json", "cwd": "` + geminiWT + `", "timestamp": "2026-11-27T10:00:00.000Z"`
)

func geminiEvent(event, rest string) string {
	s := `{` + geminiBase + `, "hook_event_name": "` + event + `"`
	if rest != "" {
		s += ", " + rest
	}
	return s + "}"
}

var (
	geminiBeforeWrite = geminiEvent("BeforeTool", `"tool_name": "write_file", "tool_input": {"file_path": "hello.txt", "content": "hello\n"}`)
	geminiAfterWrite  = geminiEvent("AfterTool", `"tool_name": "write_file", "tool_input": {"file_path": "hello.txt", "content": "hello\n"},
		"tool_response": {"llmContent": "Successfully created and wrote to new file: `+geminiWT+`/hello.txt.",
		"returnDisplay": {"fileDiff": "...", "fileName": "hello.txt", "filePath": "`+geminiWT+`/hello.txt", "originalContent": "", "newContent": "hello\n"}}`)
	geminiBeforeReplace = geminiEvent("BeforeTool", `"tool_name": "replace", "tool_input": {"file_path": "a.txt", "instruction": "upper", "old_string": "beta", "new_string": "BETA"}`)
	geminiAfterReplace  = geminiEvent("AfterTool", `"tool_name": "replace", "tool_input": {"file_path": "a.txt", "instruction": "upper", "old_string": "beta", "new_string": "BETA"},
		"tool_response": {"llmContent": "Failed to edit", "returnDisplay": "Error", "error": {"message": "0 occurrences found", "type": "edit_no_occurrence_found"}}`)
	geminiBeforeShell = geminiEvent("BeforeTool", `"tool_name": "run_shell_command", "tool_input": {"command": "printf x > n.txt && rm gone.txt", "description": "shuffle", "dir_path": "sub"}`)
	geminiAfterShell  = geminiEvent("AfterTool", `"tool_name": "run_shell_command", "tool_input": {"command": "printf x > n.txt && rm gone.txt", "description": "shuffle", "dir_path": "sub"},
		"tool_response": {"llmContent": "Output: (empty)\nExit Code: 0", "returnDisplay": ""}`)
	geminiBeforeAgent = geminiEvent("BeforeAgent", `"prompt": "Add a greeting"`)
	geminiAfterAgent  = geminiEvent("AfterAgent", `"prompt": "Add a greeting", "prompt_response": "Done.", "stop_hook_active": false`)
	geminiSessionEnd  = geminiEvent("SessionEnd", `"reason": "exit"`)
)

func TestGeminiPayloads(t *testing.T) {
	for _, tc := range []struct {
		name, payload         string
		kind, tool, cwd, text string
	}{
		{"before write_file", geminiBeforeWrite, agent.CallStart, "Write", geminiWT, ""},
		{"after write_file", geminiAfterWrite, agent.CallComplete, "Write", geminiWT, `{"llmContent":"Successfully created and wrote to new file: ` + geminiWT + `/hello.txt."}`},
		{"before replace", geminiBeforeReplace, agent.CallStart, "Edit", geminiWT, ""},
		{"after failed replace", geminiAfterReplace, agent.CallComplete, "Edit", geminiWT, `{"error":{"message":"0 occurrences found","type":"edit_no_occurrence_found"},"llmContent":"Failed to edit"}`},
		{"before shell", geminiBeforeShell, agent.CallStart, "Bash", geminiWT + "/sub", ""},
		{"after shell", geminiAfterShell, agent.CallComplete, "Bash", geminiWT + "/sub", `{"llmContent":"Output: (empty)\nExit Code: 0"}`},
		{"before other tool", geminiEvent("BeforeTool", `"tool_name": "read_file", "tool_input": {"file_path": "a.txt"}`), agent.CallStart, "read_file", geminiWT, ""},
		{"prompt", geminiBeforeAgent, agent.CallTurn, "", "", "Add a greeting"},
		{"answered", geminiAfterAgent, agent.CallTurnEnd, "", "", ""},
		{"session end", geminiSessionEnd, agent.CallTurnEnd, "", "", ""},
		{"session start", geminiEvent("SessionStart", `"source": "startup"`), "", "", "", ""},
		{"before model", geminiEvent("BeforeModel", `"llm_request": {}`), "", "", "", ""},
		{"pre compress", geminiEvent("PreCompress", `"trigger": "auto"`), "", "", "", ""},
		{"notification", geminiEvent("Notification", `"notification_type": "ToolPermission", "message": "m"`), "", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := readGeminiPayload(strings.NewReader(tc.payload))
			if err != nil {
				t.Fatal(err)
			}
			call, err := p.call("gemini-x-1")
			if err != nil {
				t.Fatal(err)
			}
			if tc.kind == "" {
				if call != nil {
					t.Fatalf("call %+v, want none", call)
				}
				return
			}
			if call == nil || call.Kind != tc.kind {
				t.Fatalf("call %+v, want kind %s", call, tc.kind)
			}
			switch tc.kind {
			case agent.CallStart:
				r := call.Start
				if r.ToolCallID != "gemini-x-1" || call.ToolCallID != "gemini-x-1" || r.ToolName != tc.tool || r.AgentID != "gemini" || r.Cwd != tc.cwd {
					t.Errorf("start %+v", r)
				}
				if !json.Valid(r.Args) || !strings.Contains(string(r.Args), "file_path") && !strings.Contains(string(r.Args), "command") {
					t.Errorf("args %s", r.Args)
				}
			case agent.CallComplete:
				r := call.Complete
				if call.ToolCallID != "gemini-x-1" || r.ToolName != tc.tool || r.AgentID != "gemini" || r.Cwd != tc.cwd || string(r.Result) != tc.text {
					t.Errorf("complete %+v, result %s", r, r.Result)
				}
			case agent.CallTurn:
				if call.Turn.Prompt != tc.text {
					t.Errorf("prompt %q", call.Turn.Prompt)
				}
			}
		})
	}
}

func TestGeminiToolCallIDs(t *testing.T) {
	dir := t.TempDir()
	id := func(payload string) string {
		t.Helper()
		p, err := readGeminiPayload(strings.NewReader(payload))
		if err != nil {
			t.Fatal(err)
		}
		id := geminiToolCallID(dir, p)
		if !prsm.ValidToolCallID(id) {
			t.Fatalf("id %q is not a valid tool call id", id)
		}
		return id
	}
	seen := map[string]bool{}
	pair := func(before, after string) string {
		t.Helper()
		a, b := id(before), id(after)
		if a != b {
			t.Fatalf("BeforeTool id %s, AfterTool id %s: not paired", a, b)
		}
		if seen[a] {
			t.Fatalf("id %s used twice", a)
		}
		seen[a] = true
		return a
	}
	w1 := pair(geminiBeforeWrite, geminiAfterWrite)
	if !strings.HasPrefix(w1, "gemini-") || !strings.HasSuffix(w1, "-1") {
		t.Errorf("first id %s, want gemini-...-1", w1)
	}
	pair(geminiBeforeReplace, geminiAfterReplace)
	// the same call again is a new call
	pair(geminiBeforeWrite, geminiAfterWrite)
	// a call blocked after its BeforeTool never completes; the next pairs
	blocked := id(geminiBeforeShell)
	seen[blocked] = true
	pair(geminiBeforeReplace, geminiAfterReplace)
	// another hook rewrote the input between BeforeTool and AfterTool
	pair(geminiBeforeWrite, strings.Replace(geminiAfterWrite, `"content": "hello\n"`, `"content": "HELLO\n"`, 1))
	// an AfterTool whose BeforeTool never came gets a number of its own,
	// which no later BeforeTool takes again
	lone := id(strings.Replace(geminiAfterReplace, "BETA", "GAMMA", 1))
	if seen[lone] {
		t.Fatalf("lone AfterTool id %s was used before", lone)
	}
	seen[lone] = true
	pair(geminiBeforeShell, geminiAfterShell)
	// the turn's end forgets the blocked call: a lone AfterTool of the
	// same tool and input does not take its id
	blocked = id(geminiBeforeShell)
	seen[blocked] = true
	geminiForgetOpen(dir, "6f1c2d4e-0000-4000-8000-aaaabbbbcccc")
	if lone := id(geminiAfterShell); seen[lone] {
		t.Fatalf("AfterTool after the turn's end took id %s, used before", lone)
	}
	// another Gemini session numbers its own calls
	other := func(s string) string {
		return strings.Replace(s, "6f1c2d4e-0000-4000-8000-aaaabbbbcccc", "00000000-1111-4000-8000-222233334444", 1)
	}
	o := pair(other(geminiBeforeWrite), other(geminiAfterWrite))
	if !strings.HasSuffix(o, "-1") {
		t.Errorf("other session's first id %s", o)
	}

	// A state file lost (or unwritable) never gives an id used before.
	files, _ := filepath.Glob(filepath.Join(dir, "gemini-*.json"))
	if len(files) != 2 {
		t.Fatalf("state files %v, want one per Gemini session", files)
	}
	for _, f := range files {
		os.Remove(f)
	}
	pair(geminiBeforeWrite, geminiAfterWrite)
	dir = filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	pair(geminiBeforeReplace, geminiAfterReplace) // the hash fallback still pairs
}

func TestGeminiCallStateLifetime(t *testing.T) {
	home := t.TempDir()
	t.Setenv("PRSM_HOME", home)
	t.Setenv("PRSM_SESSION_ID", "")
	t.Setenv("PRSM_WORKSPACE", "")
	project := filepath.Join(home, "projects", "repo-1234abcd")
	if err := os.MkdirAll(filepath.Join(project, "worktrees", "0123456789ab"), 0o700); err != nil {
		t.Fatal(err)
	}
	in := func(s string) string { return strings.ReplaceAll(s, "/home/u/.prsm", home) }
	state := geminiStatePath(filepath.Join(project, "hooks"), "6f1c2d4e-0000-4000-8000-aaaabbbbcccc")
	read := func() agent.CallState {
		t.Helper()
		var s agent.CallState
		b, err := os.ReadFile(state)
		if err != nil || json.Unmarshal(b, &s) != nil {
			t.Fatalf("state %s: %v %s", state, err, b)
		}
		return s
	}
	for _, ev := range []string{geminiBeforeWrite, geminiAfterWrite, geminiBeforeShell} {
		if code, stdout, _ := runHook(t, in(ev)); code != 1 || stdout != "" {
			t.Fatalf("exit %d, stdout %q; want 1 (no server), nothing", code, stdout)
		}
	}
	if s := read(); s.Seq != 2 || len(s.Open) != 1 || s.Open[0].Seq != 2 {
		t.Fatalf("state %+v: want 2 calls, the second open", s)
	}
	runHook(t, in(geminiAfterAgent))
	if s := read(); s.Seq != 2 || len(s.Open) != 0 {
		t.Fatalf("state after AfterAgent %+v: want 2 calls, none open", s)
	}
	runHook(t, in(geminiSessionEnd))
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Fatalf("state after SessionEnd: %v, want it gone", err)
	}
}

// runHook runs the Gemini adapter as `prsm-hook gemini` does, with stdin,
// and without a way to start a server.
func runHook(t *testing.T, stdin string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := &hook.Adapter{Stdout: &out, Stderr: &errb}
	if err := a.Command(context.Background(), Agent{}, nil, strings.NewReader(stdin)); err != nil {
		fmt.Fprintln(&errb, err)
		code = 1
	}
	return code, out.String(), errb.String()
}
