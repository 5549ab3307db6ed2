package engine

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/internal/safepath"
	"github.com/prsm-dev/prsm/tracker"
)

// argPath finds the file a tool's arguments name and makes it relative to
// the worktree. Paths outside the worktree (and the workspace, which agents
// sometimes name instead) are ignored with a warning: they are never read.
func (cr *capturer) argPath(s *prsm.Session, args json.RawMessage, cwd string) string {
	p := namedPath(args)
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		base := s.WorktreePath
		if cwd != "" && filepath.IsAbs(cwd) {
			if _, err := safepath.Rel(s.WorktreePath, cwd); err == nil || filepath.Clean(cwd) == s.WorktreePath {
				base = cwd
			}
		}
		p = filepath.Join(base, p)
	}
	for _, root := range []string{s.WorktreePath, cr.Repo.Root} {
		if rel, err := safepath.Rel(root, p); err == nil {
			return rel
		}
	}
	cr.Log.Warn("tool argument path outside the session's worktree ignored", "session", s.ID, "path", p)
	return ""
}

// namedPath is the file a tool's arguments name, as written (the first of
// the fields agents use for it); "" when they name none.
func namedPath(args json.RawMessage) string {
	if len(args) == 0 {
		return ""
	}
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return ""
	}
	for _, k := range []string{"file_path", "notebook_path", "path", "target_file", "filename", "file"} {
		if v, ok := m[k].(string); ok && v != "" {
			return v
		}
	}
	return ""
}

// shellDir is where a shell command of the session runs: cwd when it lies
// in the worktree, else the worktree's root.
func shellDir(s *prsm.Session, cwd string) string {
	if cwd != "" && filepath.IsAbs(cwd) {
		if _, err := safepath.Rel(s.WorktreePath, cwd); err == nil {
			return cwd
		}
	}
	return s.WorktreePath
}

// maxBashTargets bounds the paths one shell command adds to a capture.
const maxBashTargets = 1000

// bashPaths are the worktree files a Bash call's command names as targets
// (sed -i, redirects, mv, rm, ...), found by a real shell parser. They are
// only candidates: the watcher and the scan after the call decide what
// changed. Paths outside the worktree are dropped, never read.
func (cr *capturer) bashPaths(s *prsm.Session, args json.RawMessage, cwd string) []string {
	var m struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(args, &m) != nil || m.Command == "" {
		return nil
	}
	var out []string
	for _, p := range tracker.BashTargets(m.Command, shellDir(s, cwd)) {
		if len(out) == maxBashTargets {
			break
		}
		for _, root := range []string{s.WorktreePath, cr.Repo.Root} {
			if rel, err := safepath.Rel(root, p); err == nil {
				out = append(out, rel)
				break
			}
		}
	}
	return out
}

// patchPaths are the worktree files a patch in Codex's apply_patch format
// (the tool's input is the patch itself, in "command") names, made
// relative to the worktree as argPath does. Like bashPaths, they are only
// candidates for the pre-tool capture; what changed is found at complete.
// Paths outside the worktree are dropped, never read.
func (cr *capturer) patchPaths(s *prsm.Session, args json.RawMessage, cwd string) []string {
	var m struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(args, &m) != nil {
		return nil
	}
	var out []string
	for _, p := range tracker.PatchFiles(m.Command) {
		if len(out) == maxBashTargets {
			break
		}
		b, err := json.Marshal(map[string]string{"path": p})
		if err != nil {
			continue
		}
		if rel := cr.argPath(s, b, cwd); rel != "" {
			out = append(out, rel)
		}
	}
	return out
}

// patchCall reads a tool call that applies a patch in Codex's format,
// which names its files in its text: apply_patch (an edit-class tool with
// the patch as its "command" and no path argument), or a Bash command
// that is, as a whole, such a patch (Codex applies it itself, and sends
// no PostToolUse for it). files are the worktree files the patch names
// (added, updated, deleted, moved to), relative to the worktree; a path
// outside it is dropped, never read. ok is false for any other call.
func (cr *capturer) patchCall(s *prsm.Session, name string, args json.RawMessage, cwd string) (files []string, ok bool) {
	var m struct {
		Command *string `json:"command"`
	}
	if json.Unmarshal(args, &m) != nil || m.Command == nil {
		return nil, false
	}
	switch {
	case name == "Bash":
		abs, ok := tracker.ShellPatch(*m.Command, shellDir(s, cwd))
		if !ok {
			return nil, false
		}
		for _, p := range abs {
			if len(files) == maxBashTargets {
				break
			}
			if rel := cr.inWorktree(s, p); rel != "" {
				files = append(files, rel)
			}
		}
		return files, true
	case tracker.ChangesNamedFileOnly(name) && namedPath(args) == "":
		return cr.patchPaths(s, args, cwd), true
	}
	return nil, false
}

// inWorktree is absolute path p relative to the session's worktree (or
// the workspace, which agents sometimes name instead); "" outside both.
func (cr *capturer) inWorktree(s *prsm.Session, p string) string {
	for _, root := range []string{s.WorktreePath, cr.Repo.Root} {
		if rel, err := safepath.Rel(root, p); err == nil {
			return rel
		}
	}
	cr.Log.Warn("patch path outside the session's worktree ignored", "session", s.ID, "path", p)
	return ""
}

// toolTarget names what a tool call works on, for checkpoint descriptions:
// a Bash command, the files of an apply_patch, or the file.
func toolTarget(args json.RawMessage, rel string) string {
	var m map[string]any
	if json.Unmarshal(args, &m) == nil {
		if c, ok := m["command"].(string); ok && c != "" {
			// A patch is named by its files, not its text.
			if files := tracker.PatchFiles(c); len(files) > 0 {
				return strings.Join(files, ", ")
			}
			return c
		}
	}
	return rel
}
