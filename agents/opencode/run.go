package opencode

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

// opencodeRunEnv wires prsm's opencode plugin into one `prsm run --
// opencode ...` without touching the user's files: the plugin is written
// under PRSM_HOME (agents/opencode/prsm.js) and named in
// OPENCODE_CONFIG_CONTENT, a config opencode merges over the user's and the
// project's. It returns the environment entries to add: none for another
// command, for an opencode that already loads prsm's plugin (installed for
// the user, in the worktree or in $OPENCODE_CONFIG_DIR), or when
// OPENCODE_CONFIG_CONTENT is the user's own; then one line on errOut says
// which `prsm hooks install` to run.
func opencodeRunEnv(argv []string, worktree, self string, errOut io.Writer) []string {
	if len(argv) == 0 || filepath.Base(argv[0]) != "opencode" {
		return nil
	}
	candidates := []string{filepath.Join(worktree, ".opencode", "plugins", "prsm.js")}
	if p, err := opencodePluginPath(""); err == nil {
		candidates = append(candidates, p)
	}
	if d := os.Getenv("OPENCODE_CONFIG_DIR"); d != "" {
		candidates = append(candidates, filepath.Join(d, "plugins", "prsm.js"), filepath.Join(d, "plugin", "prsm.js"))
	}
	for _, p := range candidates {
		if ok, _ := opencodePluginInstalled(p); ok {
			return nil
		}
	}
	if os.Getenv("OPENCODE_CONFIG_CONTENT") != "" {
		fmt.Fprintln(errOut, "prsm: OPENCODE_CONFIG_CONTENT is set, so prsm cannot add its opencode plugin for this run; opencode's changes come in as Watch records. `prsm hooks install opencode` installs the plugin for good")
		return nil
	}
	home, err := prsm.Home()
	if err == nil {
		path := filepath.Join(home, "agents", "opencode", "prsm.js")
		plugin := opencodePlugin(agent.HookCommand(self, "opencode"))
		if old, rerr := os.ReadFile(path); rerr != nil || string(old) != string(plugin) {
			err = agent.WriteFileAtomic(path, plugin, 0o644)
		}
		if err == nil {
			config, _ := json.Marshal(map[string]any{"plugin": []string{path}})
			return []string{"OPENCODE_CONFIG_CONTENT=" + string(config)}
		}
	}
	fmt.Fprintf(errOut, "prsm: could not add prsm's opencode plugin for this run (%s); opencode's changes come in as Watch records. `prsm hooks install opencode` installs it for good\n", agent.OneLine(strings.TrimSpace(err.Error())))
	return nil
}
