package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/internal/fakemodel"
)

// TestRealAgentCodexPatches runs the real Codex under `prsm run` through
// the patches that send no PostToolUse: a patch that fails, then a patch
// adding ok.txt, then `echo z > z.txt` (issue 45's three steps), then a
// patch sent through the shell (`apply_patch <<'EOF'`), which Codex
// applies itself, then another shell call. Every record must carry its
// own tool call's id: ok.txt the patch's (Edit), via_shell.txt the shell
// patch's, never the call after; and no call is left open.
func TestRealAgentCodexPatches(t *testing.T) {
	codex := realAgent(t, "@openai/codex", codexVersion, "codex")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const (
		failsID  = "call_codexPatchFails"
		okID     = "call_codexPatchOK"
		zID      = "call_codexShellZ"
		viaID    = "call_codexShellPatch"
		madeID   = "call_codexShellMade"
		prompt   = "Add ok.txt and the rest."
		viaPatch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: via_shell.txt\n+via the shell\n*** End Patch\nEOF\n"
	)
	model := fakemodel.ResponsesStart(t, []fakemodel.ResponsesStep{
		{CallID: failsID, ApplyPatch: "*** Begin Patch\n*** Update File: missing.txt\n@@\n-nothing\n+here\n*** End Patch\n"},
		{CallID: okID, ApplyPatch: "*** Begin Patch\n*** Add File: ok.txt\n+ok\n*** End Patch\n"},
		{CallID: zID, Exec: "echo z > z.txt"},
		{CallID: viaID, Exec: viaPatch},
		{CallID: madeID, Exec: "echo made > out.txt"},
		{Message: "Done."},
	})
	r := newCodexRig(t, codex, model)
	repo, prsmHome := r.repo, r.prsmHome
	run := func(name string, args ...string) string {
		t.Helper()
		stdout, _ := r.run(ctx, name, args...)
		return stdout
	}
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("git", "init", "-q")
	run("git", "add", "-A")
	run("git", "commit", "-qm", "first")
	var s prsm.Session
	if err := json.Unmarshal([]byte(run(prsmBinary(t), "session", "start", "--json")), &s); err != nil {
		t.Fatal(err)
	}
	projects, err := filepath.Glob(filepath.Join(prsmHome, "projects", "*"))
	if err != nil || len(projects) != 1 {
		t.Fatalf("want one project under %s: %v %v", prsmHome, projects, err)
	}
	run(prsmBinary(t), "run", "--session", s.ID, "--", codex, "exec", "--dangerously-bypass-approvals-and-sandbox", prompt)
	if n := len(model.ResponsesRequests()); n < 6 {
		t.Fatalf("Codex asked the model %d times, want the 6 scripted steps", n)
	}

	cl := liveClient(ctx, t, projects[0])
	recs, err := cl.Changes(ctx, s.ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rec := range recs {
		got = append(got, strings.Join([]string{rec.ID, rec.ToolCallID, rec.ToolName, rec.ChangeType, rec.RelPath, rec.AgentID}, " "))
	}
	sort.Strings(got)
	want := []string{
		okID + " " + okID + " Edit create ok.txt codex",
		zID + ":0 " + zID + " Bash create z.txt codex",
		viaID + ":0 " + viaID + " Bash create via_shell.txt codex",
		madeID + ":0 " + madeID + " Bash create out.txt codex",
	}
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("records (id, tool call, tool, change, path, agent):\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for rel, content := range map[string]string{"ok.txt": "ok\n", "z.txt": "z\n", "via_shell.txt": "via the shell\n", "out.txt": "made\n"} {
		if got, ok := codexRead(t, repo, rel); !ok || got != content {
			t.Errorf("workspace %s = %q (present %v), want %q", rel, got, ok, content)
		}
	}
	if _, ok := codexRead(t, repo, "missing.txt"); ok {
		t.Errorf("workspace missing.txt exists; the failed patch made nothing")
	}
}
