package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prsm-dev/prsm/agents/agent"
)

// claudeToolMatcher names the Claude Code tools that change files. The
// post-tool events use it too, so every capture has its complete and no
// read-only tool pays for a change scan.
const claudeToolMatcher = "Write|Edit|MultiEdit|NotebookEdit|Bash"

// claudeHookEvents are the events prsm installs a handler for, in order,
// with their matchers ("" for events that take none). Stop ends the turn
// (a call left open was denied), unless background tasks still run.
var claudeHookEvents = []struct{ event, matcher string }{
	{"PreToolUse", claudeToolMatcher},
	{"PostToolUse", claudeToolMatcher},
	{"PostToolUseFailure", claudeToolMatcher},
	{"UserPromptSubmit", ""},
	{"Stop", ""},
}

// claudeHookTimeout is the handler timeout in seconds; `prsm hook claude`
// gives up well before it.
const claudeHookTimeout = 10

// installClaudeHooks merges prsm's handlers running argv into Claude
// Code's settings, in exec form when the claude on PATH takes it
// (claudeExecForm).
func installClaudeHooks(out io.Writer, path string, argv []string, project bool) error {
	command := agent.ShellJoin(argv)
	exec := claudeExecForm(context.Background(), "claude")
	changed, err := agent.EditSettings(path, func(s map[string]any) error {
		if _, err := removeClaudeHooks(s); err != nil {
			return err
		}
		return addClaudeHooks(s, argv, exec)
	})
	if err != nil {
		return err
	}
	if !changed {
		fmt.Fprintf(out, "prsm's Claude Code hooks are already in %s; nothing changed\n", path)
		return nil
	}
	fmt.Fprintf(out, "installed prsm's Claude Code hooks in %s: %s\n", path, strings.Join(claudeEventNames(), ", "))
	fmt.Fprintf(out, "  command: %s\n", command)
	if exec {
		fmt.Fprintln(out, "  run without a shell (exec form): this Claude Code takes it, and each hook starts faster")
	}
	if project {
		fmt.Fprintln(out, "  note: Claude Code reads project hooks only where .claude/settings.json exists; --user also covers worktrees without it")
	}
	return nil
}

func claudeEventNames() []string {
	var names []string
	for _, e := range claudeHookEvents {
		names = append(names, e.event)
	}
	return names
}

// claudeSettingsPath is the settings file to edit: the workspace's when
// root is set, else the user's.
func claudeSettingsPath(root string) (string, error) {
	if root != "" {
		return filepath.Join(root, ".claude", "settings.json"), nil
	}
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, "settings.json"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("cannot find the home directory for ~/.claude; use --project")
	}
	return filepath.Join(home, ".claude", "settings.json"), nil
}

// isPrsmHandler recognises a handler prsm installed for Claude Code.
var isPrsmHandler = agent.IsPrsmHandlerOf("claude")

// removeClaudeHooks drops prsm's Claude Code handlers (agent.RemovePrsmHooks).
func removeClaudeHooks(s map[string]any) ([]string, error) {
	return agent.RemovePrsmHooks(s, isPrsmHandler, claudeEventNames())
}

// addClaudeHooks appends prsm's group running argv to each of its events:
// in exec form when exec is set (the command and its args, no shell), else
// as a shell command.
func addClaudeHooks(s map[string]any, argv []string, exec bool) error {
	h := map[string]any{"type": "command", "command": agent.ShellJoin(argv), "timeout": json.Number(fmt.Sprint(claudeHookTimeout))}
	if exec {
		args := make([]any, 0, len(argv)-1)
		for _, a := range argv[1:] {
			args = append(args, a)
		}
		h["command"], h["args"] = argv[0], args
	}
	return AddHandlers(s, h)
}

// AddHandlers adds handler to every event prsm hooks, each in a
// group of its own with prsm's matcher.
func AddHandlers(s map[string]any, handler map[string]any) error {
	hooks, err := agent.HooksOf(s, true)
	if err != nil {
		return err
	}
	for _, e := range claudeHookEvents {
		var groups []any
		if v, ok := hooks[e.event]; ok && v != nil {
			if groups, ok = v.([]any); !ok {
				return fmt.Errorf("hooks.%s is not a JSON array", e.event)
			}
		}
		group := map[string]any{"hooks": []any{handler}}
		if e.matcher != "" {
			group["matcher"] = e.matcher
		}
		hooks[e.event] = append(groups, group)
	}
	return nil
}

// claudeExecFormSince is the first Claude Code known to run a command
// hook in exec form ("command" the program, "args" its arguments), with
// no shell between it and the hook: the version prsm's real-agent tests
// run. A shell form hook costs a bash start more (docs/performance.md),
// and Claude runs two per tool call.
var claudeExecFormSince = [3]int{2, 1, 328}

// claudeExecForm reports whether the Claude Code that claude (a path, or
// a name on PATH) runs takes hooks in exec form: `claude --version` says
// claudeExecFormSince or later. No claude, an older one, or an answer it
// cannot read gets false, and the shell form that every version runs.
func claudeExecForm(ctx context.Context, claude string) bool {
	p, err := exec.LookPath(claude)
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, p, "--version").Output()
	if err != nil {
		return false
	}
	v, ok := leadingVersion(string(out))
	if !ok {
		return false
	}
	for i := range v {
		if v[i] != claudeExecFormSince[i] {
			return v[i] > claudeExecFormSince[i]
		}
	}
	return true
}

// leadingVersion reads the MAJOR.MINOR.PATCH that s starts with ("2.1.328
// (Claude Code)").
func leadingVersion(s string) ([3]int, bool) {
	var v [3]int
	word, _, _ := strings.Cut(strings.TrimSpace(s), " ")
	parts := strings.Split(word, ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, false
		}
		v[i] = n
	}
	return v, true
}
