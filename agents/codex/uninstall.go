package codex

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents/agent"
)

// codexInstalled is what `prsm hooks install codex` found before it
// changed anything, kept under PRSM_HOME (agents/codex-installs.json, by
// the hooks file's path) so that uninstall puts back exactly that: the
// hooks file's bytes (nil: there was none), and Codex's config.toml,
// where the trust of prsm's hooks goes (nil: there was none).
type codexInstalled struct {
	HooksBefore  *string `json:"hooks_before"`
	ConfigPath   string  `json:"config_path,omitempty"`
	ConfigBefore *string `json:"config_before"`
}

// codexInstallsFile is where the installs' states are kept.
func codexInstallsFile() (string, error) {
	home, err := prsm.Home()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "agents", "codex-installs.json"), nil
}

func readCodexInstalls() map[string]codexInstalled {
	all := map[string]codexInstalled{}
	if f, err := codexInstallsFile(); err == nil {
		if b, err := os.ReadFile(f); err == nil {
			json.Unmarshal(b, &all)
		}
	}
	return all
}

// setCodexInstalled stores (or, for nil, forgets) the state of the
// install of the hooks file at path.
func setCodexInstalled(path string, st *codexInstalled) error {
	f, err := codexInstallsFile()
	if err != nil {
		return err
	}
	all := readCodexInstalls()
	if st == nil {
		if _, ok := all[path]; !ok {
			return nil
		}
		delete(all, path)
	} else {
		all[path] = *st
	}
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
		return err
	}
	return agent.WriteFileAtomic(f, b, 0o600)
}

// fileText is a file's content; nil when it does not exist.
func fileText(path string) (*string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s := string(b)
	return &s, nil
}

// noteCodexInstall keeps what the hooks file at path and, for the user's
// file, config.toml hold before the first install changes them; a later
// install keeps the first one's state.
func noteCodexInstall(path string, project bool) error {
	if _, ok := readCodexInstalls()[path]; ok {
		return nil
	}
	var st codexInstalled
	var err error
	if st.HooksBefore, err = fileText(path); err != nil {
		return err
	}
	if !project {
		st.ConfigPath = filepath.Join(filepath.Dir(path), "config.toml")
		if st.ConfigBefore, err = fileText(st.ConfigPath); err != nil {
			return err
		}
	}
	return setCodexInstalled(path, &st)
}

// uninstallCodexHooks takes prsm's hooks out of the hooks file at path,
// and their trust out of Codex's config.toml; where nothing else changed
// since the install, both files are put back byte for byte as they were
// (or removed, when the install made them).
func uninstallCodexHooks(out io.Writer, path string) error {
	keys, err := prsmCodexHookKeys(path)
	if err != nil {
		return err
	}
	if err := agent.UninstallSettingsHooks("Codex", removeCodexHooks)(out, path); err != nil {
		return err
	}
	st, known := readCodexInstalls()[path]
	config := st.ConfigPath
	if config == "" {
		if home, err := codexHome(); err == nil && filepath.Clean(filepath.Dir(path)) == filepath.Clean(home) {
			config = filepath.Join(home, "config.toml")
		}
	}
	if config != "" && len(keys) > 0 {
		n, err := untrustCodexHooks(config, path, keys, known && st.ConfigBefore == nil, st.ConfigBefore)
		if err != nil {
			return err
		}
		if n > 0 {
			fmt.Fprintf(out, "removed the trust of prsm's %d Codex hooks from %s\n", n, config)
		}
	}
	if known {
		if err := restoreCodexHooksFile(path, st.HooksBefore); err != nil {
			return err
		}
	}
	return setCodexInstalled(path, nil)
}

// prsmCodexHookKeys are the ends of the hooks.state keys Codex gives
// prsm's handlers in the hooks file at path: "event:group:handler", the
// event in snake case (pre_tool_use:0:0).
func prsmCodexHookKeys(path string) (map[string]bool, error) {
	s, err := agent.ReadSettings(path)
	if err != nil || s == nil {
		return nil, err
	}
	hooks, err := agent.HooksOf(s, false)
	if err != nil || hooks == nil {
		return nil, err
	}
	keys := map[string]bool{}
	for event, v := range hooks {
		groups, _ := v.([]any)
		for g, group := range groups {
			gm, _ := group.(map[string]any)
			handlers, _ := gm["hooks"].([]any)
			for i, h := range handlers {
				if isPrsmCodexHandler(h) {
					keys[fmt.Sprintf("%s:%d:%d", codexSnake(event), g, i)] = true
				}
			}
		}
	}
	return keys, nil
}

