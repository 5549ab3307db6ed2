package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// identityEnv lets commit-tree run in repositories whose user has no name or
// email configured; the commits are prsm's, not the user's.
var identityEnv = []string{
	"GIT_AUTHOR_NAME=prsm", "GIT_AUTHOR_EMAIL=prsm@localhost",
	"GIT_COMMITTER_NAME=prsm", "GIT_COMMITTER_EMAIL=prsm@localhost",
}

var hexID = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// Snapshot commits the workspace as the user sees it: HEAD plus staged,
// unstaged and untracked-but-not-ignored files. It works on a copy of the
// user's index in a temporary file (GIT_INDEX_FILE), so the user's index,
// HEAD and files are never written; the copy keeps git's stat cache, so only
// files that changed since the user's last git command are hashed. The
// commit has HEAD as parent (none in a repository with no commits) and is
// not on any branch yet. exclude names directories of the workspace
// (slash separated, relative) left out of it: prsm's own state, when
// PRSM_HOME lies inside the workspace. A file whose .gitattributes
// conversion fails is stored as its bytes, and the commit's message names
// it (StoredAsIs, PlaceAsIs); a file over the size limit that git would
// read is stored as a stub, named too (BigFiles, PlaceBig). A snapshot
// that fails leaves nothing behind: its temporary index (and git's lock
// of it) lives in a directory of its own, removed at the end, and a git
// that runs out of time is stopped with what it was writing (group.go).
func (r *Repo) Snapshot(ctx context.Context, message string, exclude ...string) (commit string, err error) {
	head, err := r.Head(ctx)
	if err != nil {
		return "", err
	}
	tmpDir, err := os.MkdirTemp("", "prsm-index-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmpDir)
	tmpIndex := filepath.Join(tmpDir, "index")
	if err := copyIndex(filepath.Join(r.GitDir, "index"), tmpIndex); err != nil {
		return "", err
	}
	idx := "GIT_INDEX_FILE=" + tmpIndex
	// What `git add -A` would read: files over the size limit among
	// them go in as stubs, never read by git (bigsnap.go).
	changed, err := r.listFiles(ctx, tmpIndex, exclude, "--others", "--modified", "--exclude-standard")
	if err != nil {
		return "", fmt.Errorf("snapshot workspace: %w", err)
	}
	big, err := r.addBig(ctx, tmpIndex, tmpDir, changed)
	if err != nil {
		return "", fmt.Errorf("snapshot workspace: %w", err)
	}
	skip := append(append([]string(nil), exclude...), big...)
	var asIs []string
	if _, err := r.git.Run(ctx, r.addAllBut(tmpIndex, skip)); err != nil {
		// A .gitattributes conversion that fails on some file (an
		// agent's working-tree-encoding, a required filter whose clean
		// fails) would refuse every session start: such files go in as
		// their bytes, and the commit names them (asis.go). A git that
		// ran out of time gets no second try.
		if errors.Is(err, ErrTimeout) || ctx.Err() != nil {
			return "", fmt.Errorf("snapshot workspace: %w", err)
		}
		if asIs, err = r.addAsIs(ctx, tmpIndex, exclude, big, err); err != nil {
			return "", fmt.Errorf("snapshot workspace: %w", err)
		}
	}
	tree, err := r.git.Output(ctx, NewCmd("write-tree").Dir(r.Root).Env(idx))
	if err != nil {
		return "", fmt.Errorf("snapshot tree: %w", err)
	}
	return r.CommitTree(ctx, tree, head, namesMessage(message, asIs, big))
}

// copyIndex copies the user's index to tmp. With no index yet there is
// no copy: git treats an empty file as invalid, and `git add` makes a
// fresh one.
func copyIndex(user, tmp string) error {
	src, err := os.Open(user)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read index: %w", err)
	}
	defer src.Close()
	dst, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("copy index: %w", err)
	}
	return nil
}

// CommitTree makes a commit of tree with an optional parent, without moving
// any ref.
func (r *Repo) CommitTree(ctx context.Context, tree, parent, message string) (string, error) {
	if !hexID.MatchString(tree) || (parent != "" && !hexID.MatchString(parent)) {
		return "", fmt.Errorf("commit tree: bad object id %q %q", tree, parent)
	}
	c := NewCmd("commit-tree", "-m", message).Arg(tree)
	if parent != "" {
		c.Opt("-p").Arg(parent)
	}
	out, err := r.git.Output(ctx, c.Dir(r.Root).Env(identityEnv...))
	if err != nil {
		return "", fmt.Errorf("commit tree: %w", err)
	}
	return out, nil
}

// BranchName is the branch of a session.
func BranchName(sessionID string) string { return "prsm/" + sessionID }

// AddWorktree checks commit out into a new worktree at path on a new branch.
// The user's hooks are not run (the runner switches them off for every
// call): they belong to the user's own checkouts.
func (r *Repo) AddWorktree(ctx context.Context, path, branch, commit string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	c := NewCmd("-c", "checkout.workers=0", "worktree", "add", "--quiet", "-b", branch).
		Rev(path, commit).Dir(r.Root).Timeout(10 * time.Minute)
	if _, err := r.git.Run(ctx, c); err != nil {
		return fmt.Errorf("add worktree %s: %w", path, err)
	}
	return nil
}

