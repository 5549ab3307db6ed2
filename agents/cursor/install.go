package cursor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm/agents/agent"
)

// Cursor reads hooks from <project>/.cursor/hooks.json and
// ~/.cursor/hooks.json, both at once: {"version": 1, "hooks": {event:
// [{"command": ...}]}}. `prsm hooks install cursor` merges prsm's entries
// into one of them and keeps everything else.

// installer is the agent's entry in `prsm hooks`.
func installer() *agent.Installer {
	return &agent.Installer{
		Help: `For cursor, --user (the default) edits ~/.cursor/hooks.json; --project
edits <workspace>/.cursor/hooks.json. Cursor runs the hooks of both.`,
		Path:      cursorHooksPath,
		Install:   installCursorHooks,
		Uninstall: agent.UninstallSettingsHooks("Cursor", removeCursorHooks),
		Installed: agent.SettingsHooksInstalled(removeCursorHooks),
	}
}

// cursorHookEvents are the events prsm installs a hook for, in order.
var cursorHookEvents = []string{"beforeSubmitPrompt", "beforeShellExecution", "afterShellExecution", "afterFileEdit", "stop"}

// cursorHooksPath is the hooks.json to edit.
func cursorHooksPath(root string) (string, error) {
	if root != "" {
		return filepath.Join(root, ".cursor", "hooks.json"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("cannot find the home directory for ~/.cursor; use --project")
	}
	return filepath.Join(home, ".cursor", "hooks.json"), nil
}

// removeCursorHooks drops prsm's entries from every event, and the events
// they leave empty; it returns the events it changed.
func removeCursorHooks(s map[string]any) ([]string, error) {
	hooks, err := agent.HooksOf(s, false)
	if err != nil || hooks == nil {
		return nil, err
	}
	var changed []string
	for event, v := range hooks {
		entries, ok := v.([]any)
		if !ok {
			continue
		}
		var keep []any
		for _, e := range entries {
			m, _ := e.(map[string]any)
			if cmd, ok := m["command"].(string); ok && agent.IsPrsmHookCommand(cmd, "cursor") {
				continue
			}
			keep = append(keep, e)
		}
		if len(keep) == len(entries) {
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
	agent.SortLike(changed, cursorHookEvents)
	return changed, nil
}

// addCursorHooks appends prsm's entry to each of its events.
func addCursorHooks(s map[string]any, command string) error {
	if _, ok := s["version"]; !ok {
		s["version"] = json.Number("1")
	}
	hooks, err := agent.HooksOf(s, true)
	if err != nil {
		return err
	}
	for _, e := range cursorHookEvents {
		var entries []any
		if v, ok := hooks[e]; ok && v != nil {
			if entries, ok = v.([]any); !ok {
				return fmt.Errorf("hooks.%s is not a JSON array", e)
			}
		}
		hooks[e] = append(entries, map[string]any{"command": command})
	}
	return nil
}

// installCursorHooks merges prsm's entries into Cursor's hooks.json.
func installCursorHooks(out io.Writer, path string, argv []string, _ bool) error {
	command := agent.ShellJoin(argv)
	changed, err := agent.EditSettings(path, func(s map[string]any) error {
		if _, err := removeCursorHooks(s); err != nil {
			return err
		}
		return addCursorHooks(s, command)
	})
	if err != nil {
		return err
	}
	if !changed {
		fmt.Fprintf(out, "prsm's Cursor hooks are already in %s; nothing changed\n", path)
		return nil
	}
	fmt.Fprintf(out, "installed prsm's Cursor hooks in %s: %s\n", path, strings.Join(cursorHookEvents, ", "))
	fmt.Fprintf(out, "  command: %s\n", command)
	return nil
}
