package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/internal/testenv"
	"github.com/prsm-dev/prsm/server"
)

// TestBusyStore: while another connection holds the database's write
// lock past the store's wait, a request that writes answers 503 with code
// busy and a Retry-After, and changes nothing; once the lock goes, the
// same request works.
func TestBusyStore(t *testing.T) {
	ts := start(t, server.Config{})
	status, _, body := ts.do(t, "POST", "/sessions", `{"name":"s"}`, nil)
	if status != 201 {
		t.Fatal(body)
	}
	var s prsm.Session
	json.Unmarshal([]byte(body), &s)
	if status, _, body := ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls", `{"tool_call_id":"e1","tool_name":"Bash"}`, nil); status != 200 {
		t.Fatal(body)
	}
	os.WriteFile(filepath.Join(s.WorktreePath, "a.txt"), []byte("e1\n"), 0o644)
	if status, _, body := ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls/e1/complete", `{}`, nil); status != 200 {
		t.Fatal(body)
	}

	release := testenv.HoldWriteLock(t, ts.eng.DB.Path())
	reject := "/sessions/" + s.ID + "/file-changes/e1/reject"
	t0 := time.Now()
	status, hdr, body := ts.do(t, "POST", reject, "", nil)
	var e struct{ Error, Code string }
	json.Unmarshal([]byte(body), &e)
	if status != 503 || e.Code != "busy" || hdr.Get("Retry-After") != "1" || !strings.Contains(e.Error, "database is locked") {
		t.Errorf("reject while the database is locked: %d %v %s", status, hdr, body)
	}
	t.Logf("busy answer after %v", time.Since(t0))
	if b, _ := os.ReadFile(filepath.Join(ts.ws, "a.txt")); string(b) != "e1\n" {
		t.Errorf("workspace after the busy reject: %q", b)
	}
	release()
	if status, _, body := ts.do(t, "POST", reject, "", nil); status != 200 || !strings.Contains(body, `"status":"rejected"`) {
		t.Errorf("reject once the lock is gone: %d %s", status, body)
	}
	if b, _ := os.ReadFile(filepath.Join(ts.ws, "a.txt")); string(b) != "a\n" {
		t.Errorf("workspace after the reject: %q", b)
	}
}
