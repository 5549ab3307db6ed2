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

// mintHookToken asks the server, with its own token, for a hook token of
// session id.
func mintHookToken(t *testing.T, ts *testServer, id string) string {
	t.Helper()
	code, _, out := ts.do(t, "POST", api.HookTokensPath(id), "", nil)
	var ht api.HookToken
	if code != 201 || json.Unmarshal([]byte(out), &ht) != nil || ht.SessionID != id || !strings.HasPrefix(ht.Token, "prsm-hook-") {
		t.Fatalf("mint a hook token of %s: %d %s", id, code, out)
	}
	return ht.Token
}

// A session's hook token sends that session's hook events, over the http
// hook route and the routes of prsm's command hooks, and nothing else:
// not another session's events, not a review decision (the accept-all of
// the issue), not a review-page login code, not a listing, not a new
// token, not the end of its session. It still works after a restart of
// the server, and is refused once its session has ended.
func TestHookTokenScope(t *testing.T) {
	ts := start(t, server.Config{})
	ctx := context.Background()
	s1, err := ts.eng.StartSession(ctx, api.StartRequest{Name: "mine", Mode: prsm.ModeReview})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := ts.eng.StartSession(ctx, api.StartRequest{Name: "other", Mode: prsm.ModeReview})
	if err != nil {
		t.Fatal(err)
	}
	tok := mintHookToken(t, ts, s1.ID)
	if tok == ts.token || strings.Contains(tok, ts.token) {
		t.Fatal("the hook token holds the server's token")
	}
	as := func(token string) map[string]string { return map[string]string{"Authorization": "Bearer " + token} }
	hookDo := func(method, path, body string) (int, string) {
		t.Helper()
		code, _, out := ts.do(t, method, path, body, as(tok))
		return code, out
	}
	records := func(id string) []*prsm.Record {
		t.Helper()
		recs, err := ts.eng.Records(ctx, id, "", "")
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}

	// Its own session's events: the http hook, and the command hooks' routes.
	wt := s1.WorktreePath
	if code, out := hookDo("POST", "/hooks/claude", `{"hook_event_name":"UserPromptSubmit","cwd":"`+wt+`","prompt":"go"}`); code != 200 || out != "{}" {
		t.Fatalf("UserPromptSubmit with the hook token: %d %s", code, out)
	}
	in := map[string]any{"file_path": filepath.Join(wt, "a.txt"), "content": "A\n"}
	if code, out := hookDo("POST", "/hooks/claude", claudeEvent(t, "PreToolUse", wt, "toolu_t1", "Write", in)); code != 200 {
		t.Fatalf("PreToolUse with the hook token: %d %s", code, out)
	}
	if err := os.WriteFile(filepath.Join(wt, "a.txt"), []byte("A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := hookDo("POST", "/hooks/claude", claudeEvent(t, "PostToolUse", wt, "toolu_t1", "Write", in)); code != 200 {
		t.Fatalf("PostToolUse with the hook token: %d %s", code, out)
	}
	sp := api.SessionPath(s1.ID)
	for _, c := range []struct{ path, body string }{
		{sp + "/turns", `{"prompt":"again"}`},
		{sp + "/tool-calls", `{"tool_call_id":"toolu_t2","tool_name":"Bash","args":{"command":"true"}}`},
		{api.CompletePath(s1.ID, "toolu_t2"), `{"result":{}}`},
		{sp + "/turn-end", ``},
	} {
		if code, out := hookDo("POST", c.path, c.body); code/100 != 2 {
			t.Fatalf("POST %s with the hook token: %d %s", c.path, code, out)
		}
	}
	recs := records(s1.ID)
	if len(recs) != 1 || recs[0].ToolCallID != "toolu_t1" || recs[0].Status != prsm.StatusPending {
		t.Fatalf("records of the hook token's session: %+v", recs)
	}

	// Everything else is refused, and changes nothing.
	wt2 := s2.WorktreePath
	if err := os.WriteFile(filepath.Join(wt2, "b.txt"), []byte("B\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in2 := map[string]any{"file_path": filepath.Join(wt2, "b.txt"), "content": "B\n"}
	for _, c := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"POST", sp + "/file-changes/accept-all", "", 403, "hook_token_scope"},
		{"POST", "/file-changes/accept-all", "", 403, "hook_token_scope"},
		{"POST", sp + "/file-changes/toolu_t1/accept", "", 403, "hook_token_scope"},
		{"POST", sp + "/file-changes/reject-all", "", 403, "hook_token_scope"},
		{"POST", "/ui/codes", "", 403, "hook_token_scope"},
		{"GET", "/status", "", 403, "hook_token_scope"},
		{"GET", "/sessions", "", 403, "hook_token_scope"},
		{"GET", sp, "", 403, "hook_token_scope"},
		{"GET", "/events", "", 403, "hook_token_scope"},
		{"POST", api.HookTokensPath(s1.ID), "", 403, "hook_token_scope"},
		{"DELETE", sp, "", 403, "hook_token_scope"},
		{"POST", sp + "/flush", "", 403, "hook_token_scope"},
		{"POST", sp + "/rollback", `{"last":1}`, 403, "hook_token_scope"},
		{"POST", "/shutdown", "", 403, "hook_token_scope"},
		{"POST", "/sessions", `{"name":"x"}`, 403, "hook_token_scope"},
		// another session, by its route, by a prefix of its own id, or by
		// an event whose cwd is the other worktree
		{"POST", api.SessionPath(s2.ID) + "/turns", `{"prompt":"x"}`, 403, "hook_token_scope"},
		{"POST", api.SessionPath(s2.ID) + "/tool-calls", `{"tool_call_id":"toolu_x","tool_name":"Write","args":{}}`, 403, "hook_token_scope"},
		{"POST", api.SessionPath(s1.ID[:6]) + "/turns", `{"prompt":"x"}`, 403, "hook_token_scope"},
		{"POST", "/hooks/claude", claudeEvent(t, "PreToolUse", wt2, "toolu_x3", "Write", in2), 403, "hook_token_scope"},
		{"POST", "/hooks/claude", claudeEvent(t, "PostToolUse", wt2, "toolu_x3", "Write", in2), 403, "hook_token_scope"},
	} {
		code, out := hookDo(c.method, c.path, c.body)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("%s %s with the hook token: %d %s, want %d %s", c.method, c.path, code, out, c.code, c.want)
		}
	}
	if recs := records(s1.ID); len(recs) != 1 || recs[0].Status != prsm.StatusPending {
		t.Fatalf("after the refusals, session 1's records: %+v", recs)
	}
	if recs := records(s2.ID); len(recs) != 0 {
		t.Fatalf("the refused events recorded in session 2: %+v", recs)
	}
	if got, _ := ts.eng.Session(ctx, s1.ID); got.Status != prsm.SessionActive {
		t.Fatalf("session 1 is %s", got.Status)
	}
	// A made-up token of the same shape, and the hook token in a query.
	if code, _, out := ts.do(t, "POST", "/hooks/claude", `{"hook_event_name":"Stop","cwd":"`+wt+`"}`, as("prsm-hook-"+strings.Repeat("0", 64))); code != 401 || !strings.Contains(out, `"unauthorized"`) {
		t.Errorf("a made-up hook token: %d %s", code, out)
	}

	// A new server on the same store (a restart) takes it.
	ts.stop()
	ts.stop = func() {}
	ts2 := restart(t, ts)
	tok2 := func(method, path, body string) (int, string) {
		t.Helper()
		code, _, out := ts2.do(t, method, path, body, as(tok))
		return code, out
	}
	if code, out := tok2("POST", "/hooks/claude", `{"hook_event_name":"Stop","cwd":"`+wt+`"}`); code != 200 {
		t.Fatalf("the hook token after a restart: %d %s", code, out)
	}
	if code, out := tok2("POST", sp+"/file-changes/accept-all", ""); code != 403 {
		t.Fatalf("accept-all with the hook token after a restart: %d %s", code, out)
	}

	// The session ends: the token is refused on every route, with the
	// code the hooks take for "nothing to do".
	if code, _, out := ts2.do(t, "DELETE", sp+"?discard=true", "", nil); code != 200 {
		t.Fatalf("end session: %d %s", code, out)
	}
	for _, c := range []struct{ path, body string }{
		{"/hooks/claude", `{"hook_event_name":"UserPromptSubmit","cwd":"` + wt + `","prompt":"late"}`},
		{sp + "/turns", `{"prompt":"late"}`},
		{sp + "/tool-calls", `{"tool_call_id":"toolu_t9","tool_name":"Bash","args":{}}`},
		{sp + "/file-changes/accept-all", ``},
	} {
		if code, out := tok2("POST", c.path, c.body); code != 401 || !strings.Contains(out, `"session_ended"`) {
			t.Errorf("POST %s with the hook token of an ended session: %d %s", c.path, code, out)
		}
	}
	if code, _, out := ts2.do(t, "POST", api.HookTokensPath(s1.ID), "", nil); code != 409 || !strings.Contains(out, "session_ended") {
		t.Errorf("a hook token of an ended session: %d %s", code, out)
	}
}
