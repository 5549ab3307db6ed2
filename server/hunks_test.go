package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/server"
)

// Per-hunk review over HTTP: one hunk's reject takes its lines out of the
// workspace and answers with the record and its hunks' states; the body
// form decides several at once; a hunk the record lacks is 404 with the
// valid range, invalid JSON is 400, and neither changes anything.
func TestHunkRoutes(t *testing.T) {
	ts := start(t, server.Config{})
	s := ts.session(t, `{"name":"s"}`)
	lines := "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"
	edited := "ONE\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n"
	ts.bash(t, s, "w1", "h.txt", lines)
	ts.bash(t, s, "e1", "h.txt", edited)
	ws := func() string {
		b, _ := os.ReadFile(filepath.Join(ts.ws, "h.txt"))
		return string(b)
	}
	if ws() != edited {
		t.Fatalf("workspace before: %q", ws())
	}
	base := "/sessions/" + s.ID + "/file-changes/e1:0/hunks"

	for _, bad := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"POST", base + "/2/reject", "", 404, "hunks 0 to 1"},
		{"POST", base + "/x/reject", "", 404, "no_hunk"},
		{"POST", base, `{"reject":[0]`, 400, "bad_json"},
		{"POST", base, `{}`, 400, "no hunk named"},
		{"POST", "/sessions/" + s.ID + "/file-changes/nope/hunks/0/reject", "", 404, "not_found"},
	} {
		status, _, body := ts.do(t, bad.method, bad.path, bad.body, nil)
		if status != bad.status || !strings.Contains(body, bad.want) {
			t.Errorf("%s %s %s: %d %s, want %d with %q", bad.method, bad.path, bad.body, status, body, bad.status, bad.want)
		}
	}
	if ws() != edited {
		t.Fatalf("bad requests changed the workspace: %q", ws())
	}

	status, _, body := ts.do(t, "POST", base+"/1/reject", "", nil)
	if status != 200 || ws() != "ONE\ntwo\nthree\nfour\nfive\nsix\nseven\n" {
		t.Fatalf("reject hunk 1: %d %s; workspace %q", status, body, ws())
	}
	if !strings.Contains(body, `"hunks":[{"index":0,"old_start":1,"old_lines":1,"new_start":1,"new_lines":1,"status":"pending"},{"index":1,"old_start":7,"old_lines":1,"new_start":7,"new_lines":1,"status":"rejected"}]`) {
		t.Fatalf("answer: %s", body)
	}
	// The opposite decision is a conflict; the body form accepts the rest.
	if status, _, body := ts.do(t, "POST", base+"/1/accept", "", nil); status != 409 || !strings.Contains(body, "hunk_decided") {
		t.Fatalf("accept a rejected hunk: %d %s", status, body)
	}
	status, _, body = ts.do(t, "POST", base, `{"accept":[0]}`, nil)
	if status != 200 || !strings.Contains(body, `"status":"partial"`) {
		t.Fatalf("accept hunk 0: %d %s", status, body)
	}
}
