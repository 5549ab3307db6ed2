package copilot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm/agents/agent"
)

// installer is the agent's entry in `prsm hooks`.
func installer() *agent.Installer {
	return &agent.Installer{
		Help: `For copilot, install writes prsm's own hooks file, prsm.json, into
~/.copilot/hooks/ (--user, the default) or <workspace>/.github/hooks/
(--project); Copilot loads every file there. Other hooks files are left
alone.`,
		Path:      copilotHooksPath,
		Install:   installCopilotHooks,
		Uninstall: uninstallCopilotHooks,
		Installed: copilotHooksInstalled,
	}
}

// copilotHookEvents are the events prsm's hooks file handles, in order.
var copilotHookEvents = []string{"preToolUse", "postToolUse", "postToolUseFailure", "userPromptSubmitted", "agentStop"}

// copilotHookTimeout is each hook's timeout in seconds; prsm gives up
// before it (hookTimeout).
const copilotHookTimeout = 10

// copilotHooksPath is prsm.json in the user's or the project's hooks
// directory.
func copilotHooksPath(root string) (string, error) {
	if root != "" {
		return filepath.Join(root, ".github", "hooks", "prsm.json"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("cannot find the home directory for ~/.copilot; use --project")
	}
	return filepath.Join(home, ".copilot", "hooks", "prsm.json"), nil
}

// copilotHooksFile is the content of prsm's hooks file: each event runs
// command, with the event's name in $PRSM_COPILOT_EVENT (Copilot's
// payloads do not carry it).
func copilotHooksFile(command string) []byte {
	hooks := map[string]any{}
	for _, e := range copilotHookEvents {
		hooks[e] = []any{map[string]any{
			"type": "command", "bash": command, "timeoutSec": copilotHookTimeout,
			"env": map[string]string{CopilotEventEnv: e},
		}}
	}
	return encodeCopilotHooks(hooks)
}

// encodeCopilotHooks is a hooks file holding hooks (event to handlers).
func encodeCopilotHooks(hooks map[string]any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(map[string]any{"version": 1, "hooks": hooks})
	return buf.Bytes()
}

// readCopilotHooks reads the file at path: nil when there is none; an
// error when it is not prsm's (a hook in it runs something else) or cannot
// be parsed.
func readCopilotHooks(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var f struct {
		Hooks map[string][]struct {
			Bash string `json:"bash"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s is not valid hooks JSON (%v); fix it or move it away, nothing was changed", path, err)
	}
	n := 0
	for event, hs := range f.Hooks {
		for _, h := range hs {
			if !agent.IsPrsmHookCommand(h.Bash, "copilot") {
				return nil, fmt.Errorf("%s is not prsm's hooks file (its %s hook runs %q); move it away, nothing was changed", path, event, h.Bash)
			}
			n++
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("%s is not prsm's hooks file (it has no prsm hook); move it away, nothing was changed", path)
	}
	return data, nil
}

// installCopilotHooks writes prsm's hooks file, or replaces an older one.
func installCopilotHooks(out io.Writer, path string, argv []string, _ bool) error {
	command := agent.ShellJoin(argv)
	old, err := readCopilotHooks(path)
	if err != nil {
		return err
	}
	file := copilotHooksFile(command)
	if bytes.Equal(old, file) {
		fmt.Fprintf(out, "prsm's Copilot CLI hooks are already in %s; nothing changed\n", path)
		return nil
	}
	if err := agent.WriteFileAtomic(path, file, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "installed prsm's Copilot CLI hooks in %s: %s\n", path, strings.Join(copilotHookEvents, ", "))
	fmt.Fprintf(out, "  command: %s\n", command)
	return nil
}

// uninstallCopilotHooks removes prsm's hooks file, and nothing else.
func uninstallCopilotHooks(out io.Writer, path string) error {
	old, err := readCopilotHooks(path)
	if err != nil {
		return err
	}
	if old == nil {
		fmt.Fprintf(out, "no prsm hooks in %s; nothing changed\n", path)
		return nil
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	fmt.Fprintf(out, "removed prsm's Copilot CLI hooks %s\n", path)
	return nil
}

// copilotHooksInstalled reports whether prsm's hooks file is at path.
func copilotHooksInstalled(path string) (bool, error) {
	data, err := readCopilotHooks(path)
	return data != nil, err
}
