package main

import (
	"context"
	"fmt"
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
	if got, want := hookCommandFor(self, "claude"), self+" hook claude"; got != want {
		t.Fatalf("without prsm-hook: %q, want %q", got, want)
	}
	lean := filepath.Join(dir, "prsm-hook")
	if err := os.WriteFile(lean, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := hookCommandFor(self, "claude"), self+" hook claude"; got != want {
		t.Fatalf("with a prsm-hook that is not executable: %q, want %q", got, want)
	}
	if err := os.Chmod(lean, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := hookCommandFor(self, "codex"), lean+" codex"; got != want {
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
		if got := isPrsmCommand(tc.cmd, tc.agent); got != tc.ours {
			t.Errorf("isPrsmCommand(%q, %q) = %v, want %v", tc.cmd, tc.agent, got, tc.ours)
		}
		h := map[string]any{"type": "command", "command": tc.cmd}
		if got := isPrsmHandlerOf(tc.agent)(h); got != tc.ours {
			t.Errorf("isPrsmHandlerOf(%q)(%q) = %v, want %v", tc.agent, tc.cmd, got, tc.ours)
		}
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
