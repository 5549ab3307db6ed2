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

// TestAcceptAsksBeforeEarlier (issue 42, item 12): in review mode,
// accepting the later of two pending changes of a file would apply the
// earlier one too. Every client is asked first: without with_earlier the
// accept (and a hunk decision that settles the change) is refused with
// 409 needs_earlier naming the earlier change, and nothing reaches the
// workspace; dry_run answers what it would take and changes nothing;
// with_earlier applies both, and the answer names the earlier one.
func TestAcceptAsksBeforeEarlier(t *testing.T) {
	ts := start(t, server.Config{})
	s := ts.session(t, `{"name":"s","mode":"review"}`)
	orig, _ := os.ReadFile(filepath.Join(ts.ws, "f.txt"))
	ts.bash(t, s, "r1", "f.txt", "one\n")
	ts.bash(t, s, "r2", "f.txt", "one\ntwo\n")
	ws := func() string {
		b, _ := os.ReadFile(filepath.Join(ts.ws, "f.txt"))
		return string(b)
	}
	statuses := func() string {
		_, _, body := ts.do(t, "GET", "/sessions/"+s.ID+"/file-changes", "", nil)
		var recs []prsm.Record
		json.Unmarshal([]byte(body), &recs)
		var out []string
		for _, r := range recs {
			out = append(out, r.ID+"="+r.Status)
		}
		return strings.Join(out, " ")
	}
	const untouched = "r1:0=pending r2:0=pending"
	if got := statuses(); got != untouched || ws() != string(orig) {
		t.Fatalf("before: %s; workspace %q", got, ws())
	}
	base := "/sessions/" + s.ID + "/file-changes/r2:0"
	for _, req := range []struct{ path, body string }{
		{base + "/accept", ""},
		{base + "/accept", `{"with_earlier":false}`},
		{base + "/hunks/0/accept", ""},
		{base + "/hunks", `{"accept":[0]}`},
	} {
		status, _, body := ts.do(t, "POST", req.path, req.body, nil)
		var e api.ErrorBody
		json.Unmarshal([]byte(body), &e)
		if status != 409 || e.Code != "needs_earlier" || !strings.Contains(e.Error, "r1:0 (f.txt)") || !strings.Contains(e.Hint, "with_earlier") {
			t.Errorf("POST %s %s: %d %s; want 409 needs_earlier naming r1:0", req.path, req.body, status, body)
		}
		if got := statuses(); got != untouched || ws() != string(orig) {
			t.Fatalf("a refused accept changed something: %s; workspace %q", got, ws())
		}
	}

	status, _, body := ts.do(t, "POST", base+"/accept", `{"dry_run":true}`, nil)
	var ans api.Records
	if err := json.Unmarshal([]byte(body), &ans); err != nil || status != 200 {
		t.Fatalf("dry run: %d %s", status, body)
	}
	if len(ans.Records) != 1 || ans.Records[0].ID != "r2:0" || len(ans.Earlier) != 1 || ans.Earlier[0].ID != "r1:0" || ans.Earlier[0].Status != prsm.StatusPending {
		t.Fatalf("dry run answer: %s", body)
	}
	if got := statuses(); got != untouched || ws() != string(orig) {
		t.Fatalf("a dry run changed something: %s; workspace %q", got, ws())
	}
	// The earlier change alone needs no leave, and a hunk route refuses
	// a dry run.
	if status, _, body := ts.do(t, "POST", "/sessions/"+s.ID+"/file-changes/r1:0/accept", `{"dry_run":true}`, nil); status != 200 || strings.Contains(body, `"earlier"`) {
		t.Fatalf("dry run of r1: %d %s", status, body)
	}
	if status, _, body := ts.do(t, "POST", base+"/hunks/0/accept", `{"dry_run":true}`, nil); status != 400 {
		t.Fatalf("a hunk's dry run: %d %s", status, body)
	}

	status, _, body = ts.do(t, "POST", base+"/accept", `{"with_earlier":true}`, nil)
	ans = api.Records{}
	if err := json.Unmarshal([]byte(body), &ans); err != nil || status != 200 {
		t.Fatalf("accept with earlier: %d %s", status, body)
	}
	if len(ans.Records) != 2 || len(ans.Earlier) != 1 || ans.Earlier[0].ID != "r1:0" || ans.Earlier[0].Status != prsm.StatusAccepted {
		t.Fatalf("answer: %s", body)
	}
	if got := statuses(); got != "r1:0=accepted r2:0=accepted" || ws() != "one\ntwo\n" {
		t.Fatalf("after: %s; workspace %q", got, ws())
	}
}

// session starts a session with the body of POST /sessions.
func (ts *testServer) session(t *testing.T, body string) prsm.Session {
	t.Helper()
	status, _, ans := ts.do(t, "POST", "/sessions", body, nil)
	var s prsm.Session
	if status != 201 || json.Unmarshal([]byte(ans), &s) != nil {
		t.Fatalf("start session: %d %s", status, ans)
	}
	return s
}

// bash is the agent's tool call id (a Bash, its records id:0...) that
// writes content to rel in the session's worktree.
func (ts *testServer) bash(t *testing.T, s prsm.Session, id, rel, content string) {
	t.Helper()
	if status, _, body := ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls", `{"tool_call_id":"`+id+`","tool_name":"Bash"}`, nil); status != 200 {
		t.Fatalf("capture %s: %d %s", id, status, body)
	}
	if err := os.WriteFile(filepath.Join(s.WorktreePath, rel), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if status, _, body := ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls/"+id+"/complete", `{}`, nil); status != 200 {
		t.Fatalf("complete %s: %d %s", id, status, body)
	}
}
