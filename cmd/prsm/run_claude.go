package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/hook"
)

// claudeRunArgs wires prsm's Claude Code hooks into one `prsm run --
// claude ...` without touching the user's settings: `--settings FILE`,
// a settings file prsm writes under PRSM_HOME (agents/claude/settings.json)
// with the handlers `prsm hooks install claude` writes, goes before the
// user's arguments; Claude Code merges it over the user's and the
// project's settings. Any other command, and a claude that already has
// prsm's hooks (in the user's settings, or the worktree's project or
// local settings), comes back as it is. So does a command that passes
// --settings itself, which would replace prsm's: then one line on errOut
// says which `prsm hooks install` to run.
func claudeRunArgs(argv []string, worktree string, errOut io.Writer) []string {
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
	for _, p := range candidates {
		if ok, _ := claudeHooksInstalled(p); ok {
			return argv
		}
	}
	if claudeSetsSettings(argv[1:]) {
		fmt.Fprintln(errOut, "prsm: this claude command passes --settings; prsm adds no hooks of its own, so its changes come in as Watch records unless prsm's hooks are installed: `prsm hooks install claude`")
		return argv
	}
	home, err := prsm.Home()
	if err == nil {
		path := filepath.Join(home, "agents", "claude", "settings.json")
		s := map[string]any{}
		if err = addClaudeHooks(s, hookCommand("claude")); err == nil {
			var data []byte
			if data, err = json.MarshalIndent(s, "", "  "); err == nil {
				err = writeFileAtomic(path, append(data, '\n'), 0o644)
			}
		}
		if err == nil {
			return append([]string{argv[0], "--settings", path}, argv[1:]...)
		}
	}
	fmt.Fprintf(errOut, "prsm: could not add prsm's Claude Code hooks for this run (%s); its changes come in as Watch records. `prsm hooks install claude` installs them for good\n", hook.OneLine(strings.TrimSpace(err.Error())))
	return argv
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
