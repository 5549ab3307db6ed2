package server_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/server"
)

// escapeAll percent-encodes every byte of s: what a client that escapes
// more than it must (encodeURIComponent writes ":" as %3A) may send.
func escapeAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}

// TestIDsPercentEncoded: every route that takes ids in its path (session,
// record, tool call and checkpoint ids, checkpoint names) takes them
// percent-encoded too, byte by byte, and answers as it does to the plain
// ids. Shell records' ids hold a ":" ("b1:0"), which encodeURIComponent
// and Python's quote(s, safe="") write %3A.
func TestIDsPercentEncoded(t *testing.T) {
	ts := start(t, server.Config{})
	status, _, body := ts.do(t, "POST", "/sessions", `{"name":"s"}`, nil)
	if status != 201 {
		t.Fatal(body)
	}
	var s prsm.Session
	json.Unmarshal([]byte(body), &s)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/sessions/" + s.ID + "/tool-calls", `{"tool_call_id":"b1","tool_name":"Bash","args":{"command":"x"}}`},
		{"POST", "/sessions/" + s.ID + "/checkpoints", `{"name":"cp 1/x"}`},
	} {
		if status, _, body := ts.do(t, c.method, c.path, c.body, nil); status/100 != 2 {
			t.Fatalf("%s %s: %d %s", c.method, c.path, status, body)
		}
	}
	for _, f := range []string{"a.txt", "b.txt"} {
		os.WriteFile(filepath.Join(s.WorktreePath, f), []byte("by b1 "+f+"\n"), 0o644)
	}
	if status, _, body := ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls/b1/complete", `{}`, nil); status != 200 ||
		!strings.Contains(body, `"id":"b1:0"`) || !strings.Contains(body, `"id":"b1:1"`) {
		t.Fatalf("complete: %d %s", status, body)
	}
	var cps []prsm.Checkpoint
	_, _, body = ts.do(t, "GET", "/sessions/"+s.ID+"/checkpoints", "", nil)
	json.Unmarshal([]byte(body), &cps)
	var named, auto prsm.Checkpoint
	for _, cp := range cps {
		if cp.Kind == prsm.CheckpointManual {
			named = cp
		} else {
			auto = cp
		}
	}
	if len(cps) != 2 || named.ID == "" || auto.ID == "" {
		t.Fatalf("checkpoints: %s", body)
	}

	// {s} is the session id, {r} and {r2} record ids, {tc} a tool call
	// id, {cp} a checkpoint's name (which the plain path holds escaped as
	// url.PathEscape escapes it: it has a "/") and {auto} a checkpoint's
	// id. The
	// encoded request goes first; then the plain one must answer the same
	// (want "") or, when the first changed what the second would do, the
	// encoded one must have answered with want.
	routes := []struct{ method, path, body, want string }{
		{"GET", "/sessions/{s}", "", ""},
		{"GET", "/sessions/{s}/file-changes", "", ""},
		{"GET", "/sessions/{s}/file-changes/{r}", "", ""},
		{"GET", "/sessions/{s}/file-changes/{tc}", "", ""},
		{"GET", "/sessions/{s}/file-changes/{r}/diff", "", ""},
		{"GET", "/sessions/{s}/file-changes/{r}/content?side=after", "", ""},
		{"GET", "/ui/api/sessions/{s}/file-changes/{r}/workspace", "", ""},
		{"POST", "/sessions/{s}/file-changes/{r}/accept", "", ""},
		{"POST", "/sessions/{s}/file-changes/{r2}/reject", "", `"status":"rejected"`},
		{"POST", "/sessions/{s}/file-changes/accept-all", "", ""},
		{"POST", "/sessions/{s}/file-changes/reject-all", "", ""},
		{"POST", "/sessions/{s}/tool-calls", `{"tool_call_id":"t2","tool_name":"Read"}`, ""},
		{"POST", "/sessions/{s}/tool-calls/{t2}/complete", `{}`, ""},
		{"POST", "/sessions/{s}/flush", "", ""},
		{"POST", "/sessions/{s}/turn-end", "", ""},
		{"POST", "/sessions/{s}/turns", `{"message_index":7}`, `"kind":"auto"`},
		{"GET", "/sessions/{s}/checkpoints", "", `"name":"cp 1/x"`},
		{"POST", "/sessions/{s}/checkpoints", `{"name":"cp 2"}`, `"name":"cp 2"`},
		{"GET", "/sessions/{s}/checkpoints/{cp}", "", ""},
		{"GET", "/sessions/{s}/checkpoints/{auto}", "", ""},
		{"PUT", "/sessions/{s}/checkpoints/{cp}", `{"annotation":"note"}`, ""},
		{"GET", "/sessions/{s}/checkpoints/{cp}/diff", "", ""},
		{"GET", "/sessions/{s}/checkpoints/{cp}/diff/{auto}", "", ""},
		{"GET", "/sessions/{s}/checkpoints/{auto}/rewind/preview", "", ""},
		{"POST", "/sessions/{s}/checkpoints/{auto}/rewind?dry_run=true", "", ""},
		{"POST", "/sessions/{s}/rollback", `{"last":1,"dry_run":true}`, ""},
		{"DELETE", "/sessions/{s}/checkpoints/{cp}", "", `"name":"cp 1/x"`},
		{"DELETE", "/sessions/{s}", "", `"status":"ended"`},
	}
	ids := []string{"{s}", s.ID, "{r2}", "b1:1", "{r}", "b1:0", "{tc}", "b1", "{t2}", "t2", "{cp}", named.Name, "{auto}", auto.ID}
	var plainIDs, escaped []string
	for i := 0; i < len(ids); i += 2 {
		plainIDs = append(plainIDs, ids[i], url.PathEscape(ids[i+1]))
		escaped = append(escaped, ids[i], escapeAll(ids[i+1]))
	}
	plain, encoded := strings.NewReplacer(plainIDs...), strings.NewReplacer(escaped...)
	for _, r := range routes {
		es, _, eb := ts.do(t, r.method, encoded.Replace(r.path), r.body, nil)
		if r.want != "" {
			if es/100 != 2 || !strings.Contains(eb, r.want) {
				t.Errorf("%s %s: %d %.300s, want %q", r.method, encoded.Replace(r.path), es, eb, r.want)
			}
			continue
		}
		ps, _, pb := ts.do(t, r.method, plain.Replace(r.path), r.body, nil)
		if ps/100 != 2 {
			t.Errorf("%s %s: %d %.300s", r.method, plain.Replace(r.path), ps, pb)
		}
		// A bulk decision's answer names its job, new each time.
		eb, pb = jobRE.ReplaceAllString(eb, `"job":{}`), jobRE.ReplaceAllString(pb, `"job":{}`)
		if es != ps || eb != pb {
			t.Errorf("%s %s: %d %.300s\nplain: %d %.300s", r.method, encoded.Replace(r.path), es, eb, ps, pb)
		}
	}
}

// jobRE is a bulk decision's job in an answer: its id and times differ
// from one request to the next.
var jobRE = regexp.MustCompile(`"job":\{[^{}]*\}`)
