package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm/worktree"
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

// hookInstaller is one agent's entry in `prsm hooks install|uninstall|status`:
// which file holds its hooks and how prsm's go in and come out. Each agent's
// installer lives in its own file (hooks_<agent>.go) and adds itself to
// hookInstallers from an init function.
type hookInstaller struct {
	// title is how people write the agent's name ("Claude Code").
	title string
	// help says, for `prsm hooks install --help`, what --user and
	// --project edit.
	help string
	// path is the file --user (root "") or --project (root, the
	// workspace's repository root) edits.
	path func(root string) (string, error)
	// install puts prsm's hooks, running command (prsm's own path, quoted,
	// and "hook AGENT"), into the file at path, and prints what it
	// changed, or that nothing changed, on out.
	install func(out io.Writer, path string, argv []string, project bool) error
	// uninstall takes prsm's hooks, and nothing else, out of the file at
	// path, and prints what it changed on out.
	uninstall func(out io.Writer, path string) error
	// installed reports whether the file at path holds prsm's hooks.
	installed func(path string) (bool, error)
}

// hookInstallers are the agents `prsm hooks` knows, by their name on the
// command line (as in `prsm hook AGENT`).
var hookInstallers = map[string]*hookInstaller{}

func init() {
	hookInstallers["claude"] = &hookInstaller{
		title: "Claude Code",
		help: `For claude, --user (the default) edits ~/.claude/settings.json
($CLAUDE_CONFIG_DIR/settings.json when that is set); --project edits
<workspace>/.claude/settings.json. Claude Code reads project settings only
where .claude/ exists, and a session worktree may have none, so --user is
the safe choice.`,
		path:      claudeSettingsPath,
		install:   installClaudeHooks,
		uninstall: uninstallSettingsHooks("Claude Code", removeClaudeHooks),
		installed: settingsHooksInstalled(removeClaudeHooks),
	}
}

// hookAgentNames are the names of hookInstallers, sorted.
func hookAgentNames() []string {
	names := make([]string, 0, len(hookInstallers))
	for n := range hookInstallers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// hooksCmd is `prsm hooks install|uninstall AGENT` and `prsm hooks status`.
func (a *app) hooksCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "hooks",
		Short: "Install, remove or show prsm's agent hooks (" + strings.Join(hookAgentNames(), ", ") + ")",
		Args:  exactArgs(0, "a subcommand: install, uninstall or status"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help() // with no subcommand: what they are
		},
	}
	c.AddCommand(a.hooksInstallCmd(true), a.hooksInstallCmd(false), a.hooksStatusCmd())
	return c
}

