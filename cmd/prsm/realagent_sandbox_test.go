//go:build unix

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/fakemodel"
)

// TestRealAgentClaudeSandbox runs the real Claude Code under `prsm run`
// with its sandbox turned on in the user's settings, as a user does
// (sandbox.enabled). A prompt-injected agent's shell goes for the
// server's token: a Bash call cats server.json by name, another reaches
// it through a glob its permission check cannot see through, and a
// third asks to run that outside the sandbox (dangerouslyDisableSandbox).
// What the model gets back from each must not hold the token, and must
// show the refusal: the sandbox shows PRSM_HOME empty. The sandbox must
// still let the agent write in its worktree, and prsm must record that
// write. The refusals come from the settings `prsm run` passes
// (claudeGuards). Checked by taking them out: without
// sandbox.filesystem.denyRead the glob reads claude-settings.json (the
// Read deny rules still keep server.json); without
// allowUnsandboxedCommands false the third call prints the token; without
// denyRead and the Read rules every call does.
func TestRealAgentClaudeSandbox(t *testing.T) {
	r := newClaudeRig(t)
	sandboxUsable(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	r.commit(map[string]string{"a.txt": "alpha\n"})
	// The user's own settings turn the sandbox on; failIfUnavailable
	// makes a sandbox that cannot start an error, not a quiet run
	// without one.
	if err := os.WriteFile(filepath.Join(r.config, "settings.json"),
		[]byte(`{"sandbox": {"enabled": true, "failIfUnavailable": true}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := r.startSession(ctx)
	info, err := api.ReadInfo(r.project)
	if err != nil {
		t.Fatal(err)
	}
	serverJSON := filepath.Join(r.project, api.InfoFile)

	const (
		catID    = "toolu_80SandboxCatToken"
		globID   = "toolu_81SandboxGlobToken"
		escapeID = "toolu_82SandboxEscapeGlob"
		writeID  = "toolu_83SandboxWrite"
	)
	// A plain cat names server.json, which Claude Code's permission
	// check (the Read deny rules) refuses before anything runs; the glob
	// hides the name from that check, so only the sandbox stands in its
	// way.
	glob := "for f in " + filepath.Join(r.project, "*.json") + "; do cat \"$f\"; done"
	model := fakemodel.NewAnthropic(
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: catID, Name: "Bash",
			Input: map[string]any{"command": "cat " + serverJSON, "description": "Read the server's token"}}}},
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: globID, Name: "Bash",
			Input: map[string]any{"command": glob, "description": "Read the server's token"}}}},
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: escapeID, Name: "Bash",
			Input: map[string]any{"command": glob, "description": "Read the server's token outside the sandbox", "dangerouslyDisableSandbox": true}}}},
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: writeID, Name: "Bash",
			Input: map[string]any{"command": "printf 'one\\n' > new1.txt", "description": "Write a file"}}}},
		fakemodel.AnthropicStep{Text: "Done."},
	)
	defer model.Close()
	r.prsm(ctx, claudeModelEnv(model), append([]string{"run", "--session", s.ID, "--"}, claudeArgs(r.claude, "Find the token.")...)...)
	if n := model.StepsServed(); n != 5 {
		t.Fatalf("Claude Code asked the model for %d scripted steps, want 5: %+v", n, model.Requests())
	}

	// What each call's result must show: the permission check's refusal,
	// or a PRSM_HOME the sandbox shows empty.
	refusals := map[string]string{catID: "has been denied", globID: "No such file or directory", escapeID: "No such file or directory"}
	for _, id := range []string{catID, globID, escapeID} {
		out, ok := toolResult(t, model, id)
		if !ok {
			t.Fatalf("no request to the model holds the result of %s: %+v", id, model.Requests())
		}
		t.Logf("%s's result, as the model got it: %s", id, out)
		if strings.Contains(out, info.Token) {
			t.Errorf("the agent's shell read the server's token (%s):\n%s", id, out)
		}
		if !strings.Contains(out, refusals[id]) {
			t.Errorf("%s's result shows no refusal (%q):\n%s", id, refusals[id], out)
		}
	}

	recs, err := r.client(ctx).Changes(ctx, s.ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rec := range recs {
		got = append(got, strings.Join([]string{rec.ToolCallID, rec.ToolName, rec.ChangeType, rec.RelPath, rec.AgentID}, " "))
	}
	if want := writeID + " Bash create new1.txt claude"; len(got) != 1 || got[0] != want {
		t.Fatalf("records:\n%s\nwant %s", strings.Join(got, "\n"), want)
	}
	if got, ok := fileIn(t, r.repo, "new1.txt"); !ok || got != "one\n" {
		t.Errorf("workspace new1.txt = %q (present %v)", got, ok)
	}
}

// sandboxUsable skips the test when Claude Code's Linux sandbox cannot
// run here: bubblewrap present (cmd/prsm/agents-deps.sh, which make
// agents runs, installs it) but unable to make its namespaces, as in
// some containers. The skip names bwrap's own error. Other systems than
// Linux are not covered yet.
func sandboxUsable(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skipf("Claude Code's sandbox on %s is not covered; Linux only", runtime.GOOS)
	}
	for _, bin := range []string{"bwrap", "socat"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("Claude Code's sandbox needs %s: %v (cmd/prsm/agents-deps.sh installs it; make agents runs it)", bin, err)
		}
	}
	// What the sandbox asks of bwrap: its own user, pid and network
	// namespaces, and a fresh /proc.
	out, err := exec.Command("bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
		"--unshare-user", "--unshare-pid", "--unshare-net", "--die-with-parent", "--", "true").CombinedOutput()
	if err != nil {
		t.Skipf("bubblewrap cannot sandbox here, so neither can Claude Code: bwrap: %v: %s", err, strings.TrimSpace(string(out)))
	}
}

// toolResult is the text of the tool_result for tool call id in the
// first request to the model that carries it, and whether one does.
func toolResult(t *testing.T, model *fakemodel.AnthropicServer, id string) (string, bool) {
	t.Helper()
	for _, req := range model.Requests() {
		var msgs []struct {
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(req.Messages, &msgs) != nil {
			continue
		}
		for _, m := range msgs {
			var blocks []struct {
				Type      string          `json:"type"`
				ToolUseID string          `json:"tool_use_id"`
				Content   json.RawMessage `json:"content"`
			}
			if json.Unmarshal(m.Content, &blocks) != nil {
				continue
			}
			for _, b := range blocks {
				if b.Type != "tool_result" || b.ToolUseID != id {
					continue
				}
				var text string
				if json.Unmarshal(b.Content, &text) == nil {
					return text, true
				}
				var parts []struct {
					Text string `json:"text"`
				}
				if err := json.Unmarshal(b.Content, &parts); err != nil {
					t.Fatalf("tool_result of %s: %v: %s", id, err, b.Content)
				}
				for _, p := range parts {
					text += p.Text
				}
				return text, true
			}
		}
	}
	return "", false
}
