package tracker

import (
	"os"
	"path/filepath"
)

// An agent can build a git directory in its worktree under any name (a
// copy of the workspace's .git, with a config that runs commands). Synced
// into the workspace, it would be one there too: git takes a directory
// that holds HEAD and objects/ and refs/ (or a commondir file) for a
// repository when it runs in it. Its files are never recorded; the
// engine reports it.

// maxRefused bounds the git directories a session remembers reporting.
const maxRefused = 1000

// refuse notes that the files at or under rel are not recorded, for
// TakeRefused to report once per session.
func (s *Session) refuse(rel string) {
	if s.refused[rel] {
		return
	}
	if s.refused == nil {
		s.refused = map[string]bool{}
	}
	if len(s.refused) >= maxRefused {
		return
	}
	s.refused[rel] = true
	s.refusedNew = append(s.refusedNew, rel)
}

// TakeRefused returns, once each, the directories whose files Filter (or
// Dirty) left unrecorded since the last call because git would take them
// for a git directory: ones the agent built (gitDirOf) and paths through a
// .git segment, at any depth but the top. Slash separated, relative.
func (s *Session) TakeRefused() []string {
	r := s.refusedNew
	s.refusedNew = nil
	return r
}

// gitDirOf returns the topmost directory above rel, the worktree's top
// excluded, that git would take for a git directory (gitShaped) and whose
// HEAD the base commit does not hold (a repository's own test fixture
// stays recorded); "" when there is none. seen keeps the answers of one
// look, so each directory costs one lstat or so.
func (s *Session) gitDirOf(rel string, seen map[string]bool) string {
	for i := 0; i < len(rel); i++ {
		if rel[i] != '/' {
			continue
		}
		d := rel[:i]
		shaped, ok := seen[d]
		if !ok {
			shaped = gitShaped(filepath.Join(s.Worktree, filepath.FromSlash(d))) && !s.inBase(d+"/HEAD")
			seen[d] = shaped
		}
		if shaped {
			return d
		}
	}
	return ""
}

// gitShaped reports whether git would take dir for a git directory: it
// holds HEAD, and a commondir file (a worktree's entry) or objects and
// refs. Git checks more (HEAD's content); this much is enough to tell a
// git directory from a project's own files.
func gitShaped(dir string) bool {
	if fi, err := os.Lstat(filepath.Join(dir, "HEAD")); err != nil || fi.IsDir() {
		return false
	}
	if fi, err := os.Lstat(filepath.Join(dir, "commondir")); err == nil && !fi.IsDir() {
		return true
	}
	for _, n := range []string{"objects", "refs"} {
		if _, err := os.Lstat(filepath.Join(dir, n)); err != nil {
			return false
		}
	}
	return true
}
