package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/server"
)

// POST .../resolve settles a change in conflict; a missing or unknown
// "how", bad JSON or a change not in conflict change nothing.
func TestResolveRoute(t *testing.T) {
	ts := start(t, server.Config{})
	status, _, body := ts.do(t, "POST", "/sessions", `{"name":"s"}`, nil)
	if status != 201 {
		t.Fatal(body)
	}
	var s prsm.Session
	json.Unmarshal([]byte(body), &s)
	orig, _ := os.ReadFile(filepath.Join(ts.ws, "a.txt"))
	if status, _, body := ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls", `{"tool_call_id":"c1","tool_name":"Bash"}`, nil); status != 200 {
		t.Fatal(body)
	}
	os.WriteFile(filepath.Join(s.WorktreePath, "a.txt"), []byte("agent\n"), 0o644)
	os.WriteFile(filepath.Join(ts.ws, "a.txt"), []byte("mine\n"), 0o644)
	if status, _, body := ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls/c1/complete", `{}`, nil); status != 200 || !strings.Contains(body, `"sync_state":"conflict"`) {
		t.Fatalf("no conflict (workspace was %q): %d %s", orig, status, body)
	}
	ws := func() string { b, _ := os.ReadFile(filepath.Join(ts.ws, "a.txt")); return string(b) }
	path := "/sessions/" + s.ID + "/file-changes/c1:0/resolve"
	for _, bad := range []struct {
		body   string
		status int
		want   string
	}{
		{``, 400, "invalid_how"},
		{`{"how":"theirs"}`, 400, "invalid_how"},
		{`{"how":`, 400, "bad_json"},
	} {
		status, _, body := ts.do(t, "POST", path, bad.body, nil)
		if status != bad.status || !strings.Contains(body, bad.want) {
			t.Errorf("body %q: %d %s, want %d %s", bad.body, status, body, bad.status, bad.want)
		}
	}
	if ws() != "mine\n" {
		t.Fatalf("bad requests changed the workspace: %q", ws())
	}
	status, _, body = ts.do(t, "POST", path, `{"how":"agent"}`, nil)
	if status != 200 || ws() != "agent\n" || !strings.Contains(body, `"status":"accepted"`) {
		t.Fatalf("agent: %d %s; workspace %q", status, body, ws())
	}
	if status, _, body := ts.do(t, "POST", path, `{"how":"mine"}`, nil); status != 409 || !strings.Contains(body, "not_in_conflict") {
		t.Fatalf("settled: %d %s", status, body)
	}
}
