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

// TestCompleteRespondAsync: a complete sent with `Prefer: respond-async`
// (an agent's hook, which does not read the records) answers 202 with no
// records and Preference-Applied; the records are made all the same, and
// the next read of the session sees them, the workspace written. Without
// the header, or with another preference, complete answers 200 with its
// records as the contract says. A bad request is refused the same way
// with or without it.
func TestCompleteRespondAsync(t *testing.T) {
	ts := start(t, server.Config{})
	status, _, body := ts.do(t, "POST", "/sessions", `{"name":"s"}`, nil)
	if status != 201 {
		t.Fatal(body)
	}
	var s prsm.Session
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatal(err)
	}
	call := func(id, file, content string, hdr map[string]string) (int, map[string][]string, string) {
		t.Helper()
		args, _ := json.Marshal(map[string]any{"tool_call_id": id, "tool_name": "Write", "agent_id": "claude",
			"args": map[string]string{"file_path": filepath.Join(s.WorktreePath, file), "content": content}})
		if status, _, body := ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls", string(args), nil); status != 200 {
			t.Fatalf("capture %s: %d %s", id, status, body)
		}
		if err := os.WriteFile(filepath.Join(s.WorktreePath, file), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		code, h, out := ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls/"+id+"/complete", `{"result":{"ok":true}}`, hdr)
		return code, h, out
	}
	code, h, out := call("w1", "one.txt", "one\n", map[string]string{"Prefer": "respond-async"})
	if code != 202 || strings.TrimSpace(out) != `{"records":[]}` || h["Preference-Applied"] == nil || h["Preference-Applied"][0] != "respond-async" {
		t.Fatalf("complete with Prefer: respond-async: %d %v %s", code, h["Preference-Applied"], out)
	}
	code, _, out = call("w2", "two.txt", "two\n", map[string]string{"Prefer": "return=minimal, Respond-Async; x=1"})
	if code != 202 {
		t.Fatalf("respond-async among other preferences: %d %s", code, out)
	}
	code, h, out = call("w3", "three.txt", "three\n", map[string]string{"Prefer": "return=minimal"})
	if code != 200 || !strings.Contains(out, `"id":"w3"`) || h["Preference-Applied"] != nil {
		t.Fatalf("complete with another preference: %d %s", code, out)
	}
	status, _, body = ts.do(t, "GET", "/sessions/"+s.ID+"/file-changes", "", nil)
	var recs []prsm.Record
	if err := json.Unmarshal([]byte(body), &recs); status != 200 || err != nil {
		t.Fatalf("file-changes: %d %s", status, body)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.ID+" "+r.RelPath+" "+r.SyncState)
	}
	if strings.Join(got, ",") != "w1 one.txt synced,w2 two.txt synced,w3 three.txt synced" {
		t.Fatalf("records: %v", got)
	}
	for file, want := range map[string]string{"one.txt": "one\n", "two.txt": "two\n", "three.txt": "three\n"} {
		if b, err := os.ReadFile(filepath.Join(ts.ws, file)); err != nil || string(b) != want {
			t.Errorf("workspace %s = %q, %v", file, b, err)
		}
	}
	// Refused as without the header: nothing is queued.
	for _, tc := range []struct{ path, body, want string }{
		{"/sessions/" + s.ID + "/tool-calls/bad%20id/complete", `{}`, "invalid_tool_call_id"},
		{"/sessions/nosuch/tool-calls/w9/complete", `{}`, "session_not_found"},
		{"/sessions/" + s.ID + "/tool-calls/w9/complete", `{"result":`, "bad_json"},
	} {
		code, _, out := ts.do(t, "POST", tc.path, tc.body, map[string]string{"Prefer": "respond-async"})
		if code < 400 || !strings.Contains(out, tc.want) {
			t.Errorf("POST %s with respond-async: %d %s, want %s", tc.path, code, out, tc.want)
		}
	}
}
