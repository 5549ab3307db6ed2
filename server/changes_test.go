package server_test

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/server"
)

// TestChangeRoutes drives a tool call over HTTP and checks the records, the
// workspace, the events, and the errors of bad requests.
func TestChangeRoutes(t *testing.T) {
	ts := start(t, server.Config{})
	resp := ts.events(t)
	events := make(chan string, 20)
	go readEvents(t, resp.Body, 7, events)

	status, _, body := ts.do(t, "POST", "/sessions", `{"name":"s"}`, nil)
	if status != 201 {
		t.Fatal(body)
	}
	var s prsm.Session
	json.Unmarshal([]byte(body), &s)
	wtFile := filepath.Join(s.WorktreePath, "a.txt")
	args, _ := json.Marshal(map[string]any{"tool_call_id": "tc1", "tool_name": "Write", "agent_id": "claude",
		"args": map[string]string{"file_path": wtFile, "content": "new\n"}})
	if status, _, body := ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls", string(args), nil); status != 200 || !strings.Contains(body, `"tool_name":"Write"`) {
		t.Fatalf("capture: %d %s", status, body)
	}
	os.WriteFile(wtFile, []byte("new\n"), 0o644)
	status, _, body = ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls/tc1/complete", `{"result":{"ok":true}}`, nil)
	if status != 200 {
		t.Fatalf("complete: %d %s", status, body)
	}
	var recs struct{ Records []prsm.Record }
	json.Unmarshal([]byte(body), &recs)
	if len(recs.Records) != 1 || recs.Records[0].ID != "tc1" || recs.Records[0].SyncState != "synced" || *recs.Records[0].NewContent != "new\n" {
		t.Fatalf("records: %s", body)
	}
	if b, _ := os.ReadFile(filepath.Join(ts.ws, "a.txt")); string(b) != "new\n" {
		t.Errorf("workspace = %q", b)
	}
	// The checkpoint taken before the call, with its tree.
	status, _, body = ts.do(t, "GET", "/sessions/"+s.ID+"/checkpoints", "", nil)
	var cps []prsm.Checkpoint
	if json.Unmarshal([]byte(body), &cps); status != 200 || len(cps) != 1 || cps[0].ToolCallID != "tc1" || len(cps[0].Tree) != 40 {
		t.Fatalf("checkpoints: %d %s", status, body)
	}
	checks := []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"GET", "/sessions/" + s.ID + "/file-changes", "", 200, `"id":"tc1"`},
		{"GET", "/sessions/" + s.ID + "/file-changes?status=pending&file=a.txt", "", 200, `"rel_path":"a.txt"`},
		{"GET", "/sessions/" + s.ID + "/file-changes?status=accepted", "", 200, `[]`},
		{"GET", "/sessions/" + s.ID + "/file-changes?status=bogus", "", 400, `invalid_status`},
		{"GET", "/sessions/" + s.ID + "/file-changes?file=../x", "", 400, `invalid_path`},
		{"GET", "/sessions/" + s.ID + "/file-changes/tc1", "", 200, `"records":[{`},
		{"GET", "/sessions/" + s.ID + "/file-changes/tc1/diff", "", 200, "-a\n+new\n"},
		{"GET", "/sessions/" + s.ID + "/file-changes/tc1/content?side=before", "", 200, "a\n"},
		{"GET", "/sessions/" + s.ID + "/file-changes/tc1/content?side=after", "", 200, "new\n"},
		{"GET", "/sessions/" + s.ID + "/file-changes/tc1/content?side=middle", "", 400, "bad_side"},
		{"GET", "/sessions/" + s.ID + "/file-changes/nosuch", "", 404, "record_not_found"},
		{"POST", "/sessions/" + s.ID + "/file-changes/nosuch/reject", "", 404, "record_not_found"},
		{"POST", "/sessions/nosuchsession/file-changes/tc1/accept", "", 404, "session_not_found"},
		{"POST", "/sessions/nosuchsession/tool-calls", `{"tool_call_id":"x"}`, 404, "session_not_found"},
		{"POST", "/sessions/" + s.ID + "/tool-calls", `{"tool_call_id":`, 400, "bad_json"},
		{"POST", "/sessions/" + s.ID + "/tool-calls", `{"tool_call_id":"../x"}`, 400, "invalid_tool_call_id"},
		{"POST", "/sessions/" + s.ID + "/tool-calls/tc1/complete", `[1,2`, 400, "bad_json"},
		// An empty file= is a script's empty variable, not "every file".
		{"POST", "/sessions/" + s.ID + "/file-changes/reject-all?file=", "", 400, "invalid_path"},
		{"POST", "/sessions/" + s.ID + "/file-changes/accept-all?file=", "", 400, "invalid_path"},
		{"POST", "/sessions/" + s.ID + "/file-changes/tc1/accept", "", 200, `"status":"accepted"`},
		{"POST", "/sessions/" + s.ID + "/file-changes/tc1/accept", "", 200, `"status":"accepted"`},
		{"POST", "/sessions/" + s.ID + "/file-changes/tc1/reject", "", 200, `"status":"rejected"`},
		{"POST", "/sessions/" + s.ID + "/file-changes/tc1/reject", "", 200, `"records":[]`},
		{"POST", "/sessions/" + s.ID + "/file-changes/reject-all", "", 200, `"records":[]`},
		{"POST", "/file-changes/accept-all", "", 200, `"records":[]`},
	}
	for _, c := range checks {
		status, _, body := ts.do(t, c.method, c.path, c.body, nil)
		if status != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s %s: %d %.200s, want %d %q", c.method, c.path, status, body, c.status, c.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ts.ws, "a.txt")); string(b) != "a\n" {
		t.Errorf("workspace after reject = %q", b)
	}
	// The checkpoint before the tool call is announced once its tree is
	// built (by the flusher, or by a read of the checkpoints), so its
	// place among the others varies; theirs does not.
	var got []string
	var ckpts []string
	timeout := time.After(10 * time.Second)
	for len(got)+len(ckpts) < 7 {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("stream ended: %v", got)
			}
			typ, data, _ := strings.Cut(ev, " ")
			if typ == "checkpoint_created" {
				ckpts = append(ckpts, data)
				continue
			}
			got = append(got, typ)
		case <-timeout:
			t.Fatalf("events so far: %v %v", got, ckpts)
		}
	}
	if want := "session_updated file_changed session_updated file_change_status session_updated file_change_status"; strings.Join(got, " ") != want {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	var cp prsm.Checkpoint
	if len(ckpts) != 1 || json.Unmarshal([]byte(ckpts[0]), &cp) != nil || cp.ToolCallID != "tc1" || len(cp.Tree) != 40 {
		t.Errorf("checkpoint_created events: %v", ckpts)
	}
}

// A checkpoint named with characters a URL escapes ("/", " ", "%") is
// found by its name in the path, escaped as the Go client escapes it.
func TestCheckpointByEscapedName(t *testing.T) {
	ts := start(t, server.Config{})
	status, _, body := ts.do(t, "POST", "/sessions", `{"name":"s"}`, nil)
	if status != 201 {
		t.Fatal(body)
	}
	var s prsm.Session
	json.Unmarshal([]byte(body), &s)
	for _, name := range []string{"feat/x y", "50%2f off", "plain"} {
		status, _, body := ts.do(t, "POST", "/sessions/"+s.ID+"/checkpoints", `{"name":`+strconv.Quote(name)+`}`, nil)
		var made prsm.Checkpoint
		if json.Unmarshal([]byte(body), &made); status != 201 || made.Name != name {
			t.Fatalf("create %q: %d %s", name, status, body)
		}
		for _, sub := range []string{"", "/rewind/preview"} {
			status, _, body = ts.do(t, "GET", "/sessions/"+s.ID+"/checkpoints/"+url.PathEscape(name)+sub, "", nil)
			if status != 200 || !strings.Contains(body, made.ID) {
				t.Fatalf("GET %q%s: %d %s", name, sub, status, body)
			}
		}
	}
}
