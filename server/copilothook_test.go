package server_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/server"
)

// copilotEvent is a Copilot CLI camelCase hook event, as its http hooks
// POST it: no event name, no tool call id.
func copilotEvent(t *testing.T, cwd, tool string, args map[string]any, result any) string {
	t.Helper()
	m := map[string]any{"sessionId": "cop-1", "timestamp": 1, "cwd": cwd, "toolName": tool, "toolArgs": args}
	if result != nil {
		m["toolResult"] = result
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// POST /hooks/copilot?event=EVENT means what `prsm hook copilot` means,
// the event named by the URL: a create's preToolUse and postToolUse in a
// session's worktree make one record under Copilot's numbered id, and the
// answer is {}. Without ?event= it is a clear 400, with a hook token of
// another session 403, and with the session's own token it records.
func TestCopilotHTTPHook(t *testing.T) {
	ts := start(t, server.Config{})
	ctx := context.Background()
	s1, err := ts.eng.StartSession(ctx, api.StartRequest{Name: "cop", Mode: prsm.ModeReview})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := ts.eng.StartSession(ctx, api.StartRequest{Name: "other", Mode: prsm.ModeReview})
	if err != nil {
		t.Fatal(err)
	}
	wt := s1.WorktreePath
	tok1, tok2 := mintHookToken(t, ts, s1.ID), mintHookToken(t, ts, s2.ID)
	as := func(token string) map[string]string { return map[string]string{"Authorization": "Bearer " + token} }
	args := map[string]any{"path": filepath.Join(wt, "hello.txt"), "file_text": "hello\n"}
	pre := copilotEvent(t, wt, "create", args, nil)
	post := copilotEvent(t, wt, "create", args, map[string]any{"resultType": "success", "textResultForLlm": "ok"})
	records := func() []string {
		t.Helper()
		recs, err := ts.eng.Records(ctx, s1.ID, "", "")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range recs {
			got = append(got, r.ToolCallID+" "+r.ToolName+" "+r.RelPath+" "+r.AgentID)
		}
		return got
	}

	for _, tc := range []struct {
		name, path, body string
		hdr              map[string]string
		code             int
		want             string
	}{
		{"no event in the URL", "/hooks/copilot", pre, as(tok1), 400, `the hook's URL names no event`},
		{"empty event", "/hooks/copilot?event=", pre, as(tok1), 400, `"bad_hook_event"`},
		{"another session's token", "/hooks/copilot?event=preToolUse", pre, as(tok2), 403, `"hook_token_scope"`},
		{"not JSON", "/hooks/copilot?event=preToolUse", `{"cwd": [[`, as(tok1), 400, `"bad_hook_event"`},
		{"no toolName", "/hooks/copilot?event=preToolUse", `{"cwd": "` + wt + `"}`, as(tok1), 400, `no toolName`},
		{"unknown event", "/hooks/copilot?event=somethingNew", pre, as(tok1), 200, `{}`},
		{"another agent", "/hooks/gemini?event=preToolUse", pre, nil, 404, `"unknown_agent"`},
	} {
		code, _, out := ts.do(t, "POST", tc.path, tc.body, tc.hdr)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%s: %d %s, want %d with %s", tc.name, code, out, tc.code, tc.want)
		}
	}
	if got := records(); len(got) != 0 {
		t.Fatalf("refused and ignored events recorded %v", got)
	}

	// The session's own token: preToolUse, the write, postToolUse.
	if code, _, out := ts.do(t, "POST", "/hooks/copilot?event=preToolUse", pre, as(tok1)); code != 200 || out != "{}" {
		t.Fatalf("preToolUse: %d %s", code, out)
	}
	if err := os.WriteFile(filepath.Join(wt, "hello.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, out := ts.do(t, "POST", "/hooks/copilot?event=postToolUse", post, as(tok1)); code != 200 || out != "{}" {
		t.Fatalf("postToolUse: %d %s", code, out)
	}
	if code, _, out := ts.do(t, "POST", "/hooks/copilot?event=agentStop", `{"sessionId": "cop-1", "cwd": "`+wt+`", "stopReason": "end_turn"}`, as(tok1)); code != 200 || out != "{}" {
		t.Fatalf("agentStop: %d %s", code, out)
	}
	got := records()
	if len(got) != 1 || !strings.HasPrefix(got[0], "copilot-") || !strings.HasSuffix(got[0], "-1 Write hello.txt copilot") {
		t.Fatalf("records %v, want hello.txt under copilot-<hex>-1", got)
	}
}
