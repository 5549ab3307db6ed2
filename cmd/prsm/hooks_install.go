package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm/worktree"
)

// claudeToolMatcher names the Claude Code tools that change files. The
// post-tool events use it too, so every capture has its complete and no
// read-only tool pays for a change scan.
const claudeToolMatcher = "Write|Edit|MultiEdit|NotebookEdit|Bash"

// claudeHookEvents are the events prsm installs a handler for, in order,
// with their matchers ("" for events that take none). Stop needs no work
// today; it is installed so that a later prsm can use it without asking
// the user to install again.
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

// hooksCmd is `prsm hooks install|uninstall claude`.
func (a *app) hooksCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "hooks",
		Short: "Install or remove prsm's agent hooks (Claude Code)",
		Args:  exactArgs(0, "a subcommand: install or uninstall"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("see `prsm hooks --help`", "prsm hooks needs a subcommand: install or uninstall")
		},
	}
	c.AddCommand(a.hooksInstallCmd(true), a.hooksInstallCmd(false))
	return c
}

func (a *app) hooksInstallCmd(install bool) *cobra.Command {
	verb, short := "uninstall", "Remove prsm's hooks from Claude Code's settings, and nothing else"
	if install {
		verb, short = "install", "Add prsm's hooks to Claude Code's settings, keeping every other setting"
	}
	var user, proj bool
	c := &cobra.Command{
		Use:   verb + " claude [--user | --project]",
		Short: short,
		Long: short + `.

--user (the default) edits ~/.claude/settings.json ($CLAUDE_CONFIG_DIR/settings.json
when that is set); --project edits <workspace>/.claude/settings.json. Claude Code
reads project settings only where .claude/ exists, and a session worktree may
have none, so --user is the safe choice. Running it twice changes nothing.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || args[0] != "claude" {
				return usagef("usage: "+cmd.UseLine(), "prsm hooks %s takes the agent: claude", verb)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if user && proj {
				return usagef("usage: "+cmd.UseLine(), "give --user or --project, not both")
			}
			path, err := a.claudeSettingsPath(cmd, proj)
			if err != nil {
				return err
			}
			if install {
				command := shellQuote(selfPath()) + " hook claude"
				changed, err := editClaudeSettings(path, func(s map[string]any) error {
					if _, err := removeClaudeHooks(s); err != nil {
						return err
					}
					return addClaudeHooks(s, command)
				})
				if err != nil {
					return err
				}
				if !changed {
					fmt.Fprintf(a.stdio.Out, "prsm's Claude Code hooks are already in %s; nothing changed\n", path)
					return nil
				}
				fmt.Fprintf(a.stdio.Out, "installed prsm's Claude Code hooks in %s: %s\n", path, strings.Join(claudeEventNames(), ", "))
				fmt.Fprintf(a.stdio.Out, "  command: %s\n", command)
				if proj {
					fmt.Fprintln(a.stdio.Out, "  note: Claude Code reads project hooks only where .claude/settings.json exists; --user also covers worktrees without it")
				}
				return nil
			}
			var removed []string
			changed, err := editClaudeSettings(path, func(s map[string]any) error {
				removed, err = removeClaudeHooks(s)
				return err
			})
			if err != nil {
				return err
			}
			if !changed {
				fmt.Fprintf(a.stdio.Out, "no prsm hooks in %s; nothing changed\n", path)
				return nil
			}
			fmt.Fprintf(a.stdio.Out, "removed prsm's Claude Code hooks from %s: %s\n", path, strings.Join(removed, ", "))
			return nil
		},
	}
	c.Flags().BoolVar(&user, "user", false, "edit the user's settings, ~/.claude/settings.json (the default)")
	c.Flags().BoolVar(&proj, "project", false, "edit the workspace's .claude/settings.json")
	return c
}

func claudeEventNames() []string {
	var names []string
	for _, e := range claudeHookEvents {
		names = append(names, e.event)
	}
	return names
}

// claudeSettingsPath is the settings file to edit.
func (a *app) claudeSettingsPath(cmd *cobra.Command, project bool) (string, error) {
	if project {
		dir, err := a.workspaceDir()
		if err != nil {
			return "", err
		}
		repo, err := worktree.Discover(cmd.Context(), nil, dir)
		if err != nil {
			return "", err
		}
		return filepath.Join(repo.Root, ".claude", "settings.json"), nil
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

// shellQuote quotes p for the shell Claude Code runs hook commands with.
func shellQuote(p string) string {
	safe := p != ""
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+,:@%=", r)) {
			safe = false
			break
		}
	}
	if safe {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

// isPrsmHandler recognises a handler prsm installed: a command that runs a
// prsm binary (wherever it lives) with "hook claude".
func isPrsmHandler(h any) bool {
	m, ok := h.(map[string]any)
	if !ok {
		return false
	}
	cmd, ok := m["command"].(string)
	if !ok {
		return false
	}
	prog, found := strings.CutSuffix(strings.TrimSpace(cmd), " hook claude")
	if !found {
		return false
	}
	prog = strings.Trim(strings.TrimSpace(prog), `'"`)
	return strings.Contains(filepath.Base(prog), "prsm")
}

// hooksOf returns the "hooks" object of the settings, creating it when
// create is set; a "hooks" that is not an object is refused.
func hooksOf(s map[string]any, create bool) (map[string]any, error) {
	v, ok := s["hooks"]
	if !ok || v == nil {
		if !create {
			return nil, nil
		}
		h := map[string]any{}
		s["hooks"] = h
		return h, nil
	}
	h, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New(`"hooks" is not a JSON object`)
	}
	return h, nil
}

