package codex

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/agents/agent"
)

// TestCodexRunAsksOnlyWhenTrustCouldChange: prsm run asks Codex for
// hooks/list once; the next runs reuse its answer until the config or
// hooks files (or the codex binary) change.
func TestCodexRunAsksOnlyWhenTrustCouldChange(t *testing.T) {
	home, bin := t.TempDir(), t.TempDir()
	t.Setenv("PRSM_HOME", t.TempDir())
	codex := filepath.Join(bin, "codex")
	if err := os.WriteFile(codex, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	const self = "/usr/bin/prsm"
	asked := 0
	listCodexHooks = func(ctx context.Context, codex string, flags []string, dir string, env []string) ([]codexHook, error) {
		asked++
		var hooks []codexHook
		for _, e := range []string{"pre_tool_use", "post_tool_use", "user_prompt_submit", "stop"} {
			hooks = append(hooks, codexHook{Key: "/<session-flags>/config.toml:" + e + ":0:0", EventName: e, Command: agent.HookCommand(self, "codex"),
				Source: "sessionFlags", Enabled: true, CurrentHash: "sha256:" + e, TrustStatus: "untrusted"})
		}
		return hooks, nil
	}
	t.Cleanup(func() { listCodexHooks = codexListHooks })
	env := []string{"CODEX_HOME=" + home}
	dir := t.TempDir()
	run := func() string {
		var errb bytes.Buffer
		got := codexRunArgs(context.Background(), []string{codex, "exec", "x"}, dir, env, self, &errb)
		if errb.Len() != 0 {
			t.Fatalf("stderr: %s", errb.String())
		}
		return strings.Join(got, " ")
	}
	first := run()
	if !strings.Contains(first, `hooks.state={"/<session-flags>/config.toml:post_tool_use:0:0"={trusted_hash="sha256:post_tool_use"}`) {
		t.Fatalf("first run's argv: %s", first)
	}
	if second := run(); second != first || asked != 1 {
		t.Fatalf("second run asked %d times in all, argv %s", asked, second)
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("model = \"y\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if run(); asked != 2 {
		t.Fatalf("after config.toml changed: asked %d times, want 2", asked)
	}
	if run(); asked != 2 {
		t.Fatalf("asked %d times, want still 2", asked)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".codex", "hooks.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if run(); asked != 3 {
		t.Fatalf("after a project hooks.json appeared: asked %d times, want 3", asked)
	}
}
