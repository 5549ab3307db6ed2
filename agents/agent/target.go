package agent

import (
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm/internal/safepath"
)

// Target is the session an event belongs to and where its server is.
type Target struct {
	SessionID  string
	ProjectDir string // PRSM_HOME/projects/<identity>
	Worktree   string // the session's worktree, when found from cwd
	Workspace  string // the workspace root, when known from the environment
}

// SessionIn reads the session out of a path under
// projectDir/worktrees/<session-id>/ (compared as SessionOfPath does):
// how the server, whose project dir is projectDir, finds an event's
// session.
func SessionIn(projectDir, dir string) *Target {
	if dir == "" || projectDir == "" {
		return nil
	}
	dir = safepath.Real(dir)
	roots := []string{projectDir}
	if r := safepath.Real(projectDir); r != projectDir {
		roots = append(roots, r)
	}
	for _, root := range roots {
		rel, err := filepath.Rel(filepath.Join(root, "worktrees"), dir)
		if err != nil || !filepath.IsLocal(rel) {
			continue
		}
		sid := strings.Split(rel, string(filepath.Separator))[0]
		if sid == "." {
			return nil // the worktrees directory itself
		}
		return &Target{SessionID: sid, ProjectDir: projectDir, Worktree: filepath.Join(projectDir, "worktrees", sid)}
	}
	return nil
}

// SessionOfPath reads the session out of a path under
// PRSM_HOME/projects/<identity>/worktrees/<session-id>/. Both paths are
// compared with their symlinks resolved, by filepath.Rel.
func SessionOfPath(home, dir string) *Target {
	dir = safepath.Real(dir)
	roots := []string{home}
	if r := safepath.Real(home); r != home {
		roots = append(roots, r)
	}
	for _, root := range roots {
		projects := filepath.Join(root, "projects")
		rel, err := filepath.Rel(projects, dir)
		if err != nil || !filepath.IsLocal(rel) {
			continue
		}
		parts := strings.Split(rel, string(filepath.Separator))
		if len(parts) < 3 || parts[1] != "worktrees" {
			continue
		}
		projectDir := filepath.Join(projects, parts[0])
		return &Target{SessionID: parts[2], ProjectDir: projectDir, Worktree: filepath.Join(projectDir, "worktrees", parts[2])}
	}
	return nil
}
