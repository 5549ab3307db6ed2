package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/agents/agent"
)

// claudeExecForm asks `claude --version`: 2.1.328 and later take the exec
// form; an older version, an answer it cannot read, a claude that fails
// and none at all get the shell form.
func TestClaudeExecForm(t *testing.T) {
	dir := t.TempDir()
	for i, tc := range []struct {
		answer string
		exit   int
		want   bool
	}{
		{"2.1.328 (Claude Code)", 0, true},
		{"2.1.1000 (Claude Code)", 0, true},
		{"2.2.0 (Claude Code)", 0, true},
		{"3.0.0", 0, true},
		{"2.1.327 (Claude Code)", 0, false},
		{"2.0.999 (Claude Code)", 0, false},
		{"1.9.400 (Claude Code)", 0, false},
		{"2.1 (Claude Code)", 0, false},
		{"v2.1.328", 0, false},
		{"", 0, false},
		{"2.1.328 (Claude Code)", 1, false},
	} {
		p := filepath.Join(dir, fmt.Sprintf("claude%d", i))
		script := fmt.Sprintf("#!/bin/sh\n[ \"$1\" = --version ] || exit 9\nprintf '%%s\\n' '%s'\nexit %d\n", tc.answer, tc.exit)
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		if got := claudeExecForm(context.Background(), p); got != tc.want {
			t.Errorf("claude answering %q (exit %d): exec form %v, want %v", tc.answer, tc.exit, got, tc.want)
		}
	}
	if claudeExecForm(context.Background(), filepath.Join(dir, "no-such-claude")) {
		t.Error("exec form without a claude")
	}
}

// Install keeps every other setting and hook, is idempotent, replaces a
// prsm handler of another binary; uninstall takes out prsm's alone.
func TestClaudeSettingsEdit(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "settings.json")
	orig := `{
  "model": "opus",
  "permissions": {"allow": ["Bash(go test:*)"], "deny": []},
  "env": {"A": "<&>"},
  "cleanupPeriodDays": 30.50,
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh", "timeout": 5},
                                    {"type": "command", "command": "/opt/old/prsm hook claude"}]}
    ],
    "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "/usr/bin/other hook claude"}]}]
  }
}
`
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	// The settings file is a symlink, as dotfile managers make it.
	path := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, path); err != nil {
		t.Fatal(err)
	}
	argv := []string{"/path with space/prsm", "hook", "claude"}
	install := func(s map[string]any) error {
		if _, err := removeClaudeHooks(s); err != nil {
			return err
		}
		return addClaudeHooks(s, argv, false)
	}
	changed, err := agent.EditSettings(path, install)
	if err != nil || !changed {
		t.Fatalf("install: changed %v, %v", changed, err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the settings link was replaced: %v", err)
	}
	if fi, err := os.Stat(real); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode of the settings file: %v %v", fi.Mode(), err)
	}
	once, _ := os.ReadFile(real)
	var s map[string]any
	if err := json.Unmarshal(once, &s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"model": "opus"`, `"Bash(go test:*)"`, `"<&>"`, `30.50`, `"audit.sh"`, `"notify-send hi"`, `"/usr/bin/other hook claude"`} {
		if !bytes.Contains(once, []byte(want)) {
			t.Errorf("install lost %s:\n%s", want, once)
		}
	}
	if bytes.Contains(once, []byte("/opt/old/prsm")) {
		t.Errorf("the old prsm handler is still there:\n%s", once)
	}
	hooks := s["hooks"].(map[string]any)
	for _, e := range claudeHookEvents {
		groups := hooks[e.event].([]any)
		n := 0
		for _, g := range groups {
			for _, h := range g.(map[string]any)["hooks"].([]any) {
				if isPrsmHandler(h) {
					n++
					gm := g.(map[string]any)
					if h.(map[string]any)["command"] != "'/path with space/prsm' hook claude" || h.(map[string]any)["timeout"] != float64(10) || (gm["matcher"] != nil) != (e.matcher != "") {
						t.Errorf("%s: prsm group %v", e.event, gm)
					}
				}
			}
		}
		if n != 1 {
			t.Errorf("%s has %d prsm handlers, want 1", e.event, n)
		}
	}

	changed, err = agent.EditSettings(path, install)
	if err != nil || changed {
		t.Fatalf("second install: changed %v, %v", changed, err)
	}
	if again, _ := os.ReadFile(real); !bytes.Equal(again, once) {
		t.Fatalf("second install changed the file:\n%s", again)
	}

	var removed []string
	changed, err = agent.EditSettings(path, func(s map[string]any) (err error) {
		removed, err = removeClaudeHooks(s)
		return err
	})
	if err != nil || !changed {
		t.Fatalf("uninstall: changed %v, %v", changed, err)
	}
	if got := strings.Join(removed, ","); got != "PreToolUse,PostToolUse,PostToolUseFailure,UserPromptSubmit,Stop" {
		t.Errorf("removed from %s", got)
	}
	after, _ := os.ReadFile(real)
	var got, want map[string]any
	json.Unmarshal(after, &got)
	json.Unmarshal([]byte(orig), &want)
	pre := want["hooks"].(map[string]any)["PreToolUse"].([]any)[0].(map[string]any)
	pre["hooks"] = pre["hooks"].([]any)[:1] // the old prsm handler went at install
	if g, w := jsonString(t, got), jsonString(t, want); g != w {
		t.Errorf("after uninstall:\n%s\nwant:\n%s", g, w)
	}
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Settings prsm cannot read are refused and left exactly as they are.
func TestClaudeSettingsRefused(t *testing.T) {
	for name, content := range map[string]string{
		"invalid":      `{"model": "opus",}`,
		"trailing":     `{"model": "opus"} {}`,
		"array":        `[]`,
		"hooks string": `{"hooks": "none"}`,
		"event object": `{"hooks": {"PreToolUse": {"matcher": "*"}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "settings.json")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			changed, err := agent.EditSettings(path, func(s map[string]any) error {
				if _, err := removeClaudeHooks(s); err != nil {
					return err
				}
				return addClaudeHooks(s, []string{"prsm", "hook", "claude"}, false)
			})
			if err == nil || changed || !strings.Contains(err.Error(), "nothing was changed") {
				t.Fatalf("changed %v, err %v; want a refusal", changed, err)
			}
			if b, _ := os.ReadFile(path); string(b) != content {
				t.Fatalf("file changed to %s", b)
			}
			entries, _ := os.ReadDir(filepath.Dir(path))
			if len(entries) != 1 {
				t.Fatalf("left files behind: %v", entries)
			}
		})
	}
}

