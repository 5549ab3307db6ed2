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
