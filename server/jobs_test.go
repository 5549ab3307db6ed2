package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/server"
)

// TestBulkAsJob: a client that prefers an early answer gets 202 and the
// job; GET /jobs/{id} follows it to its end; a discard goes the same way.
func TestBulkAsJob(t *testing.T) {
	ts := start(t, server.Config{})
	s := ts.newSession(t)
	capture, _ := json.Marshal(map[string]any{"tool_call_id": "gen", "tool_name": "Bash", "args": map[string]string{"command": "gen"}})
	if status, _, body := ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls", string(capture), nil); status != 200 {
		t.Fatalf("capture: %d %s", status, body)
	}
	const n = 40
	for i := 0; i < n; i++ {
		p := filepath.Join(s.WorktreePath, "gen", fmt.Sprintf("d%d", i%4), fmt.Sprintf("f%02d.txt", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(fmt.Sprintf("%d\n", i)), 0o644)
	}
	if status, _, body := ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls/gen/complete", `{}`, nil); status != 200 {
		t.Fatalf("complete: %d %s", status, body)
	}
	async := map[string]string{"Prefer": "respond-async"}
	status, hdr, body := ts.do(t, "POST", "/sessions/"+s.ID+"/file-changes/reject-all", "", async)
	var job api.Job
	if err := json.Unmarshal([]byte(body), &job); status != 202 || err != nil || job.Kind != api.JobRejectAll || job.Total != n || job.ID == "" {
		t.Fatalf("reject-all, async: %d %s", status, body)
	}
	if got := hdr.Get("Location"); got != "/jobs/"+job.ID {
		t.Errorf("Location: %q", got)
	}
	end := ts.awaitJob(t, job.ID)
	if end.State != api.JobDone || end.Done != n || end.Error != nil {
		t.Fatalf("job: %+v", end)
	}
	if _, err := os.Stat(filepath.Join(ts.ws, "gen")); !os.IsNotExist(err) {
		t.Errorf("workspace gen/ left: %v", err)
	}
	if status, _, body := ts.do(t, "GET", "/jobs/nosuch", "", nil); status != 404 || !json.Valid([]byte(body)) {
		t.Errorf("GET /jobs/nosuch: %d %s", status, body)
	}
	// A bad request is refused before any job starts.
	if status, _, body := ts.do(t, "POST", "/sessions/nosuch/file-changes/reject-all", "", async); status != 404 {
		t.Errorf("a session that is not there: %d %s", status, body)
	}

	// Without the preference, the answer is the job's end.
	f := filepath.Join(s.WorktreePath, "one.txt")
	capture, _ = json.Marshal(map[string]any{"tool_call_id": "w1", "tool_name": "Write", "args": map[string]string{"file_path": f}})
	ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls", string(capture), nil)
	os.WriteFile(f, []byte("one\n"), 0o644)
	ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls/w1/complete", `{}`, nil)
	status, _, body = ts.do(t, "DELETE", "/sessions/"+s.ID+"?discard=true", "", async)
	if json.Unmarshal([]byte(body), &job); status != 202 || job.Kind != api.JobDiscard || job.Total != 1 {
		t.Fatalf("discard, async: %d %s", status, body)
	}
	if end := ts.awaitJob(t, job.ID); end.State != api.JobDone {
		t.Fatalf("discard job: %+v", end)
	}
	status, _, body = ts.do(t, "GET", "/sessions/"+s.ID, "", nil)
	if json.Unmarshal([]byte(body), &s); status != 200 || s.Status != prsm.SessionEnded {
		t.Errorf("session after the discard: %d %s", status, body)
	}
	if _, err := os.Stat(filepath.Join(ts.ws, "one.txt")); !os.IsNotExist(err) {
		t.Errorf("workspace one.txt left: %v", err)
	}
}

// newSession starts a session named s.
func (ts *testServer) newSession(t *testing.T) prsm.Session {
	t.Helper()
	status, _, body := ts.do(t, "POST", "/sessions", `{"name":"s"}`, nil)
	var s prsm.Session
	if err := json.Unmarshal([]byte(body), &s); status != 201 || err != nil {
		t.Fatalf("start a session: %d %s", status, body)
	}
	return s
}

// awaitJob reads job id until it ends.
func (ts *testServer) awaitJob(t *testing.T, id string) api.Job {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		status, _, body := ts.do(t, "GET", "/jobs/"+id, "", nil)
		var j api.Job
		if err := json.Unmarshal([]byte(body), &j); status != 200 || err != nil {
			t.Fatalf("GET /jobs/%s: %d %s", id, status, body)
		}
		if j.State != api.JobRunning {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job still running: %+v", j)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