// A Claude Code handler in exec form (command and args) is prsm's when its
// argument list is prsm's hook of that agent, and only then.
func TestPrsmHandlerExecForm(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		args []any
		ours bool
	}{
		{"/opt/bin/prsm-hook", []any{"claude"}, true},
		{"/my dir/prsm", []any{"hook", "claude"}, true},
		{"/opt/bin/prsm-hook", []any{"codex"}, false},
		{"/opt/bin/prsm-hook", []any{"claude", "--x"}, false},
		{"/usr/bin/node", []any{"prsm-hook", "claude"}, false},
		{"/opt/bin/prsm-hook", []any{"claude", 3}, false},
		{"/usr/bin/other", []any{"hook", "claude"}, false},
	} {
		h := map[string]any{"type": "command", "command": tc.cmd, "args": tc.args}
		if got := isPrsmHandler(h); got != tc.ours {
			t.Errorf("isPrsmHandler(%v %v) = %v, want %v", tc.cmd, tc.args, got, tc.ours)
		}
	}
	s := map[string]any{}
	if err := addClaudeHooks(s, []string{"/my dir/prsm", "hook", "claude"}, true); err != nil {
		t.Fatal(err)
	}
	h := s["hooks"].(map[string]any)["PreToolUse"].([]any)[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)
	if h["command"] != "/my dir/prsm" || fmt.Sprint(h["args"]) != "[hook claude]" || !isPrsmHandler(h) {
		t.Fatalf("exec form handler: %v", h)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/local/bin/prsm":   "/usr/local/bin/prsm",
		"/home/a b/prsm":        "'/home/a b/prsm'",
		"/tmp/it's/prsm":        `'/tmp/it'\''s/prsm'`,
		"/x/$(rm -rf ~)/prsm":   "'/x/$(rm -rf ~)/prsm'",
		"/opt/prsm-1.0+dev/bin": "/opt/prsm-1.0+dev/bin",
	} {
		if got := agent.ShellQuote(in); got != want {
			t.Errorf("agent.ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
	var names []string
	for _, h := range []string{"prsm hook claude", "/a/prsm hook claude", "'/a b/prsm' hook claude", "/a/prsm.test hook claude"} {
		if !isPrsmHandler(map[string]any{"command": h}) {
			names = append(names, h)
		}
	}
	for _, h := range []string{"other hook claude", "prsm hook claude --x", "prsm hook", ""} {
		if isPrsmHandler(map[string]any{"command": h}) {
			names = append(names, h)
		}
	}
	sort.Strings(names)
	if len(names) > 0 {
		t.Errorf("misrecognised handlers: %q", names)
	}
}
