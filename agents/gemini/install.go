package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm/agents/agent"
)

// geminiToolMatcher is the matcher of prsm's BeforeTool and AfterTool
// handlers: Gemini CLI's file-changing tools. Gemini reads a matcher as an
// unanchored regular expression on the tool name, hence the anchors.
const geminiToolMatcher = "^(write_file|replace|run_shell_command)$"

// geminiHookEvents are the events prsm installs a handler for, in order,
// with their matchers ("" for events that take none).
var geminiHookEvents = []struct{ event, matcher string }{
	{"BeforeTool", geminiToolMatcher},
	{"AfterTool", geminiToolMatcher},
	{"BeforeAgent", ""},
	{"AfterAgent", ""},
	{"SessionEnd", ""},
}

// geminiHookTimeout is the handler timeout in milliseconds (Gemini's
// unit); `prsm hook gemini` gives up well before it.
const geminiHookTimeout = 10000

// geminiHookName names prsm's handlers. Gemini CLI runs a handler that
// several settings files hold (user and project) once, by name and
// command, and `hooksConfig.disabled` lists handlers by name.
const geminiHookName = "prsm"

// installer is the agent's entry in `prsm hooks`.
func installer() *agent.Installer {
	return &agent.Installer{
		Help: `For gemini, --user (the default) edits ~/.gemini/settings.json
($GEMINI_CLI_HOME/.gemini/settings.json when that is set); --project edits
<workspace>/.gemini/settings.json, whose hooks Gemini CLI runs only in a
trusted folder, after a warning. Gemini's settings may hold comments; prsm
does not rewrite such a file (it would lose them) and prints what to add.`,
		Path:      geminiSettingsPath,
		Install:   installGeminiHooks,
		Uninstall: uninstallGeminiHooks,
		Installed: geminiHooksInstalled,
	}
}

