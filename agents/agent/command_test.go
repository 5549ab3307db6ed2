package agent

import (
	"os"
	"path/filepath"
	"testing"
)

// The installed hook command runs the lean prsm-hook binary when it sits
// beside prsm, else `prsm hook AGENT`; either is recognised as prsm's, so
// that an install after `make install` replaces the old entry and an
// uninstall removes both.
func TestHookCommandFor(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "prsm")
	if err := os.WriteFile(self, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := HookCommand(self, "claude"), self+" hook claude"; got != want {
		t.Fatalf("without prsm-hook: %q, want %q", got, want)
	}
	lean := filepath.Join(dir, "prsm-hook")
	if err := os.WriteFile(lean, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := HookCommand(self, "claude"), self+" hook claude"; got != want {
		t.Fatalf("with a prsm-hook that is not executable: %q, want %q", got, want)
	}
	if err := os.Chmod(lean, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := HookCommand(self, "codex"), lean+" codex"; got != want {
		t.Fatalf("with prsm-hook: %q, want %q", got, want)
	}
	for _, tc := range []struct {
		cmd, agent string
		ours       bool
	}{
		{lean + " codex", "codex", true},
		{"'/my dir/prsm-hook' claude", "claude", true},
		{self + " hook codex", "codex", true},
		{lean + " codex", "claude", false},
		{"/usr/bin/other-hook claude", "claude", false},
		{lean + " claude --x", "claude", false},
	} {
		if got := IsPrsmHookCommand(tc.cmd, tc.agent); got != tc.ours {
			t.Errorf("IsPrsmHookCommand(%q, %q) = %v, want %v", tc.cmd, tc.agent, got, tc.ours)
		}
		h := map[string]any{"type": "command", "command": tc.cmd}
		if got := IsPrsmHandlerOf(tc.agent)(h); got != tc.ours {
			t.Errorf("IsPrsmHandlerOf(%q)(%q) = %v, want %v", tc.agent, tc.cmd, got, tc.ours)
		}
	}
}

// TestQuoteForEachShell: a hook's program path is quoted for the shell
// the agent runs it with: sh's single quotes on Unix, a double-quoted
// word for cmd.exe and PowerShell on Windows, where % (cmd's variables)
// and spaces are quoted and a plain path is left as it is.
func TestQuoteForEachShell(t *testing.T) {
	for _, c := range []struct{ goos, in, want string }{
		{"linux", "/usr/local/bin/prsm-hook", "/usr/local/bin/prsm-hook"},
		{"linux", "/home/a b/it's", `'/home/a b/it'\''s'`},
		{"linux", "/x/50%", "/x/50%"},
		{"windows", `C:\Users\ann\bin\prsm-hook.exe`, `C:\Users\ann\bin\prsm-hook.exe`},
		{"windows", `C:\Program Files\prsm\prsm-hook.exe`, `"C:\Program Files\prsm\prsm-hook.exe"`},
		{"windows", `C:\x\100%\prsm.exe`, `"C:\x\100%\prsm.exe"`},
		{"windows", "", `""`},
	} {
		if got := quoteFor(c.goos, c.in); got != c.want {
			t.Errorf("quoteFor(%s, %q) = %s, want %s", c.goos, c.in, got, c.want)
		}
	}
	if got := leanHookFile("windows"); got != "prsm-hook.exe" {
		t.Errorf("lean hook on windows: %s", got)
	}
	for prog, want := range map[string]bool{"/b/prsm-hook": true, "PRSM-HOOK.EXE": true, "/b/prsm-hooks": false, "/b/prsm": false} {
		if got := isLeanHook(prog); got != want {
			t.Errorf("isLeanHook(%s) = %v", prog, got)
		}
	}
}
