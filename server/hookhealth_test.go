package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/server"
)

// TestStatusHookHealth: GET /status lists, per active session, the agent
// whose hooks reported and when the last hook event came; a turn whose
// change came only through the watcher, after the hooks had reported,
// carries the warning.
func TestStatusHookHealth(t *testing.T) {
	ts := start(t, server.Config{})
	status, _, body := ts.do(t, "POST", "/sessions", `{"name":"s","agent_id":"codex"}`, nil)
	if status != 201 {
		t.Fatal(body)
	}
	var s prsm.Session
	json.Unmarshal([]byte(body), &s)
	hooks := func() []api.HookHealth {
		t.Helper()
		status, _, body := ts.do(t, "GET", "/status", "", nil)
		var st api.StatusResponse
		if err := json.Unmarshal([]byte(body), &st); err != nil || status != 200 {
			t.Fatalf("status: %d %s", status, body)
		}
		return st.Hooks
	}
	if h := hooks(); len(h) != 1 || h[0].SessionID != s.ID || h[0].Agent != "" || h[0].LastHookAt != nil || h[0].Warning != "" {
		t.Fatalf("before any hook: %+v", h)
	}
	post := func(path, body string) {
		t.Helper()
		if status, _, out := ts.do(t, "POST", "/sessions/"+s.ID+path, body, nil); status != 200 && status != 201 {
			t.Fatalf("%s: %d %s", path, status, out)
		}
	}
	post("/tool-calls", `{"tool_call_id":"c1","tool_name":"Write","agent_id":"gemini"}`)
	os.WriteFile(filepath.Join(s.WorktreePath, "a.txt"), []byte("a\n"), 0o644)
	post("/tool-calls/c1/complete", `{}`)
	h := hooks()
	if len(h) != 1 || h[0].Agent != "gemini" || h[0].LastHookAt == nil || h[0].Warning != "" {
		t.Fatalf("after a hook-reported call: %+v", h)
	}
	post("/turns", `{"prompt":"next"}`)
	os.WriteFile(filepath.Join(s.WorktreePath, "b.txt"), []byte("b\n"), 0o644)
	post("/turn-end", `{}`) // Stop records what no tool call claimed, as Watch
	h = hooks()
	if len(h) != 1 || !strings.Contains(h[0].Warning, "hooks are not firing in this worktree") {
		t.Fatalf("a watch-only turn: %+v", h)
	}
}