func (a *app) hooksInstallCmd(install bool) *cobra.Command {
	verb, short := "uninstall", "Remove prsm's hooks from an agent's settings, and nothing else"
	if install {
		verb, short = "install", "Add prsm's hooks to an agent's settings, keeping every other setting"
	}
	names := hookAgentNames()
	var help []string
	for _, n := range names {
		help = append(help, hookInstallers[n].help)
	}
	var user, proj bool
	c := &cobra.Command{
		Use:   verb + " AGENT [--user | --project]",
		Short: short,
		Long: short + ". AGENT is one of: " + strings.Join(names, ", ") + `.
Running it twice changes nothing; a settings file prsm cannot parse is
refused and left as it is.

` + strings.Join(help, "\n\n"),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || hookInstallers[args[0]] == nil {
				return usagef("usage: "+cmd.UseLine(), "prsm hooks %s takes the agent: %s", verb, strings.Join(names, ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if user && proj {
				return usagef("usage: "+cmd.UseLine(), "give --user or --project, not both")
			}
			agent := args[0]
			h := hookInstallers[agent]
			root := ""
			if proj {
				var err error
				if root, err = a.hooksProjectRoot(cmd); err != nil {
					return err
				}
			}
			path, err := h.path(root)
			if err != nil {
				return err
			}
			if install {
				return h.install(a.stdio.Out, path, hookArgv(agent), proj)
			}
			return h.uninstall(a.stdio.Out, path)
		},
	}
	c.Flags().BoolVar(&user, "user", false, "edit the user's settings (the default)")
	c.Flags().BoolVar(&proj, "project", false, "edit the workspace's settings")
	return c
}

// hooksStatusCmd is `prsm hooks status`: for every agent, whether its user
// and project settings hold prsm's hooks.
func (a *app) hooksStatusCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "status",
		Short: "Show which agents have prsm's hooks installed, and where",
		Long: `Show, for every agent prsm has hooks for, whether its user settings and the
workspace's project settings hold prsm's hooks. Outside a git repository
only the user settings are shown.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			type row struct {
				Agent     string `json:"agent"`
				Scope     string `json:"scope"`
				Installed bool   `json:"installed"`
				Path      string `json:"path"`
				Error     string `json:"error,omitempty"`
			}
			var rows []row
			root, rootErr := a.hooksProjectRoot(cmd)
			for _, agent := range hookAgentNames() {
				h := hookInstallers[agent]
				for _, scope := range []string{"user", "project"} {
					r := row{Agent: agent, Scope: scope}
					var err error
					if scope == "project" {
						if rootErr != nil {
							continue
						}
						r.Path, err = h.path(root)
					} else {
						r.Path, err = h.path("")
					}
					if err == nil {
						r.Installed, err = h.installed(r.Path)
					}
					if err != nil {
						r.Error = err.Error()
					}
					rows = append(rows, r)
				}
			}
			if a.jsonOut {
				return printJSON(a.stdio.Out, rows)
			}
			t := newTable(a.stdio.Out, "AGENT", "SCOPE", "HOOKS", "FILE")
			for _, r := range rows {
				state := "-"
				switch {
				case r.Error != "":
					state = "unreadable: " + r.Error
				case r.Installed:
					state = "installed"
				}
				t.row(r.Agent, r.Scope, state, r.Path)
			}
			t.flush()
			return nil
		},
	}
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

// hooksProjectRoot is the root of the workspace's repository, whose
// settings --project edits.
func (a *app) hooksProjectRoot(cmd *cobra.Command) (string, error) {
	dir, err := a.workspaceDir()
	if err != nil {
		return "", err
	}
	repo, err := worktree.Discover(cmd.Context(), nil, dir)
	if err != nil {
		return "", err
	}
	return repo.Root, nil
}

// installClaudeHooks merges prsm's handlers running argv into Claude
// Code's settings, in exec form when the claude on PATH takes it
// (claudeExecForm).
func installClaudeHooks(out io.Writer, path string, argv []string, project bool) error {
	command := shellJoin(argv)
	exec := claudeExecForm(context.Background(), "claude")
	changed, err := editClaudeSettings(path, func(s map[string]any) error {
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

// uninstallSettingsHooks is the uninstall of an agent whose hooks live
// in a JSON settings file prsm edits whole (editClaudeSettings: Claude
// Code, Codex, Cursor): remove takes prsm's handlers, and nothing else,
// out and names them; title is how people write the agent's name.
func uninstallSettingsHooks(title string, remove func(map[string]any) ([]string, error)) func(io.Writer, string) error {
	return uninstallHooksWith(editClaudeSettings, title, remove)
}

// uninstallHooksWith is uninstallSettingsHooks for a settings file that
// edit rewrites (it reports whether the file changed).
func uninstallHooksWith(edit func(string, func(map[string]any) error) (bool, error), title string,
	remove func(map[string]any) ([]string, error)) func(io.Writer, string) error {
	return func(out io.Writer, path string) error {
		var removed []string
		changed, err := edit(path, func(s map[string]any) error {
			var err error
			removed, err = remove(s)
			return err
		})
		if err != nil {
			return err
		}
		if !changed {
			fmt.Fprintf(out, "no prsm hooks in %s; nothing changed\n", path)
			return nil
		}
		fmt.Fprintf(out, "removed prsm's %s hooks from %s: %s\n", title, path, strings.Join(removed, ", "))
		return nil
	}
}

// settingsHooksInstalled reports, for such an agent, whether the file at
// path holds a prsm handler (remove finds one); a missing file holds
// none.
func settingsHooksInstalled(remove func(map[string]any) ([]string, error)) func(string) (bool, error) {
	return func(path string) (bool, error) {
		s, err := readSettings(path)
		if err != nil || s == nil {
			return false, err
		}
		removed, err := remove(s)
		return len(removed) > 0, err
	}
}

// readSettings reads the JSON object at path; a missing or empty file is
// nil, no error.
func readSettings(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	s, err := decodeSettings(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not valid settings JSON (%v)", path, err)
	}
	return s, nil
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

// isPrsmHandler recognises a handler prsm installed for Claude Code.
var isPrsmHandler = isPrsmHandlerOf("claude")

// isPrsmHandlerOf recognises a handler prsm installed for agent: a command
// that runs prsm's adapter of agent (isPrsmHookCommand), in shell form or
// in exec form (Claude Code's command and args).
func isPrsmHandlerOf(agent string) func(any) bool {
	return func(h any) bool {
		m, ok := h.(map[string]any)
		if !ok {
			return false
		}
		cmd, ok := m["command"].(string)
		if !ok {
			return false
		}
		if raw, ok := m["args"].([]any); ok {
			args := make([]string, 0, len(raw))
			for _, a := range raw {
				s, ok := a.(string)
				if !ok {
					return false
				}
				args = append(args, s)
			}
			return isPrsmHookArgv(append([]string{cmd}, args...), agent)
		}
		return isPrsmHookCommand(cmd, agent)
	}
}

// removeClaudeHooks drops prsm's Claude Code handlers (removePrsmHooks).
func removeClaudeHooks(s map[string]any) ([]string, error) {
	return removePrsmHooks(s, isPrsmHandler, claudeEventNames())
}

// removePrsmHooks drops the handlers ours recognises from every event of a
// settings object shaped {hooks: {Event: [{matcher, hooks: [handler]}]}}
// (Claude Code's, Codex's and Gemini CLI's), and the groups and events
// they leave empty; it returns the events it changed, in order's order.
// Anything else, including groups it does not understand, stays as it is.
func removePrsmHooks(s map[string]any, ours func(any) bool, order []string) ([]string, error) {
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
				if ours(h) {
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
	sortLike(changed, order)
	return changed, nil
}

// addClaudeHooks appends prsm's group running argv to each of its events:
// in exec form when exec is set (the command and its args, no shell), else
// as a shell command.
func addClaudeHooks(s map[string]any, argv []string, exec bool) error {
	h := map[string]any{"type": "command", "command": shellJoin(argv), "timeout": json.Number(fmt.Sprint(claudeHookTimeout))}
	if exec {
		args := make([]any, 0, len(argv)-1)
		for _, a := range argv[1:] {
			args = append(args, a)
		}
		h["command"], h["args"] = argv[0], args
	}
	return addClaudeHandlers(s, h)
}

// claudeExecFormSince is the first Claude Code known to run a command
// hook in exec form ("command" the program, "args" its arguments), with
// no shell between it and the hook: the version prsm's real-agent tests
// run. A shell form hook costs a bash start, about 1.1 ms on the 2-core VM
// of the benchmarks, and Claude runs two per tool call.
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

// addClaudeHandlers adds handler to every event prsm hooks, each in a
// group of its own with prsm's matcher.
func addClaudeHandlers(s map[string]any, handler map[string]any) error {
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
		group := map[string]any{"hooks": []any{handler}}
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

// hookCommand is the command an agent's hook runs for agent (hookCommandFor
// this binary).
func hookCommand(agent string) string { return hookCommandFor(selfPath(), agent) }

// hookArgv is hookCommand as an argument list.
func hookArgv(agent string) []string { return hookArgvFor(selfPath(), agent) }

// leanHookName is the lean hook binary `make install` puts beside prsm.
const leanHookName = "prsm-hook"

// hookCommandFor is the hook command for agent of the prsm binary at self:
// the lean prsm-hook beside it when there is one (its process starts in a
// few milliseconds, which every tool call pays twice), else `prsm hook
// AGENT`, which does the same.
func hookCommandFor(self, agent string) string { return shellJoin(hookArgvFor(self, agent)) }

// hookArgvFor is hookCommandFor as an argument list.
func hookArgvFor(self, agent string) []string {
	lean := filepath.Join(filepath.Dir(self), leanHookName)
	if fi, err := os.Stat(lean); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return []string{lean, agent}
	}
	return []string{self, "hook", agent}
}

// shellJoin is argv as one shell command line.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// isPrsmHookArgv is isPrsmHookCommand for an argument list (a hook in
// exec form).
func isPrsmHookArgv(argv []string, agent string) bool {
	switch {
	case len(argv) == 3 && argv[1] == "hook" && argv[2] == agent:
		return strings.Contains(filepath.Base(argv[0]), "prsm")
	case len(argv) == 2 && argv[1] == agent:
		return filepath.Base(argv[0]) == leanHookName
	}
	return false
}

// isPrsmHookCommand reports whether a hook command runs prsm's adapter of
// agent, wherever the binary lives: "PRSM hook AGENT" or "PRSM-HOOK AGENT".
// The program may be quoted; the rule is isPrsmHookArgv's.
func isPrsmHookCommand(cmd, agent string) bool {
	cmd = strings.TrimSpace(cmd)
	unquote := func(prog string) string { return strings.Trim(strings.TrimSpace(prog), `'"`) }
	if prog, found := strings.CutSuffix(cmd, " hook "+agent); found {
		return isPrsmHookArgv([]string{unquote(prog), "hook", agent}, agent)
	}
	if prog, found := strings.CutSuffix(cmd, " "+agent); found {
		return isPrsmHookArgv([]string{unquote(prog), agent}, agent)
	}
	return false
}
