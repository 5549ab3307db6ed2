package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm/hook"
)

// claudeTokenEnv holds the server's token in the environment of a `prsm
// run -- claude`: its http hooks send it (headers, allowedEnvVars), so
// that it is written into no settings file.
const claudeTokenEnv = "PRSM_HOOK_TOKEN"

// claudeRunArgs wires prsm's Claude Code hooks into one `prsm run --
// claude ...` without touching the user's settings: `--settings FILE`,
// a settings file prsm writes in the project's directory under PRSM_HOME
// (claude-settings.json), goes before the user's arguments; Claude Code
// merges it over the user's and the project's settings. Its handlers are
// http hooks that POST each event to the server at baseURL (/hooks/claude)
// with the bearer token from $PRSM_HOOK_TOKEN, which env (added to the
// child's environment) sets: no hook process per event. Should the server
// be down, or restarted at another address, a hook fails at once and
// Claude Code goes on; the watcher records the change. Without a server
// address (baseURL empty) they are the command hooks `prsm hooks install
// claude` writes. Any other command, and a claude that already has
// prsm's hooks (in the user's settings, or the worktree's project or
// local settings), comes back as it is. So does a command that passes
// --settings itself, which would replace prsm's: then one line on errOut
// says which `prsm hooks install` to run.
func claudeRunArgs(argv []string, worktree, projectDir, baseURL, token string, errOut io.Writer) (args, env []string) {
	if len(argv) == 0 || filepath.Base(argv[0]) != "claude" {
		return argv, nil
	}
	var candidates []string
	if p, err := claudeSettingsPath(""); err == nil {
		candidates = append(candidates, p)
	}
	candidates = append(candidates,
		filepath.Join(worktree, ".claude", "settings.json"),
		filepath.Join(worktree, ".claude", "settings.local.json"))
	for _, p := range candidates {
		if ok, _ := hookInstallers["claude"].installed(p); ok {
			return argv, nil
		}
	}
	if claudeSetsSettings(argv[1:]) {
		fmt.Fprintln(errOut, "prsm: this claude command passes --settings; prsm adds no hooks of its own, so its changes come in as Watch records unless prsm's hooks are installed: `prsm hooks install claude`")
		return argv, nil
	}
	path := filepath.Join(projectDir, "claude-settings.json")
	s := map[string]any{}
	var err error
	if baseURL == "" {
		err = addClaudeHooks(s, hookArgv("claude"), claudeExecForm(context.Background(), argv[0]))
	} else {
		err = addClaudeHandlers(s, map[string]any{
			"type": "http", "url": baseURL + "/hooks/claude", "timeout": json.Number(fmt.Sprint(claudeHookTimeout)),
			"headers":        map[string]any{"Authorization": "Bearer $" + claudeTokenEnv},
			"allowedEnvVars": []any{claudeTokenEnv},
		})
		env = []string{claudeTokenEnv + "=" + token}
	}
	if err == nil {
		var data []byte
		if data, err = json.MarshalIndent(s, "", "  "); err == nil {
			err = writeFileAtomic(path, append(data, '\n'), 0o600)
		}
	}
	if err == nil {
		return append([]string{argv[0], "--settings", path}, argv[1:]...), env
	}
	fmt.Fprintf(errOut, "prsm: could not add prsm's Claude Code hooks for this run (%s); its changes come in as Watch records. `prsm hooks install claude` installs them for good\n", hook.OneLine(strings.TrimSpace(err.Error())))
	return argv, nil
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
