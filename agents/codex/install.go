package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm/agents/agent"
)

// codexHookEvents are the Codex events prsm installs a handler for, in
// order, with their matchers: the tool events only for the tools that
// change files (Codex 0.169.0 names its shell Bash, its patch tool
// apply_patch), so that no read-only tool pays for a change scan.
var codexHookEvents = []struct{ event, matcher string }{
	{"PreToolUse", codexToolMatcher},
	{"PostToolUse", codexToolMatcher},
	{"UserPromptSubmit", ""},
	{"Stop", ""},
}

// codexToolMatcher is the matcher of the tool events, a regular
// expression over tool_name as Codex reads it.
const codexToolMatcher = "^(Bash|apply_patch)$"

// codexHookTimeout is the handler timeout in seconds; `prsm hook codex`
// gives up well before it.
const codexHookTimeout = 10

// installer is the agent's entry in `prsm hooks`.
func installer() *agent.Installer {
	return &agent.Installer{
		Help: `For codex, --user (the default) edits ~/.codex/hooks.json
($CODEX_HOME/hooks.json when that is set); --project edits
<workspace>/.codex/hooks.json. Codex runs a hook only once it is trusted
and skips an untrusted one silently: with --user and a codex on PATH,
install has Codex trust prsm's hooks (and no other) in its config.toml;
otherwise it says how to trust them.
` + "`prsm run -- codex`" + ` needs no install: it wires prsm's hooks for its run.`,
		Path:      codexHooksPath,
		Install:   installCodexHooks,
		Uninstall: uninstallCodexHooks,
		Installed: agent.SettingsHooksInstalled(removeCodexHooks),
	}
}

// codexHome is Codex's own directory: $CODEX_HOME, which Codex 0.169.0
// honours for config.toml and hooks.json alike, else ~/.codex.
func codexHome() (string, error) {
	if d := os.Getenv("CODEX_HOME"); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("cannot find the home directory for ~/.codex; set CODEX_HOME or use --project")
	}
	return filepath.Join(home, ".codex"), nil
}

// codexHooksPath is the hooks file to edit: the workspace's when root is
// set, else the user's.
func codexHooksPath(root string) (string, error) {
	if root != "" {
		return filepath.Join(root, ".codex", "hooks.json"), nil
	}
	dir, err := codexHome()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "hooks.json"), nil
}

// installCodexHooks merges prsm's handlers into a Codex hooks.json, which
// has Claude Code's shape: {"hooks": {Event: [{matcher, hooks: [...]}]}}.
func installCodexHooks(out io.Writer, path string, argv []string, project bool) error {
	command := agent.ShellJoin(argv)
	// What uninstall puts back.
	if err := noteCodexInstall(path, project); err != nil {
		return err
	}
	changed, err := agent.EditSettings(path, func(s map[string]any) error {
		if _, err := removeCodexHooks(s); err != nil {
			return err
		}
		return addCodexHooks(s, command)
	})
	if err != nil {
		return err
	}
	if !changed {
		fmt.Fprintf(out, "prsm's Codex hooks are already in %s; nothing changed\n", path)
	} else {
		fmt.Fprintf(out, "installed prsm's Codex hooks in %s: %s\n", path, strings.Join(codexEventNames(), ", "))
		fmt.Fprintf(out, "  command: %s\n", command)
	}
	// An install changes nothing until Codex trusts the hooks, and Codex
	// does not say when it skips them: the user's hooks are trusted here,
	// by Codex itself, or the user is told how.
	if !project {
		config, err := codexTrustInstalled(path)
		switch {
		case err == nil && config == "":
			fmt.Fprintln(out, "  Codex trusts them already")
			return nil
		case err == nil:
			fmt.Fprintf(out, "  trusted them in Codex: it wrote their hashes under hooks.state in %s\n", config)
			return nil
		}
		fmt.Fprintf(out, "  prsm could not have Codex trust them (%s)\n", agent.OneLine(err.Error()))
	}
	fmt.Fprintln(out, "  Codex skips a hook it does not trust, without a word. To trust prsm's once:")
	fmt.Fprintln(out, "    run `codex` in a terminal; at \"Hooks need review\" choose \"Trust all and continue\"")
	fmt.Fprintln(out, "    (or open /hooks in codex and trust the four prsm hooks). Trust again after each change of this file.")
	if project {
		fmt.Fprintln(out, "  Codex reads a project's .codex/hooks.json only in a trusted project, and prsm's sessions run in")
		fmt.Fprintln(out, "  their own worktrees, which see the file only once it is committed; --user covers every worktree.")
	}
	fmt.Fprintln(out, "  `prsm run -- codex ...` needs none of this: it wires prsm's hooks for its own run.")
	return nil
}

