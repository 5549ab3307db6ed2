package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/agents/agenttest"
	"github.com/rogpeppe/go-internal/testscript"
)

// codexFixtures holds Codex hook payloads as Codex 0.169.0 sent them to a
// logging hook (only transcript_path's home changed); "@CWD@" stands for
// the directory the command runs in.
var codexFixtures, _ = filepath.Abs(filepath.Join("testdata", "hooks-codex"))

// [!] codexhook FIXTURE CWD [NAME=VALUE...] is claudehook for `prsm hook
// codex` and the fixtures in testdata/hooks-codex.
func cmdCodexHook(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: [!] codexhook FIXTURE CWD [NAME=VALUE...]")
	}
	payload, err := agenttest.Payload(filepath.Join(codexFixtures, args[0]+".json"), args[1])
	ts.Check(err)
	dir := filepath.Join(ts.Getenv("WORK"), ".codexhook")
	ts.Check(os.MkdirAll(dir, 0o755))
	in, out := filepath.Join(dir, "in.json"), filepath.Join(dir, "out")
	ts.Check(os.WriteFile(in, payload, 0o644))
	script := `in=$1 out=$2; shift 2; env "$@" prsm hook codex <"$in" >"$out.stdout" 2>"$out.stderr"; echo $? >"$out.rc"`
	ts.Check(ts.Exec("sh", append([]string{"-c", script, "sh", in, out}, args[2:]...)...))
	stdout, stderr, rc := ts.ReadFile(out+".stdout"), ts.ReadFile(out+".stderr"), strings.TrimSpace(ts.ReadFile(out+".rc"))
	fmt.Fprint(ts.Stderr(), stderr)
	switch {
	case stdout != "":
		ts.Fatalf("prsm hook codex printed on stdout: %q", stdout)
	case rc == "2":
		ts.Fatalf("prsm hook codex exited 2, which blocks the tool")
	case neg && (rc != "1" || strings.Count(stderr, "\n") != 1):
		ts.Fatalf("prsm hook codex exited %s with %q, want 1 and one line", rc, stderr)
	case !neg && rc != "0":
		ts.Fatalf("prsm hook codex exited %s: %s", rc, stderr)
	}
}

// TestCodexPayloads maps every Codex fixture to its server call: the
// agent's own call id, the canonical tool name, the tool input as args.
// Bad input never exits 2 and never prints on stdout; it says what is
// wrong in one line. Unknown events and events outside every session are
// silent no-ops.
func TestCodexHookBadInput(t *testing.T) {
	home := t.TempDir()
	t.Setenv("PRSM_HOME", home)
	t.Setenv("PRSM_SESSION_ID", "")
	t.Setenv("PRSM_WORKSPACE", "")
	outside, err := agenttest.Payload(filepath.Join(codexFixtures, "pre-patch-add.json"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, stdin string
		code        int
		stderr      string
	}{
		{"empty", "", 1, "malformed hook event"},
		{"truncated", `{"hook_event_name": "PreToolUse"`, 1, "malformed hook event"},
		{"not an object", `"PreToolUse"`, 1, "malformed hook event"},
		{"no event", `{"cwd": "/tmp", "tool_name": "Bash"}`, 1, "no hook_event_name"},
		{"no tool", `{"hook_event_name": "PostToolUse", "cwd": "/tmp"}`, 1, "no tool_name"},
		{"bad field type", `{"hook_event_name": "PreToolUse", "tool_use_id": 7}`, 1, "malformed hook event"},
		{"unknown event", `{"hook_event_name": "PreCompact", "cwd": "/tmp"}`, 0, ""},
		{"outside sessions", string(outside), 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runHook(t, tc.stdin, "codex")
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			if tc.stderr == "" {
				if stderr != "" {
					t.Errorf("stderr %q, want nothing", stderr)
				}
				return
			}
			if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q, want one line with %q", stderr, tc.stderr)
			}
		})
	}
}
