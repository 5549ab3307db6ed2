package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/hook"
	"github.com/prsm-dev/prsm/internal/safepath"
)

// claudeRunArgs wires prsm's Claude Code hooks into one `prsm run --
// claude ...` without touching the user's settings: `--settings FILE`,
// a settings file prsm writes in the project's directory under PRSM_HOME
// (claude-settings.json), goes before the user's arguments; Claude Code
// merges it over the user's and the project's settings. Its handlers are
// http hooks that POST each event to the server at baseURL (/hooks/claude)
// with the bearer token from $PRSM_HOOK_TOKEN (allowedEnvVars), which the
// run puts in the child's environment: the session's hook token, never
// the server's own, and never in a file. No hook process runs per
// event. Should the server be down, or restarted at another address, a
// hook fails at once and Claude Code goes on; the watcher records the
// change. Without a server address (baseURL empty) they are the command
// hooks `prsm hooks install claude` writes. The file also asks Claude
// Code to keep prsm's own state out of the agent's reach (claudeGuards).
// A claude that already has prsm's hooks (in the user's settings, or the
// worktree's project or local settings) gets a file with the guards
// alone. Any other command comes back as it is, and so does one that
// passes --settings itself, which would replace prsm's: then, unless
// prsm's hooks are installed, one line on errOut says which `prsm hooks
// install` to run.
func claudeRunArgs(argv []string, worktree, projectDir, baseURL string, errOut io.Writer) []string {
	if len(argv) == 0 || filepath.Base(argv[0]) != "claude" {
		return argv
	}
	var candidates []string
	if p, err := claudeSettingsPath(""); err == nil {
		candidates = append(candidates, p)
	}
	candidates = append(candidates,
		filepath.Join(worktree, ".claude", "settings.json"),
		filepath.Join(worktree, ".claude", "settings.local.json"))
	installed := false
	for _, p := range candidates {
		if ok, _ := hookInstallers["claude"].installed(p); ok {
			installed = true
			break
		}
	}
	if claudeSetsSettings(argv[1:]) {
		if !installed {
			fmt.Fprintln(errOut, "prsm: this claude command passes --settings; prsm adds no hooks of its own, so its changes come in as Watch records unless prsm's hooks are installed: `prsm hooks install claude`")
		}
		return argv
	}
	path := filepath.Join(projectDir, "claude-settings.json")
	s := claudeGuards(projectDir)
	var err error
	switch {
	case installed:
		// The user's own prsm hooks report; a second set would send
		// every event twice.
	case baseURL == "":
		err = addClaudeHooks(s, hookArgv("claude"), claudeExecForm(context.Background(), argv[0]))
	default:
		err = addClaudeHandlers(s, map[string]any{
			"type": "http", "url": baseURL + "/hooks/claude", "timeout": json.Number(fmt.Sprint(claudeHookTimeout)),
			"headers":        map[string]any{"Authorization": "Bearer $" + api.HookTokenEnv},
			"allowedEnvVars": []any{api.HookTokenEnv},
		})
	}
	if err == nil {
		var data []byte
		if data, err = json.MarshalIndent(s, "", "  "); err == nil {
			err = writeFileAtomic(path, append(data, '\n'), 0o600)
		}
	}
	if err == nil {
		return append([]string{argv[0], "--settings", path}, argv[1:]...)
	}
	if installed {
		fmt.Fprintf(errOut, "prsm: could not write prsm's Claude Code settings for this run (%s); Claude Code is not asked to keep prsm's state from the agent\n", hook.OneLine(strings.TrimSpace(err.Error())))
		return argv
	}
	fmt.Fprintf(errOut, "prsm: could not add prsm's Claude Code hooks for this run (%s); its changes come in as Watch records. `prsm hooks install claude` installs them for good\n", hook.OneLine(strings.TrimSpace(err.Error())))
	return argv
}

// claudeGuards is the part of a run's Claude Code settings that keeps
// prsm's own state out of the agent's reach: the server's token
// (server.json), the store (prsm.db) and the review page's login files
// (ui/) of every project under PRSM_HOME. An agent runs as the user, so
// only Claude Code can refuse it these:
//
//   - sandbox.filesystem.denyRead names PRSM_HOME, and allowRead gives
//     back the project's worktrees (the session's own among them) inside
//     it: Claude Code's sandbox, when the user turns it on
//     (sandbox.enabled, /sandbox), then keeps the agent's shell commands
//     out of the rest. Checked against Claude Code 2.1.328's settings
//     schema (sandbox.filesystem.denyRead and allowRead, arrays of
//     absolute paths; a --settings file may re-allow what it denies).
//     allowUnsandboxedCommands false keeps every command in the sandbox:
//     otherwise a Bash call with dangerouslyDisableSandbox runs outside
//     it, and under bypassPermissions nobody is asked
//     (TestRealAgentClaudeSandbox read server.json that way). It changes
//     nothing while the sandbox is off.
//   - permissions.deny Read and Edit rules (`//` starts an absolute path)
//     keep Claude Code's own file tools off those files with or without
//     the sandbox; Claude Code merges Read deny rules into the sandbox's
//     denyRead too. Edit is also denied on this settings file.
//
// Without the sandbox, a shell command of the agent can still read them:
// docs/reference.md says where that boundary lies.
func claudeGuards(projectDir string) map[string]any {
	projects := filepath.Dir(projectDir)
	home := filepath.Dir(projects)
	var denyRead, allowRead []any
	for _, h := range pathForms(home) {
		denyRead = append(denyRead, h)
	}
	for _, w := range pathForms(filepath.Join(projectDir, "worktrees")) {
		allowRead = append(allowRead, w)
	}
	var deny []any
	for _, p := range pathForms(projects) {
		for _, secret := range []string{"server.json", "prsm.db*", "ui/**"} {
			rule := "(/" + filepath.ToSlash(filepath.Join(p, "*", secret)) + ")"
			deny = append(deny, "Read"+rule, "Edit"+rule)
		}
	}
	for _, p := range pathForms(filepath.Join(projectDir, "claude-settings.json")) {
		deny = append(deny, "Edit(/"+filepath.ToSlash(p)+")")
	}
	return map[string]any{
		"sandbox": map[string]any{
			"filesystem":               map[string]any{"denyRead": denyRead, "allowRead": allowRead},
			"allowUnsandboxedCommands": false,
		},
		"permissions": map[string]any{"deny": deny},
	}
}

// pathForms is p as given and, when it differs, with its symlinks
// resolved: a rule must match whichever spelling Claude Code compares.
func pathForms(p string) []string {
	if r := safepath.Real(p); r != p {
		return []string{p, r}
	}
	return []string{p}
}

// claudeSetsSettings reports whether claude arguments pass --settings,
// which a second --settings of prsm's would fight with.
func claudeSetsSettings(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--settings" || strings.HasPrefix(a, "--settings=") {
			return true
		}
	}
	return false
}
