package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/server"
)

// TestAgentNeverControlsGitOverHTTP plays the attack of issue 31 through
// the real server, as the steps give it: a tool call starts; the
// agent copies the workspace's .git and its worktree's entry
// (.git/worktrees/<id>) into its worktree, points the copied entry's
// commondir at the copied .git, sets core.fsmonitor in the copy's config
// to a script, writes "gitdir: <the copy>" into the worktree's .git,
// touches a file, and the call completes. Twice. The script never runs,
// the worktree's .git is repaired, the touched file is recorded and
// synced, nothing of the fake git directories is, and GET /status and
// GET /sessions/{id} tell the user.
func TestAgentNeverControlsGitOverHTTP(t *testing.T) {
	ts := start(t, server.Config{})
	status, _, body := ts.do(t, "POST", "/sessions", `{"name":"s","agent_id":"claude"}`, nil)
	if status != 201 {
		t.Fatal(body)
	}
	var s prsm.Session
	json.Unmarshal([]byte(body), &s)
	wt := s.WorktreePath
	dotgit := filepath.Join(wt, ".git")
	orig, err := os.ReadFile(dotgit)
	if err != nil {
		t.Fatal(err)
	}
	entry := strings.TrimSpace(strings.TrimPrefix(string(orig), "gitdir:"))
	marker := filepath.Join(t.TempDir(), "marker")
	for i := 1; i <= 2; i++ {
		id := fmt.Sprintf("tc%d", i)
		if status, _, body := ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls", `{"tool_call_id":"`+id+`","tool_name":"Bash","agent_id":"claude","args":{"command":"..."}}`, nil); status != 200 {
			t.Fatalf("capture: %d %s", status, body)
		}
		script := fmt.Sprintf(`set -e
rm -rf copy-git copy-entry
cp -r '%s' copy-git
cp -r '%s' copy-entry
echo "$PWD/copy-git" > copy-entry/commondir
printf '#!/bin/sh\necho ran >> %s\nexit 1\n' > copy-git/fsmonitor.sh
chmod +x copy-git/fsmonitor.sh
printf '[core]\n\tfsmonitor = %%s\n' "$PWD/copy-git/fsmonitor.sh" >> copy-git/config
echo "gitdir: $PWD/copy-entry" > .git
echo work > touched%d.txt
`, filepath.Join(ts.ws, ".git"), entry, marker, i)
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = wt
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("attack: %v\n%s", err, out)
		}
		status, _, body := ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls/"+id+"/complete", `{"result":{}}`, nil)
		if status != 200 {
			t.Fatalf("complete: %d %s", status, body)
		}
		if b, err := os.ReadFile(marker); err == nil {
			t.Fatalf("call %d: the agent's core.fsmonitor ran:\n%s", i, b)
		}
		var recs struct{ Records []prsm.Record }
		json.Unmarshal([]byte(body), &recs)
		if len(recs.Records) != 1 || recs.Records[0].RelPath != fmt.Sprintf("touched%d.txt", i) || recs.Records[0].SyncState != prsm.SyncSynced {
			t.Errorf("call %d records: %s", i, body)
		}
		if b, err := os.ReadFile(dotgit); err != nil || string(b) != string(orig) {
			t.Errorf("call %d: worktree .git holds %q %v, want %q", i, b, err, orig)
		}
	}
	for _, p := range []string{"copy-git", "copy-entry"} {
		if _, err := os.Lstat(filepath.Join(ts.ws, p)); !os.IsNotExist(err) {
			t.Errorf("workspace holds %s: %v", p, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(ts.ws, "touched2.txt")); err != nil || string(b) != "work\n" {
		t.Errorf("touched file not synced: %q %v", b, err)
	}
	_, _, body = ts.do(t, "GET", "/status", "", nil)
	for _, want := range []string{"worktree's .git was changed", "copy-git", "copy-entry"} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /status does not tell %q:\n%s", want, body)
		}
	}
	_, _, body = ts.do(t, "GET", "/sessions/"+s.ID, "", nil)
	if !strings.Contains(body, `"note":"the worktree's .git was changed`) {
		t.Errorf("GET /sessions/{id}: %s", body)
	}
}