// codexTrustInstalled has the codex on PATH trust prsm's handlers in the
// user's hooks file at path, and nothing else: it lists the hooks through
// `codex app-server` and has Codex write the hashes of prsm's untrusted
// ones into its own config.toml (config/batchWrite, as Codex's /hooks
// does), keeping the rest of the file as it is. It returns that file, or
// "" when every one was trusted already.
func codexTrustInstalled(path string) (config string, err error) {
	codex, err := exec.LookPath("codex")
	if err != nil {
		return "", errors.New("no codex on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), codexTrustTimeout)
	defer cancel()
	dir := filepath.Dir(path)
	c, err := startCodexAppServer(ctx, codex, nil, dir, os.Environ())
	if err != nil {
		return "", err
	}
	defer c.close()
	ours := func() (untrusted map[string]any, found int, err error) {
		hooks, err := c.hooks(ctx, dir)
		if err != nil {
			return nil, 0, err
		}
		untrusted = map[string]any{}
		for _, h := range hooks {
			if !codexSameFile(h.SourcePath, path) || !isPrsmCodexHandler(map[string]any{"command": h.Command}) {
				continue
			}
			found++
			if h.TrustStatus != "trusted" {
				untrusted[h.Key] = map[string]string{"trusted_hash": h.CurrentHash}
			}
		}
		if found < len(codexHookEvents) {
			return nil, found, fmt.Errorf("codex lists %d of prsm's %d hooks in %s", found, len(codexHookEvents), path)
		}
		return untrusted, found, nil
	}
	untrusted, _, err := ours()
	if err != nil || len(untrusted) == 0 {
		return "", err
	}
	var res struct {
		FilePath string `json:"filePath"`
	}
	if err := c.call(ctx, "config/batchWrite", map[string]any{
		"edits":    []any{map[string]any{"keyPath": "hooks.state", "value": untrusted, "mergeStrategy": "upsert"}},
		"filePath": nil, "expectedVersion": nil, "reloadUserConfig": true,
	}, &res); err != nil {
		return "", err
	}
	if left, _, err := ours(); err != nil || len(left) > 0 {
		if err == nil {
			err = fmt.Errorf("codex still lists %d of them as untrusted", len(left))
		}
		return "", err
	}
	return res.FilePath, nil
}

// sameFile reports whether a and b name the same existing file.
func codexSameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

func codexEventNames() []string {
	var names []string
	for _, e := range codexHookEvents {
		names = append(names, e.event)
	}
	return names
}

// codexHookGroups are prsm's hook groups by event, in the hooks.json shape.
func codexHookGroups(command string) map[string]map[string]any {
	groups := map[string]map[string]any{}
	for _, e := range codexHookEvents {
		g := map[string]any{"hooks": []any{map[string]any{
			"type": "command", "command": command, "timeout": json.Number(fmt.Sprint(codexHookTimeout)),
		}}}
		if e.matcher != "" {
			g["matcher"] = e.matcher
		}
		groups[e.event] = g
	}
	return groups
}

// addCodexHooks appends prsm's group to each of its events.
func addCodexHooks(s map[string]any, command string) error {
	hooks, err := agent.HooksOf(s, true)
	if err != nil {
		return err
	}
	groups := codexHookGroups(command)
	for _, e := range codexHookEvents {
		var list []any
		if v, ok := hooks[e.event]; ok && v != nil {
			if list, ok = v.([]any); !ok {
				return fmt.Errorf("hooks.%s is not a JSON array", e.event)
			}
		}
		hooks[e.event] = append(list, groups[e.event])
	}
	return nil
}

// isPrsmCodexHandler recognises a handler prsm installed for Codex.
var isPrsmCodexHandler = agent.IsPrsmHandlerOf("codex")

// removeCodexHooks drops prsm's handlers from a Codex hooks.json
// (agent.RemovePrsmHooks).
func removeCodexHooks(s map[string]any) ([]string, error) {
	return agent.RemovePrsmHooks(s, isPrsmCodexHandler, codexEventNames())
}