// geminiSettingsPath is the settings file to edit: the workspace's when
// root is set, else the user's, where Gemini CLI looks for it.
func geminiSettingsPath(root string) (string, error) {
	if root != "" {
		return filepath.Join(root, ".gemini", "settings.json"), nil
	}
	if d := os.Getenv("GEMINI_CLI_HOME"); d != "" {
		return filepath.Join(d, ".gemini", "settings.json"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("cannot find the home directory for ~/.gemini; use --project")
	}
	return filepath.Join(home, ".gemini", "settings.json"), nil
}

func geminiEventNames() []string {
	var names []string
	for _, e := range geminiHookEvents {
		names = append(names, e.event)
	}
	return names
}

// installGeminiHooks merges prsm's handlers into Gemini CLI's settings.
func installGeminiHooks(out io.Writer, path string, argv []string, project bool) error {
	command := agent.ShellJoin(argv)
	changed, s, err := editGeminiSettings(path, func(s map[string]any) error {
		if _, err := removeGeminiHooks(s); err != nil {
			return err
		}
		return addGeminiHooks(s, command)
	})
	if err != nil {
		return err
	}
	if !changed {
		fmt.Fprintf(out, "prsm's Gemini CLI hooks are already in %s; nothing changed\n", path)
	} else {
		fmt.Fprintf(out, "installed prsm's Gemini CLI hooks in %s: %s\n", path, strings.Join(geminiEventNames(), ", "))
		fmt.Fprintf(out, "  command: %s\n", command)
	}
	if project {
		fmt.Fprintln(out, "  note: Gemini CLI runs project hooks only in a trusted folder; --user also covers untrusted ones")
	}
	for _, w := range geminiHooksOff(s) {
		fmt.Fprintf(out, "  warning: %s\n", w)
	}
	return nil
}

// uninstallGeminiHooks takes prsm's handlers out of Gemini CLI's settings.
var uninstallGeminiHooks = agent.UninstallHooksWith(func(path string, edit func(map[string]any) error) (bool, error) {
	changed, _, err := editGeminiSettings(path, edit)
	return changed, err
}, "Gemini CLI", removeGeminiHooks)

// geminiHooksInstalled reports whether Gemini CLI's settings at path hold
// a prsm handler; a missing file holds none.
func geminiHooksInstalled(path string) (bool, error) {
	s, _, err := readGeminiSettings(path)
	if err != nil || s == nil {
		return false, err
	}
	removed, err := removeGeminiHooks(s)
	return len(removed) > 0, err
}

// geminiHooksOff says what in the settings keeps Gemini CLI from running
// prsm's hooks: the hooks switch turned off, or prsm's handlers disabled
// by name.
func geminiHooksOff(s map[string]any) []string {
	var out []string
	hc, _ := s["hooksConfig"].(map[string]any)
	if hc == nil {
		return nil
	}
	if on, ok := hc["enabled"].(bool); ok && !on {
		out = append(out, `"hooksConfig": {"enabled": false} keeps Gemini CLI from running any hook; set it to true`)
	}
	if list, ok := hc["disabled"].([]any); ok {
		for _, v := range list {
			if n, _ := v.(string); n == geminiHookName || strings.HasSuffix(strings.TrimSpace(n), " hook gemini") {
				out = append(out, fmt.Sprintf(`"hooksConfig": {"disabled": [%q]} keeps Gemini CLI from running prsm's hooks; take it out`, n))
			}
		}
	}
	return out
}

// isPrsmGeminiHandler recognises a handler prsm installed for Gemini CLI.
var isPrsmGeminiHandler = agent.IsPrsmHandlerOf("gemini")

// removeGeminiHooks drops prsm's handlers (agent.RemovePrsmHooks); the hooks
// object's own "enabled"/"disabled" keys stay as they are.
func removeGeminiHooks(s map[string]any) ([]string, error) {
	return agent.RemovePrsmHooks(s, isPrsmGeminiHandler, geminiEventNames())
}

// addGeminiHooks appends prsm's group to each of its events.
func addGeminiHooks(s map[string]any, command string) error {
	hooks, err := agent.HooksOf(s, true)
	if err != nil {
		return err
	}
	for _, e := range geminiHookEvents {
		var groups []any
		if v, ok := hooks[e.event]; ok && v != nil {
			if groups, ok = v.([]any); !ok {
				return fmt.Errorf("hooks.%s is not a JSON array", e.event)
			}
		}
		group := map[string]any{"hooks": []any{map[string]any{
			"type": "command", "name": geminiHookName, "command": command,
			"timeout": json.Number(fmt.Sprint(geminiHookTimeout)),
		}}}
		if e.matcher != "" {
			group["matcher"] = e.matcher
		}
		hooks[e.event] = append(groups, group)
	}
	return nil
}

// readGeminiSettings reads the settings at path as Gemini CLI does: JSON
// with // and /* */ comments. A missing or empty file is nil, no error;
// commented reports whether the file has comments.
func readGeminiSettings(path string) (s map[string]any, commented bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) || err == nil && len(bytes.TrimSpace(data)) == 0 {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	plain := stripJSONComments(data)
	if s, err = agent.DecodeSettings(plain); err != nil {
		return nil, false, fmt.Errorf("%s is not valid settings JSON (%v)", path, err)
	}
	return s, !bytes.Equal(plain, data), nil
}

// editGeminiSettings applies edit to the settings at path and writes them
// back if that changed anything; it returns the settings after the edit.
// A file with comments is not rewritten, as the comments would be lost:
// the error says what to put in by hand.
func editGeminiSettings(path string, edit func(map[string]any) error) (bool, map[string]any, error) {
	s, commented, err := readGeminiSettings(path)
	if err != nil {
		return false, nil, fmt.Errorf("%v; fix it or move it away, nothing was changed", err)
	}
	if !commented {
		var after map[string]any
		changed, err := agent.EditSettings(path, func(m map[string]any) error {
			err := edit(m)
			after = m
			return err
		})
		return changed, after, err
	}
	before, err := json.Marshal(s)
	if err != nil {
		return false, nil, err
	}
	if err := edit(s); err != nil {
		return false, nil, fmt.Errorf("%s: %v; nothing was changed", path, err)
	}
	after, err := json.Marshal(s)
	if err != nil {
		return false, nil, err
	}
	if bytes.Equal(before, after) {
		return false, s, nil
	}
	hooks, _ := json.MarshalIndent(map[string]any{"hooks": s["hooks"]}, "", "  ")
	return false, nil, fmt.Errorf("%s has comments, which prsm would lose by rewriting it; nothing was changed. Make its \"hooks\" this by hand:\n%s", path, hooks)
}

// stripJSONComments blanks out // and /* */ comments outside strings,
// keeping every other byte (and the line breaks) where it was, as
// Gemini CLI's strip-json-comments does.
func stripJSONComments(data []byte) []byte {
	out := make([]byte, len(data))
	copy(out, data)
	inString := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			out[i], out[i+1] = ' ', ' '
			for i += 2; i < len(out); i++ {
				if out[i] == '*' && i+1 < len(out) && out[i+1] == '/' {
					out[i], out[i+1] = ' ', ' '
					i++
					break
				}
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
		}
	}
	return out
}
