package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// The ids pair each BeforeTool with its AfterTool, number identical calls
// apart, survive a blocked call and a rewritten input, differ between
// Gemini sessions, and are ids the server accepts.
// Bad input never exits 2, never prints on stdout (Gemini would read it as
// JSON), and says what is wrong in one line; events prsm has no use for,
// and events outside every session, are silent no-ops.
func TestGeminiHookBadInput(t *testing.T) {
	home := t.TempDir()
	t.Setenv("PRSM_HOME", home)
	t.Setenv("PRSM_SESSION_ID", "")
	t.Setenv("PRSM_WORKSPACE", "")
	wt := filepath.Join(home, "projects", "repo-1234abcd", "worktrees", "0123456789ab")
	if err := os.MkdirAll(wt, 0o700); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	for _, tc := range []struct {
		name, stdin string
		code        int
		stderr      string
	}{
		{"empty", "", 1, "malformed hook event"},
		{"truncated", `{"hook_event_name": "BeforeTool"`, 1, "malformed hook event"},
		{"array", `[]`, 1, "malformed hook event"},
		{"no event", `{"cwd": "/tmp"}`, 1, "no hook_event_name"},
		{"no tool", `{"hook_event_name": "BeforeTool", "cwd": "/tmp"}`, 1, "no tool_name"},
		{"bad field type", `{"hook_event_name": "AfterTool", "tool_name": 7}`, 1, "malformed hook event"},
		{"unknown event", `{"hook_event_name": "SomethingNew", "cwd": "/tmp", "extra": [1]}`, 0, ""},
		{"outside sessions", strings.ReplaceAll(geminiBeforeWrite, geminiWT, outside), 0, ""},
		{"prompt outside sessions", strings.ReplaceAll(geminiBeforeAgent, geminiWT, outside), 0, ""},
		{"server gone", strings.ReplaceAll(geminiBeforeWrite, "/home/u/.prsm", home), 1, "prsm hook: server not running, and it cannot be started"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runHook(t, tc.stdin, "gemini")
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			if tc.stderr == "" {
				if stderr != "" {
					t.Errorf("stderr %q, want nothing", stderr)
				}
				return
			}
			if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q, want one line with %q", stderr, tc.stderr)
			}
		})
	}
	// nothing of a session outside every session was written
	if _, err := os.Stat(filepath.Join(outside, ".gemini")); err == nil {
		t.Error("the hook wrote into the agent's directory")
	}
}

// The call state lives in the session's project directory, and Gemini's
// SessionEnd removes it (after AfterAgent it only forgets open calls),
// even when the server cannot be reached.