// removeClaudeHooks drops prsm's handlers from every event, and the groups
// and events they leave empty; it returns the events it changed. Anything
// else, including groups prsm does not understand, stays as it is.
func removeClaudeHooks(s map[string]any) ([]string, error) {
	hooks, err := hooksOf(s, false)
	if err != nil || hooks == nil {
		return nil, err
	}
	var changed []string
	for event, v := range hooks {
		groups, ok := v.([]any)
		if !ok {
			continue
		}
		var keep []any
		removed := false
		for _, g := range groups {
			gm, ok := g.(map[string]any)
			handlers, ok2 := gm["hooks"].([]any)
			if !ok || !ok2 {
				keep = append(keep, g)
				continue
			}
			var left []any
			for _, h := range handlers {
				if isPrsmHandler(h) {
					removed = true
				} else {
					left = append(left, h)
				}
			}
			if len(left) == len(handlers) {
				keep = append(keep, g)
			} else if len(left) > 0 {
				gm["hooks"] = left
				keep = append(keep, gm)
			}
		}
		if !removed {
			continue
		}
		changed = append(changed, event)
		if len(keep) == 0 {
			delete(hooks, event)
		} else {
			hooks[event] = keep
		}
	}
	if len(hooks) == 0 && len(changed) > 0 {
		delete(s, "hooks")
	}
	sortLike(changed, claudeEventNames())
	return changed, nil
}

// addClaudeHooks appends prsm's group to each of its events.
func addClaudeHooks(s map[string]any, command string) error {
	hooks, err := hooksOf(s, true)
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
		group := map[string]any{"hooks": []any{map[string]any{
			"type": "command", "command": command, "timeout": json.Number(fmt.Sprint(claudeHookTimeout)),
		}}}
		if e.matcher != "" {
			group["matcher"] = e.matcher
		}
		hooks[e.event] = append(groups, group)
	}
	return nil
}

// sortLike orders names as they come in order; others go last.
func sortLike(names, order []string) {
	rank := func(n string) int {
		for i, o := range order {
			if o == n {
				return i
			}
		}
		return len(order)
	}
	for i := 1; i < len(names); i++ {
		for j := i; j > 0 && rank(names[j]) < rank(names[j-1]); j-- {
			names[j], names[j-1] = names[j-1], names[j]
		}
	}
}

// editClaudeSettings applies edit to the settings file at path and writes
// it back atomically if that changed anything. A missing file is an empty
// one; a file that is not a JSON object is refused and left alone.
func editClaudeSettings(path string, edit func(map[string]any) error) (bool, error) {
	// Dotfile managers often link settings.json: edit the file the link
	// points to rather than replacing the link.
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return false, fmt.Errorf("resolve %s: %w", path, err)
		}
		path = real
	}
	settings := map[string]any{}
	mode := fs.FileMode(0o600)
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
		if len(bytes.TrimSpace(data)) > 0 {
			if settings, err = decodeSettings(data); err != nil {
				return false, fmt.Errorf("%s is not valid settings JSON (%v); fix it or move it away, nothing was changed", path, err)
			}
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	before, err := json.Marshal(settings)
	if err != nil {
		return false, err
	}
	if err := edit(settings); err != nil {
		return false, fmt.Errorf("%s: %v; nothing was changed", path, err)
	}
	after, err := json.Marshal(settings)
	if err != nil {
		return false, err
	}
	if bytes.Equal(before, after) {
		return false, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(settings); err != nil {
		return false, err
	}
	if err := writeFileAtomic(path, buf.Bytes(), mode); err != nil {
		return false, err
	}
	return true, nil
}

// decodeSettings decodes one JSON object, numbers kept as written.
func decodeSettings(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data[dec.InputOffset():])) > 0 {
		return nil, errors.New("data after the JSON object")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	return m, nil
}

// writeFileAtomic replaces path with data through a temp file in the same
// directory and a rename, so a reader sees the old file or the new one.
// New directories are private to the user.
func writeFileAtomic(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	return nil
}
