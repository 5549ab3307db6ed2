package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/server"
)

// TestListOfManyChanges: the list of a session's changes is written a
// page at a time and holds every one, in order, with its contents.
func TestListOfManyChanges(t *testing.T) {
	ts := start(t, server.Config{})
	s := ts.newSession(t)
	if status, _, body := ts.do(t, "GET", "/sessions/"+s.ID+"/file-changes", "", nil); status != 200 || body != "[]\n" {
		t.Errorf("empty list: %d %q", status, body)
	}
	capture, _ := json.Marshal(map[string]any{"tool_call_id": "gen", "tool_name": "Bash", "args": map[string]string{"command": "gen"}})
	ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls", string(capture), nil)
	const n = 1234 // more than two pages
	for i := 0; i < n; i++ {
		p := filepath.Join(s.WorktreePath, "gen", fmt.Sprintf("d%02d", i%20), fmt.Sprintf("f%04d.txt", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(fmt.Sprintf("file %d\n", i)), 0o644)
	}
	if status, _, body := ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls/gen/complete", `{}`, nil); status != 200 {
		t.Fatalf("complete: %d %.200s", status, body)
	}
	status, hdr, body := ts.do(t, "GET", "/sessions/"+s.ID+"/file-changes", "", nil)
	var recs []prsm.Record
	if err := json.Unmarshal([]byte(body), &recs); status != 200 || err != nil {
		t.Fatalf("list: %d %v %.200s", status, err, body)
	}
	if got := hdr.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q", got)
	}
	if len(recs) != n {
		t.Fatalf("%d records, want %d", len(recs), n)
	}
	seen := map[string]bool{}
	for i, r := range recs {
		if r.ID != fmt.Sprintf("gen:%d", i) {
			t.Fatalf("record %d is %s: out of order", i, r.ID)
		}
		var k int
		fmt.Sscanf(filepath.Base(r.RelPath), "f%04d.txt", &k)
		if r.NewContent == nil || *r.NewContent != fmt.Sprintf("file %d\n", k) || seen[r.ID] {
			t.Fatalf("record %s (%s): %v", r.ID, r.RelPath, r.NewContent)
		}
		seen[r.ID] = true
	}
	if status, _, body := ts.do(t, "GET", "/sessions/"+s.ID+"/file-changes?status=bogus", "", nil); status != 400 {
		t.Errorf("bad status: %d %s", status, body)
	}
}
