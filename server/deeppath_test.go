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

// TestTooLongPathIsShown: a file the agent made deeper than the system's
// path limit cannot be recorded; the tool call's complete answer warns
// of it, and GET /status (prsm status) shows it as a notice.
func TestTooLongPathIsShown(t *testing.T) {
	ts := start(t, server.Config{})
	status, _, body := ts.do(t, "POST", "/sessions", `{"name":"s"}`, nil)
	if status != 201 {
		t.Fatal(body)
	}
	var s prsm.Session
	json.Unmarshal([]byte(body), &s)
	if status, _, body := ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls", `{"tool_call_id":"b1","tool_name":"Bash"}`, nil); status != 200 {
		t.Fatalf("capture: %d %s", status, body)
	}
	// 2040 directories, one inside the other, made one at a time.
	r, err := os.OpenRoot(s.WorktreePath)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2040; i++ {
		if err := r.Mkdir("d", 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := r.OpenRoot("d")
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		r = next
	}
	err = r.WriteFile("f.txt", []byte("deep\n"), 0o644)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(s.WorktreePath, "b.txt"), []byte("b\n"), 0o644)
	status, _, body = ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls/b1/complete", `{}`, nil)
	var ans struct {
		Records  []prsm.Record
		Warnings []string
	}
	if err := json.Unmarshal([]byte(body), &ans); err != nil || status != 200 {
		t.Fatalf("complete: %d %.500s", status, body)
	}
	if len(ans.Records) != 1 || ans.Records[0].RelPath != "b.txt" {
		t.Errorf("records: %.500s", body)
	}
	if len(ans.Warnings) != 1 || !strings.HasPrefix(ans.Warnings[0], "d/d/d/") || !strings.Contains(ans.Warnings[0], "path too long to record") {
		t.Fatalf("warnings: %q", ans.Warnings)
	}
	status, _, body = ts.do(t, "GET", "/status", "", nil)
	var st api.StatusResponse
	if err := json.Unmarshal([]byte(body), &st); err != nil || status != 200 {
		t.Fatalf("status: %d %s", status, body)
	}
	if want := "session " + s.ID + ": " + ans.Warnings[0]; len(st.Notices) != 1 || st.Notices[0] != want {
		t.Errorf("notices = %q, want %q", st.Notices, want)
	}
}
