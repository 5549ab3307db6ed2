package agent

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

	"github.com/prsm-dev/prsm/sync"
)

// ReadSettings reads the JSON object at path; a missing or empty file is
// nil, no error.
func ReadSettings(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	s, err := DecodeSettings(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not valid settings JSON (%v)", path, err)
	}
	return s, nil
}

// UninstallSettingsHooks is the uninstall of an agent whose hooks live
// in a JSON settings file prsm edits whole (EditSettings: Claude
// Code, Codex, Cursor): remove takes prsm's handlers, and nothing else,
// out and names them; title is how people write the agent's name.
func UninstallSettingsHooks(title string, remove func(map[string]any) ([]string, error)) func(io.Writer, string) error {
	return UninstallHooksWith(EditSettings, title, remove)
}

// UninstallHooksWith is UninstallSettingsHooks for a settings file that
// edit rewrites (it reports whether the file changed).
func UninstallHooksWith(edit func(string, func(map[string]any) error) (bool, error), title string,
	remove func(map[string]any) ([]string, error)) func(io.Writer, string) error {
	return func(out io.Writer, path string) error {
		var removed []string
		changed, err := edit(path, func(s map[string]any) error {
			var err error
			removed, err = remove(s)
			return err
		})
		if err != nil {
			return err
		}
		if !changed {
			fmt.Fprintf(out, "no prsm hooks in %s; nothing changed\n", path)
			return nil
		}
		fmt.Fprintf(out, "removed prsm's %s hooks from %s: %s\n", title, path, strings.Join(removed, ", "))
		return nil
	}
}

// SettingsHooksInstalled reports, for such an agent, whether the file at
// path holds a prsm handler (remove finds one); a missing file holds
// none.
func SettingsHooksInstalled(remove func(map[string]any) ([]string, error)) func(string) (bool, error) {
	return func(path string) (bool, error) {
		s, err := ReadSettings(path)
		if err != nil || s == nil {
			return false, err
		}
		removed, err := remove(s)
		return len(removed) > 0, err
	}
}

// HooksOf returns the "hooks" object of the settings, creating it when
// create is set; a "hooks" that is not an object is refused.
func HooksOf(s map[string]any, create bool) (map[string]any, error) {
	v, ok := s["hooks"]
	if !ok || v == nil {
		if !create {
			return nil, nil
		}
		h := map[string]any{}
		s["hooks"] = h
		return h, nil
	}
	h, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New(`"hooks" is not a JSON object`)
	}
	return h, nil
}

// RemovePrsmHooks drops the handlers ours recognises from every event of a
// settings object shaped {hooks: {Event: [{matcher, hooks: [handler]}]}}
// (Claude Code's, Codex's and Gemini CLI's), and the groups and events
// they leave empty; it returns the events it changed, in order's order.
// Anything else, including groups it does not understand, stays as it is.
func RemovePrsmHooks(s map[string]any, ours func(any) bool, order []string) ([]string, error) {
	hooks, err := HooksOf(s, false)
	if err != nil || hooks == nil {
		return nil, err
	}
	var changed []string
	for event, v := range hooks {
		groups, ok := v.([]any)
		if !ok {
			continue
		}
		var keep []any
		removed := false
		for _, g := range groups {
			gm, ok := g.(map[string]any)
			handlers, ok2 := gm["hooks"].([]any)
			if !ok || !ok2 {
				keep = append(keep, g)
				continue
			}
			var left []any
			for _, h := range handlers {
				if ours(h) {
					removed = true
				} else {
					left = append(left, h)
				}
			}
			if len(left) == len(handlers) {
				keep = append(keep, g)
			} else if len(left) > 0 {
				gm["hooks"] = left
				keep = append(keep, gm)
			}
		}
		if !removed {
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
	SortLike(changed, order)
	return changed, nil
}

// SortLike orders names as they come in order; others go last.
func SortLike(names, order []string) {
	rank := func(n string) int {
		for i, o := range order {
			if o == n {
				return i
			}
		}
		return len(order)
	}
	for i := 1; i < len(names); i++ {
		for j := i; j > 0 && rank(names[j]) < rank(names[j-1]); j-- {
			names[j], names[j-1] = names[j-1], names[j]
		}
	}
}

// EditSettings applies edit to the settings file at path and writes
// it back atomically if that changed anything. A missing file is an empty
// one; a file that is not a JSON object is refused and left alone.
func EditSettings(path string, edit func(map[string]any) error) (bool, error) {
	// Dotfile managers often link settings.json: edit the file the link
	// points to rather than replacing the link.
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return false, fmt.Errorf("resolve %s: %w", path, err)
		}
		path = real
	}
	settings := map[string]any{}
	mode := fs.FileMode(0o600)
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
		if len(bytes.TrimSpace(data)) > 0 {
			if settings, err = DecodeSettings(data); err != nil {
				return false, fmt.Errorf("%s is not valid settings JSON (%v); fix it or move it away, nothing was changed", path, err)
			}
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	before, err := json.Marshal(settings)
	if err != nil {
		return false, err
	}
	if err := edit(settings); err != nil {
		return false, fmt.Errorf("%s: %v; nothing was changed", path, err)
	}
	after, err := json.Marshal(settings)
	if err != nil {
		return false, err
	}
	if bytes.Equal(before, after) {
		return false, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(settings); err != nil {
		return false, err
	}
	if err := WriteFileAtomic(path, buf.Bytes(), mode); err != nil {
		return false, err
	}
	return true, nil
}

// DecodeSettings decodes one JSON object, numbers kept as written.
func DecodeSettings(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data[dec.InputOffset():])) > 0 {
		return nil, errors.New("data after the JSON object")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	return m, nil
}

// WriteFileAtomic replaces path with data as sync.WriteFileFrom does (a
// reader sees the old file or the new one, never a mix). New directories
// are private to the user.
func WriteFileAtomic(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return sync.WriteFileFrom(path, mode, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}
