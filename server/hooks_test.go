package server_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/server"
)

// claudeEvent is a Claude Code hook event as its http hooks POST it.
func claudeEvent(t *testing.T, event, cwd, id, tool string, input map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"session_id": "c0ffee", "transcript_path": "/x.jsonl", "cwd": cwd,
		"permission_mode": "bypassPermissions", "hook_event_name": event, "tool_name": tool, "tool_use_id": id,
		"tool_input": input, "tool_response": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// POST /hooks/claude means what `prsm hook claude` means: a Write's Pre and
// Post in a session's worktree make a record with Claude's own
// tool_use_id, a workspace path is moved onto the worktree (the answer
// Claude reads), a prompt starts a turn; a wrong token gets 401, an
// unknown event and a cwd outside every session are ignored, and an
// event that is no JSON gets 400: none of those records anything.
func TestClaudeHTTPHook(t *testing.T) {
	ts := start(t, server.Config{})
	ctx := context.Background()
	s, err := ts.eng.StartSession(ctx, api.StartRequest{Name: "http"})
	if err != nil {
		t.Fatal(err)
	}
	wt := s.WorktreePath
	post := func(body string, hdr map[string]string) (int, string) {
		t.Helper()
		code, _, out := ts.do(t, "POST", "/hooks/claude", body, hdr)
		return code, out
	}
	records := func() []string {
		t.Helper()
		recs, err := ts.eng.Records(ctx, s.ID, "", "")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range recs {
			got = append(got, r.ToolCallID+" "+r.RelPath+" "+r.AgentID)
		}
		return got
	}

	// Refused or ignored: nothing recorded.
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(wt, "x.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, body string
		hdr        map[string]string
		code       int
		want       string
	}{
		{"wrong token", claudeEvent(t, "PostToolUse", wt, "toolu_x1", "Write", map[string]any{"file_path": wt + "/x.txt", "content": "x\n"}),
			map[string]string{"Authorization": "Bearer nope"}, 401, `"unauthorized"`},
		{"no token", claudeEvent(t, "PostToolUse", wt, "toolu_x1", "Write", map[string]any{"file_path": wt + "/x.txt", "content": "x\n"}),
			map[string]string{"Authorization": ""}, 401, `"unauthorized"`},
		{"not JSON", `{"hook_event_name": "PostToolUse", "cwd": ` + strings.Repeat("[", 3), nil, 400, `"bad_hook_event"`},
		{"no event name", `{"cwd": "` + wt + `"}`, nil, 400, `no hook_event_name`},
		{"tool event without a tool", `{"hook_event_name": "PostToolUse", "cwd": "` + wt + `"}`, nil, 400, `no tool_name`},
		{"unknown event", `{"hook_event_name": "SomethingNew", "cwd": "` + wt + `", "tool_name": "Write"}`, nil, 200, `{}`},
		{"outside every session", claudeEvent(t, "PostToolUse", outside, "toolu_x2", "Write", map[string]any{"file_path": outside + "/x.txt", "content": "x\n"}),
			nil, 200, `{}`},
	} {
		code, out := post(tc.body, tc.hdr)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%s: %d %s, want %d with %s", tc.name, code, out, tc.code, tc.want)
		}
	}
	if got := records(); len(got) != 0 {
		t.Fatalf("refused and ignored events recorded %v", got)
	}
	if err := os.Remove(filepath.Join(wt, "x.txt")); err != nil {
		t.Fatal(err)
	}

	// A prompt, then a Write in the worktree.
	if code, out := post(`{"hook_event_name": "UserPromptSubmit", "cwd": "`+wt+`", "prompt": "go"}`, nil); code != 200 || out != "{}" {
		t.Fatalf("UserPromptSubmit: %d %s", code, out)
	}
	in := map[string]any{"file_path": filepath.Join(wt, "a.txt"), "content": "A\n"}
	if code, out := post(claudeEvent(t, "PreToolUse", wt, "toolu_h1", "Write", in), nil); code != 200 || out != "{}" {
		t.Fatalf("PreToolUse: %d %s", code, out)
	}
	if err := os.WriteFile(filepath.Join(wt, "a.txt"), []byte("A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := post(claudeEvent(t, "PostToolUse", wt, "toolu_h1", "Write", in), nil); code != 200 || out != "{}" {
		t.Fatalf("PostToolUse: %d %s", code, out)
	}

	// The workspace's own path: the answer moves it onto the worktree.
	in = map[string]any{"file_path": filepath.Join(ts.ws, "b.txt"), "content": "B\n"}
	code, out := post(claudeEvent(t, "PreToolUse", wt, "toolu_h2", "Write", in), map[string]string{"Host": "localhost:" + ts.port()})
	var ans struct {
		HookSpecificOutput struct {
			HookEventName      string          `json:"hookEventName"`
			PermissionDecision string          `json:"permissionDecision"`
			UpdatedInput       json.RawMessage `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if code != 200 || json.Unmarshal([]byte(out), &ans) != nil || ans.HookSpecificOutput.PermissionDecision != "allow" ||
		ans.HookSpecificOutput.HookEventName != "PreToolUse" {
		t.Fatalf("PreToolUse on the workspace's path: %d %s", code, out)
	}
	var moved map[string]any
	if err := json.Unmarshal(ans.HookSpecificOutput.UpdatedInput, &moved); err != nil ||
		moved["file_path"] != filepath.Join(wt, "b.txt") || moved["content"] != "B\n" {
		t.Fatalf("updatedInput %s, want b.txt in the worktree", ans.HookSpecificOutput.UpdatedInput)
	}
	if err := os.WriteFile(filepath.Join(wt, "b.txt"), []byte("B\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := post(claudeEvent(t, "PostToolUse", wt, "toolu_h2", "Write", moved), nil); code != 200 {
		t.Fatalf("PostToolUse b: %d %s", code, out)
	}
	got := records()
	if want := "toolu_h1 a.txt claude,toolu_h2 b.txt claude"; strings.Join(got, ",") != want {
		t.Fatalf("records %v, want %s", got, want)
	}
	for f, want := range map[string]string{"a.txt": "A\n", "b.txt": "B\n"} {
		if b, err := os.ReadFile(filepath.Join(ts.ws, f)); err != nil || string(b) != want {
			t.Errorf("workspace %s = %q %v, want %q", f, b, err, want)
		}
	}
	// A session that is gone: ignored, as the command hook ignores it.
	gone := filepath.Join(filepath.Dir(wt), "0123456789ab")
	if code, out := post(claudeEvent(t, "PreToolUse", gone, "toolu_h3", "Bash", map[string]any{"command": "true"}), nil); code != 200 || out != "{}" {
		t.Fatalf("event of a session that is gone: %d %s", code, out)
	}
	if got := records(); len(got) != 2 {
		t.Fatalf("records %v after the event of a session that is gone", got)
	}
}

// port is the port the test server listens on.
func (ts *testServer) port() string { return ts.url[strings.LastIndex(ts.url, ":")+1:] }

// The reproduction over http: `ln -s ~/.ssh <worktree>/evil`, then
// a Write to <workspace>/evil/authorized_keys in acceptEdits. The answer
// neither allows the write nor moves it through the link; it says why.
func TestClaudeHTTPHookSymlinkOut(t *testing.T) {
	ts := start(t, server.Config{})
	ctx := context.Background()
	s, err := ts.eng.StartSession(ctx, api.StartRequest{Name: "evil"})
	if err != nil {
		t.Fatal(err)
	}
	ssh := t.TempDir()
	if err := os.Symlink(ssh, filepath.Join(s.WorktreePath, "evil")); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(ts.ws, "evil", "authorized_keys")
	body, err := json.Marshal(map[string]any{"session_id": "c0ffee", "cwd": s.WorktreePath, "permission_mode": "acceptEdits",
		"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_use_id": "toolu_evil",
		"tool_input": map[string]any{"file_path": target, "content": "ssh-ed25519 EVIL\n"}})
	if err != nil {
		t.Fatal(err)
	}
	code, _, out := ts.do(t, "POST", "/hooks/claude", string(body), nil)
	var ans struct {
		HookSpecificOutput map[string]any `json:"hookSpecificOutput"`
	}
	if code != 200 || json.Unmarshal([]byte(out), &ans) != nil {
		t.Fatalf("PreToolUse: %d %s", code, out)
	}
	h := ans.HookSpecificOutput
	if _, ok := h["permissionDecision"]; ok {
		t.Fatalf("answer %s decides for a path that leaves the worktree", out)
	}
	if _, ok := h["updatedInput"]; ok {
		t.Fatalf("answer %s moves the path through the link", out)
	}
	if reason, _ := h["permissionDecisionReason"].(string); !strings.Contains(reason, "symbolic link") || !strings.Contains(reason, target) {
		t.Fatalf("answer %s: the reason does not say why", out)
	}
}
