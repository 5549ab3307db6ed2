package worktree

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"github.com/prsm-dev/prsm/internal/osproc"
)

// Find is Discover without a git process, for the plain layout only: dir
// or a parent of it holds a .git directory of this user's, with nothing
// in its config that could move the working tree (core.worktree,
// core.bare, an include) and nothing in the environment that changes
// git's search. For anything else (a .git file, which a linked worktree
// or a submodule has; a bare repository on the way up; a file system
// boundary; GIT_CEILING_DIRECTORIES; Windows) ok is false: ask Discover.
// Every CLI command starts by finding its workspace, and a git process
// is a third of a short command's time.
func Find(git *Runner, dir string) (r *Repo, ok bool) {
	if git == nil {
		git = DefaultRunner
	}
	if os.Getenv("GIT_CEILING_DIRECTORIES") != "" || os.Getenv("GIT_DISCOVERY_ACROSS_FILESYSTEM") != "" {
		return nil, false
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, false
	}
	d, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, false
	}
	fi, err := os.Stat(d)
	if err != nil {
		return nil, false
	}
	_, dev, ok := osproc.Mine(fi)
	if !ok {
		return nil, false
	}
	for {
		if filepath.Base(d) == ".git" || isGitDir(d) {
			return nil, false // inside a git directory, or a bare repository
		}
		gd := filepath.Join(d, ".git")
		fi, err := os.Lstat(gd)
		switch {
		case err == nil:
			if !fi.IsDir() || !isGitDir(gd) || !plainConfig(gd) {
				return nil, false
			}
			if mine, _, _ := osproc.Mine(fi); !mine {
				return nil, false // git's safe.directory check: leave it to git
			}
			return &Repo{Root: d, GitDir: gd, CommonDir: gd, Identity: Identity(filepath.Base(d), gd), git: git}, true
		case !errors.Is(err, fs.ErrNotExist):
			return nil, false
		}
		parent := filepath.Dir(d)
		if parent == d {
			return nil, false
		}
		pfi, err := os.Stat(parent)
		if err != nil {
			return nil, false
		}
		if _, pdev, _ := osproc.Mine(pfi); pdev != dev {
			return nil, false // git stops at a file system's boundary
		}
		d = parent
	}
}

// isGitDir reports whether d looks like a git directory to git: HEAD, and
// objects and refs directories.
func isGitDir(d string) bool {
	for name, dir := range map[string]bool{"HEAD": false, "objects": true, "refs": true} {
		fi, err := os.Lstat(filepath.Join(d, name))
		if err != nil || fi.IsDir() != dir {
			return false
		}
	}
	return true
}

// moves finds what in a config file could move the working tree or make
// the repository bare: core.worktree, core.bare = true, and an include
// (which could say either); also a worktree config, which could too.
var moves = regexp.MustCompile(`(?im)worktree|include|bare\s*=\s*(true|yes|on|1)|^\s*bare\s*$`)

// plainConfig reports whether the git directory gd has a config with
// nothing that moves (a config git cannot read is not plain either).
func plainConfig(gd string) bool {
	b, err := os.ReadFile(filepath.Join(gd, "config"))
	if err != nil {
		return false
	}
	if _, err := os.Lstat(filepath.Join(gd, "commondir")); err == nil {
		return false
	}
	return !moves.Match(b)
}