// RemoveWorktree removes a session's worktree and branch. Callers decide
// first that nothing in it is unreviewed. A worktree directory that is already
// gone is cleaned from git's records too.
func (r *Repo) RemoveWorktree(ctx context.Context, path, branch string) error {
	defer r.forgetLinked(path)
	if _, err := os.Lstat(path); err == nil {
		if _, err := r.git.Run(ctx, NewCmd("worktree", "remove", "--force", "--force").Rev(path).Dir(r.Root)); err != nil {
			return fmt.Errorf("remove worktree %s: %w", path, err)
		}
	} else if err := r.forgetWorktree(path); err != nil {
		return err
	}
	if branch != "" {
		if _, err := r.git.Run(ctx, NewCmd("branch", "-D").Rev(branch).Dir(r.Root)); err != nil && !strings.Contains(err.Error(), "not found") {
			return fmt.Errorf("delete branch %s: %w", branch, err)
		}
	}
	return nil
}

// SessionBranch is a branch prsm/<id> of the repository.
type SessionBranch struct {
	Name       string // prsm/<id>
	Tip        string // the commit it points at
	ByPrsm     bool   // prsm committed the tip (a session's base snapshot)
	CheckedOut bool   // some worktree has it checked out
}

// SessionBranches lists the branches under prsm/.
func (r *Repo) SessionBranches(ctx context.Context) ([]SessionBranch, error) {
	out, err := r.git.Output(ctx, NewCmd("for-each-ref", "--format=%(refname:lstrip=2)%00%(objectname)%00%(committeremail)%00%(worktreepath)").
		Arg("refs/heads/prsm/").Dir(r.Root))
	if err != nil {
		return nil, fmt.Errorf("list session branches: %w", err)
	}
	var bs []SessionBranch
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "\x00")
		if len(f) != 4 {
			continue
		}
		bs = append(bs, SessionBranch{Name: f[0], Tip: f[1], ByPrsm: f[2] == "<prsm@localhost>", CheckedOut: f[3] != ""})
	}
	return bs, nil
}

// DeleteBranchAt deletes branch name if it still points at tip.
func (r *Repo) DeleteBranchAt(ctx context.Context, name, tip string) error {
	if !strings.HasPrefix(name, "prsm/") || !hexID.MatchString(tip) {
		return fmt.Errorf("delete branch %s: not a session branch", name)
	}
	if _, err := r.git.Run(ctx, NewCmd("update-ref", "-d").Rev("refs/heads/"+name, tip).Dir(r.Root)); err != nil {
		return fmt.Errorf("delete branch %s: %w", name, err)
	}
	return nil
}

// forgetWorktree drops git's administrative entry for a worktree whose
// directory was deleted by hand. Only the entry that points at path is
// removed: `git worktree prune` would also prune the user's own worktrees.
func (r *Repo) forgetWorktree(path string) error {
	admin := filepath.Join(r.CommonDir, "worktrees")
	entries, err := os.ReadDir(admin)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(admin, e.Name(), "gitdir"))
		if err != nil {
			continue
		}
		if filepath.Dir(strings.TrimSpace(string(b))) == path {
			return os.RemoveAll(filepath.Join(admin, e.Name()))
		}
	}
	return nil
}

// Status returns `git status --porcelain -z` of the worktree at dir (the
// workspace, or one of its session worktrees: RunIn), with every
// untracked file listed.
func (r *Repo) Status(ctx context.Context, dir string) ([]byte, error) {
	return r.RunIn(ctx, dir, NewCmd("status", "--porcelain", "-z", "--untracked-files=all").Env("GIT_OPTIONAL_LOCKS=0"))
}

// CopyIncluded copies into dst the git-ignored files of the workspace that
// .worktreeinclude (gitignore syntax) names, such as .env files that a fresh
// checkout would lack. It returns the copied paths, relative and slash
// separated.
func (r *Repo) CopyIncluded(ctx context.Context, dst string) ([]string, error) {
	spec, err := os.ReadFile(filepath.Join(r.Root, ".worktreeinclude"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var patterns []gitignore.Pattern
	for _, line := range strings.Split(string(spec), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		patterns = append(patterns, gitignore.ParsePattern(line, nil))
	}
	if len(patterns) == 0 {
		return nil, nil
	}
	m := gitignore.NewMatcher(patterns)
	out, err := r.git.Run(ctx, NewCmd("ls-files", "-z", "--others", "--ignored", "--exclude-standard").Dir(r.Root))
	if err != nil {
		return nil, fmt.Errorf("list ignored files: %w", err)
	}
	var copied []string
	for _, rel := range bytes.Split(out, []byte{0}) {
		if len(rel) == 0 {
			continue
		}
		p := string(rel)
		if !m.Match(strings.Split(p, "/"), false) {
			continue
		}
		if err := copyEntry(filepath.Join(r.Root, p), filepath.Join(dst, p)); err != nil {
			return copied, fmt.Errorf("copy %s: %w", p, err)
		}
		copied = append(copied, p)
	}
	return copied, nil
}

// copyEntry copies a regular file (keeping its permission bits) or a symlink.
func copyEntry(src, dst string) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	}
	if !fi.Mode().IsRegular() {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
