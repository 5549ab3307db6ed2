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
	"github.com/prsm-dev/prsm/api"
)

// copilotRunArgs wires prsm's hooks into one `prsm run -- copilot ...`
// without touching the user's files: Copilot CLI loads a plugin from a
// directory named by --plugin-dir for one run (checked on 1.0.102), and a
// plugin's hooks/hooks.json is a hooks file. prsm keeps that plugin out
// of the worktree and puts --plugin-dir right after the command's name
// (Copilot takes it before a subcommand too), and returns the variables
// the run adds to the agent's environment. With a server address
// (baseURL), the plugin is the workspace's (copilot-plugin in projectDir,
// rewritten at each run, as the address changes with each start of the
// server) and its hooks are http hooks that POST each event to the
// server (/hooks/copilot?event=EVENT: Copilot's payloads do not name
// their event) with the bearer token from $PRSM_HOOK_TOKEN
// (allowedEnvVars), which the run puts in the agent's environment: no
// hook process runs per event. Copilot loads no hooks file with a
// preToolUse http hook on an http:// address unless
// COPILOT_HOOK_ALLOW_LOCALHOST=1 is in its environment (1.0.102), so the
// run sets it. Without an address they are the command hooks `prsm
// hooks install copilot` writes, in a plugin under PRSM_HOME
// (agents/copilot/plugin). A copilot that already loads prsm's hooks
// (installed for the user, in $COPILOT_HOME, or in the worktree's
// .github/hooks) comes back as it is: a second set would report every
// call twice. So does any other command. When the plugin cannot be
// written, one line on errOut says which `prsm hooks install` to run.
func copilotRunArgs(argv []string, worktree, projectDir, baseURL, self string, errOut io.Writer) ([]string, []string) {
	if len(argv) == 0 || filepath.Base(argv[0]) != "copilot" {
		return argv, nil
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
			return argv, nil
		}
	}
	var dir string
	var env []string
	var err error
	if baseURL != "" && projectDir != "" {
		dir = filepath.Join(projectDir, "copilot-plugin")
		env = []string{CopilotAllowLocalhostEnv + "=1"}
		err = writeCopilotPlugin(dir, copilotHTTPHooksFile(baseURL+api.RouteAgentHook.Path("copilot")))
	} else {
		var home string
		if home, err = prsm.Home(); err == nil {
			dir = filepath.Join(home, "agents", "copilot", "plugin")
			err = writeCopilotPlugin(dir, copilotHooksFile(agent.HookCommand(self, "copilot")))
		}
	}
	if err != nil {
		fmt.Fprintf(errOut, "prsm: could not add prsm's Copilot CLI hooks for this run (%s); its changes come in as Watch records. `prsm hooks install copilot` installs them for good\n", agent.OneLine(strings.TrimSpace(err.Error())))
		return argv, nil
	}
	return append([]string{argv[0], "--plugin-dir", dir}, argv[1:]...), env
}

// CopilotAllowLocalhostEnv, set to 1, lets Copilot CLI load a hooks file
// whose preToolUse http hook posts to an http:// address (1.0.102
// refuses the whole file otherwise).
const CopilotAllowLocalhostEnv = "COPILOT_HOOK_ALLOW_LOCALHOST"

// copilotHTTPHooksFile is the hooks file of prsm run's plugin when the
// server's address is known: each event POSTs to url?event=EVENT, with
// the session's hook token from $PRSM_HOOK_TOKEN (Copilot fills ${VAR}
// in a header only for the names allowedEnvVars lists).
func copilotHTTPHooksFile(url string) []byte {
	hooks := map[string]any{}
	for _, e := range copilotHookEvents {
		hooks[e] = []any{map[string]any{
			"type": "http", "url": url + "?event=" + e, "timeoutSec": copilotHookTimeout,
			"headers":        map[string]string{"Authorization": "Bearer ${" + api.HookTokenEnv + "}"},
			"allowedEnvVars": []string{api.HookTokenEnv},
		}}
	}
	return encodeCopilotHooks(hooks)
}

// copilotPluginName is the name of the plugin prsm run hands Copilot.
const copilotPluginName = "prsm"

// writeCopilotPlugin writes (or leaves, when it is current) the plugin
// in dir whose hooks file is hooks: a manifest (.plugin/plugin.json) and
// hooks/hooks.json.
func writeCopilotPlugin(dir string, hooks []byte) error {
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
		{filepath.Join(dir, "hooks", "hooks.json"), hooks},
	} {
		if old, err := os.ReadFile(f.path); err == nil && string(old) == string(f.data) {
			continue
		}
		if err := agent.WriteFileAtomic(f.path, f.data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
