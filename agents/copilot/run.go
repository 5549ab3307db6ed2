package copilot

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents/agent"
)

// copilotRunArgs wires prsm's hooks into one `prsm run -- copilot ...`
// without touching the user's files: Copilot CLI loads a plugin from a
// directory named by --plugin-dir for one run (checked on 1.0.102), and a
// plugin's hooks/hooks.json is a hooks file like the one `prsm hooks
// install copilot` writes. prsm keeps that plugin under PRSM_HOME
// (agents/copilot/plugin), out of the worktree, and puts --plugin-dir
// right after the command's name (Copilot takes it before a subcommand
// too). A copilot that already loads prsm's hooks (installed for the
// user, in $COPILOT_HOME, or in the worktree's .github/hooks) comes back
// as it is: a second set would report every call twice. So does any other
// command. When the plugin cannot be written, one line on errOut says
// which `prsm hooks install` to run.
func copilotRunArgs(argv []string, worktree, self string, errOut io.Writer) []string {
	if len(argv) == 0 || filepath.Base(argv[0]) != "copilot" {
		return argv
	}
	candidates := []string{filepath.Join(worktree, ".github", "hooks", "prsm.json")}
	if p, err := copilotHooksPath(""); err == nil {
		candidates = append(candidates, p)
	}
	if d := os.Getenv("COPILOT_HOME"); d != "" {
		candidates = append(candidates, filepath.Join(d, "hooks", "prsm.json"))
	}
	for _, p := range candidates {
		if ok, _ := copilotHooksInstalled(p); ok {
			return argv
		}
	}
	dir, err := writeCopilotPlugin(agent.HookCommand(self, "copilot"))
	if err != nil {
		fmt.Fprintf(errOut, "prsm: could not add prsm's Copilot CLI hooks for this run (%s); its changes come in as Watch records. `prsm hooks install copilot` installs them for good\n", agent.OneLine(strings.TrimSpace(err.Error())))
		return argv
	}
	return append([]string{argv[0], "--plugin-dir", dir}, argv[1:]...)
}

// copilotPluginName is the name of the plugin prsm run hands Copilot.
const copilotPluginName = "prsm"

// writeCopilotPlugin writes (or leaves, when it is current) the plugin
// whose hooks run command, and returns its directory: a manifest
// (.plugin/plugin.json) and hooks/hooks.json.
func writeCopilotPlugin(command string) (string, error) {
	home, err := prsm.Home()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(home, "agents", "copilot", "plugin")
	manifest, _ := json.MarshalIndent(map[string]any{
		"name":        copilotPluginName,
		"description": "prsm's hooks: each tool call's changes, recorded under the call (prsm run adds it for one run)",
		"version":     "1.0.0",
	}, "", "  ")
	for _, f := range []struct {
		path string
		data []byte
	}{
		{filepath.Join(dir, ".plugin", "plugin.json"), append(manifest, '\n')},
		{filepath.Join(dir, "hooks", "hooks.json"), copilotHooksFile(command)},
	} {
		if old, err := os.ReadFile(f.path); err == nil && string(old) == string(f.data) {
			continue
		}
		if err := agent.WriteFileAtomic(f.path, f.data, 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}
