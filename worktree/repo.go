package worktree

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	stdsync "sync"
)

// ErrNotRepo means the directory is not inside a git working tree.
var ErrNotRepo = errors.New("not a git repository")

// ErrBare means the repository has no working tree for prsm to mirror.
var ErrBare = errors.New("bare repository")

// Repo is the user's workspace: a git working tree.
type Repo struct {
	// Root is the real (symlink-free) path of the working tree's top level.
	Root string
	// GitDir is the real path of this working tree's git directory.
	GitDir string
	// CommonDir is the real path of the repository's common git directory
	// (shared by all its worktrees: objects, refs, worktrees/).
	CommonDir string
	// Identity names the workspace under PRSM_HOME/projects: readable and
	// stable for any path that reaches the same working tree.
	Identity string

	git *Runner

	objOnce stdsync.Once
	obj     *Objects
	objErr  error

	conv convState // checkout conversions (CheckoutContent)

	// linked keeps, by path, the session worktrees Linked found;
	// entryOK those whose entry RepairDotGit found naming them back.
	linkedMu stdsync.Mutex
	linked   map[string]Linked
	entryOK  map[string]bool
}

// Git returns the runner this repository uses.
func (r *Repo) Git() *Runner { return r.git }

// Discover finds the working tree that contains dir.
func Discover(ctx context.Context, git *Runner, dir string) (*Repo, error) {
	if git == nil {
		git = DefaultRunner
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", abs, err)
	}
	// One call in the common case (every CLI command starts here); the
	// two of before only to say why a directory is no working tree.
	out, err := git.Output(ctx, NewCmd("rev-parse", "--is-bare-repository", "--is-inside-work-tree",
		"--show-toplevel", "--absolute-git-dir", "--git-common-dir").Dir(real))
	if err != nil || !strings.HasPrefix(out, "false\ntrue\n") {
		out, err = git.Output(ctx, NewCmd("rev-parse", "--is-bare-repository", "--is-inside-work-tree").Dir(real))
		if err != nil {
			if ExitCode(err) == 128 {
				return nil, fmt.Errorf("%s: %w", abs, ErrNotRepo)
			}
			return nil, err
		}
		if out == "true\nfalse" {
			return nil, fmt.Errorf("%s: %w", abs, ErrBare)
		}
		if out != "false\ntrue" {
			// Inside .git, for example.
			return nil, fmt.Errorf("%s: %w (not inside a working tree)", abs, ErrNotRepo)
		}
		out, err = git.Output(ctx, NewCmd("rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir").Dir(real))
		if err != nil {
			return nil, err
		}
	} else {
		out = strings.TrimPrefix(out, "false\ntrue\n")
	}
	lines := strings.Split(out, "\n")
	if len(lines) != 3 {
		return nil, fmt.Errorf("%s: unexpected rev-parse output %q", abs, out)
	}
	lines = append([]string{"true"}, lines...)
	r := &Repo{git: git}
	if r.Root, err = filepath.EvalSymlinks(lines[1]); err != nil {
		return nil, err
	}
	if r.GitDir, err = filepath.EvalSymlinks(lines[2]); err != nil {
		return nil, err
	}
	common := lines[3]
	if !filepath.IsAbs(common) {
		common = filepath.Join(real, common)
	}
	if r.CommonDir, err = filepath.EvalSymlinks(common); err != nil {
		return nil, err
	}
	r.Identity = Identity(filepath.Base(r.Root), r.GitDir)
	return r, nil
}

// Identity builds <dirname>-<hash8>: the name keeps it readable, the hash of
// the real git directory keeps two checkouts with the same name apart. The
// git directory (not the common one) is hashed so that a user's own linked
// worktrees are separate workspaces; for the main working tree the two are
// the same.
func Identity(name, realGitDir string) string {
	sum := sha256.Sum256([]byte(realGitDir))
	var b strings.Builder
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	n := strings.TrimLeft(b.String(), ".")
	if n == "" {
		n = "repo"
	}
	if len(n) > 40 {
		n = n[:40]
	}
	return n + "-" + hex.EncodeToString(sum[:4])
}

// Head returns the commit HEAD points to, or "" for a repository with no
// commits yet.
func (r *Repo) Head(ctx context.Context) (string, error) {
	out, err := r.git.Output(ctx, NewCmd("rev-parse", "--verify", "-q").Rev("HEAD^{commit}").Dir(r.Root))
	if err != nil {
		if ExitCode(err) == 1 {
			return "", nil
		}
		return "", err
	}
	return out, nil
}