// codexSnake is an event's name as Codex's trust keys write it.
func codexSnake(event string) string {
	var b strings.Builder
	for i, r := range event {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// untrustCodexHooks removes from config.toml the [hooks.state."KEY"]
// tables Codex wrote for prsm's handlers in the hooks file at hooksPath
// (keys), each with the blank line Codex put before it, and then a
// [hooks.state] table left empty; the rest of the file stays byte for
// byte. A file left empty is removed when created says the install
// made it; before is the file as the install found it, when known. It
// returns how many tables it removed.
func untrustCodexHooks(config, hooksPath string, keys map[string]bool, created bool, before *string) (int, error) {
	b, err := os.ReadFile(config)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	lines := strings.SplitAfter(string(b), "\n")
	isHeader := func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "[") }
	// drop removes lines[i:j] and the blank line before them.
	drop := func(i, j int) {
		if i > 0 && strings.TrimSpace(lines[i-1]) == "" {
			i--
		}
		lines = append(lines[:i], lines[j:]...)
	}
	tableEnd := func(i int) int {
		j := i + 1
		for j < len(lines) && !isHeader(lines[j]) {
			j++
		}
		// Blank lines before the next table are its own.
		for j > i+1 && j < len(lines) && strings.TrimSpace(lines[j-1]) == "" {
			j--
		}
		return j
	}
	removed := 0
	for i := 0; i < len(lines); {
		if key, ok := codexStateKey(lines[i]); ok && ours(key, hooksPath, keys) {
			drop(i, tableEnd(i))
			removed++
			i = 0 // indexes moved: look again from the top
			continue
		}
		i++
	}
	if removed == 0 {
		return 0, nil
	}
	text := strings.Join(lines, "")
	// An empty [hooks.state] goes too, unless it was there before the
	// install (when known; else while other trust entries stay).
	hadState := before != nil && hasLine(*before, "[hooks.state]")
	if !hadState && (before != nil || created || !strings.Contains(text, "[hooks.state.")) {
		for i, l := range lines {
			if strings.TrimSpace(l) != "[hooks.state]" {
				continue
			}
			if j := tableEnd(i); onlyBlank(lines[i+1 : j]) {
				drop(i, j)
			}
			break
		}
		text = strings.Join(lines, "")
	}
	if created && strings.TrimSpace(text) == "" {
		return removed, os.Remove(config)
	}
	mode := fs.FileMode(0o600)
	if fi, err := os.Stat(config); err == nil {
		mode = fi.Mode().Perm()
	}
	return removed, agent.WriteFileAtomic(config, []byte(text), mode)
}

// hasLine reports whether text has line, spaces aside.
func hasLine(text, line string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}

func onlyBlank(lines []string) bool {
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			return false
		}
	}
	return true
}

// codexStateKey is the key of a [hooks.state."KEY"] table header.
func codexStateKey(line string) (string, bool) {
	l := strings.TrimSpace(line)
	rest, ok := strings.CutPrefix(l, "[hooks.state.")
	if !ok || !strings.HasSuffix(rest, "]") {
		return "", false
	}
	rest = strings.TrimSuffix(rest, "]")
	if strings.HasPrefix(rest, "'") && strings.HasSuffix(rest, "'") && len(rest) >= 2 {
		return rest[1 : len(rest)-1], true
	}
	key, err := strconv.Unquote(rest)
	return key, err == nil
}

// ours reports whether a trust key (PATH:event:group:handler) is one of
// prsm's handlers in the hooks file at hooksPath.
func ours(key, hooksPath string, keys map[string]bool) bool {
	parts := strings.Split(key, ":")
	if len(parts) < 4 {
		return false
	}
	n := len(parts)
	if !keys[strings.Join(parts[n-3:], ":")] {
		return false
	}
	p := strings.Join(parts[:n-3], ":")
	return filepath.Clean(p) == filepath.Clean(hooksPath) || codexSameFile(p, hooksPath)
}

// restoreCodexHooksFile puts the hooks file back as the install found it
// (before: nil when there was none), when what is left in it now is what
// was there: byte for byte, or removed.
func restoreCodexHooksFile(path string, before *string) error {
	now, err := agent.ReadSettings(path)
	if err != nil {
		return err
	}
	var was map[string]any
	if before != nil && len(bytes.TrimSpace([]byte(*before))) > 0 {
		if was, err = agent.DecodeSettings([]byte(*before)); err != nil {
			return nil // it was not ours to read; leave it
		}
	}
	a, _ := json.Marshal(orEmpty(now))
	b, _ := json.Marshal(orEmpty(was))
	if !bytes.Equal(a, b) {
		return nil // changed since the install: kept as it is
	}
	if before == nil {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	mode := fs.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	return agent.WriteFileAtomic(path, []byte(*before), mode)
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
