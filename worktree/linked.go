package worktree

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm/internal/osproc"
)

// A session worktree's .git file ("gitdir: <git's entry for it>") is an
// ordinary file inside the worktree, and the agent can rewrite it to name
// a git directory of its own making, whose config runs commands
// (core.fsmonitor, hooks, filters) for whoever runs git there. So prsm
// never lets git read it: it finds git's entry for the worktree once,
// from what git wrote in the repository's own git directory when prsm
// added the worktree, keeps it, and names it to every git call there
// (Cmd.In). RepairDotGit puts the file back for the user's own git.

// Linked is a session worktree as git registered it when prsm added it.
type Linked struct {
	// WorkTree is the real path of the worktree's top directory.
	WorkTree string
	// GitDir is git's entry for it: <CommonDir>/worktrees/<name>.
	GitDir string
}

// maxGitdirFile bounds what is read of a .git or gitdir file: git writes
// one line holding a path.
const maxGitdirFile = 4096

// ConfineWorktrees makes r's git calls refuse to run by Dir in dir, where
// prsm keeps the session worktrees (Runner.Confined): there they must
// name the worktree's git directory (RunIn). r gets a runner of its own;
// a runner shared with other repositories is left as it is. Call it
// before r is used.
func (r *Repo) ConfineWorktrees(dir string) {
	g := *r.git
	g.Confined = dir
	r.git = &g
}

// RunIn runs c in dir: in the workspace itself by Dir, in one of its
// session worktrees by In, with the git directory and work tree that
// Linked finds.
func (r *Repo) RunIn(ctx context.Context, dir string, c *Cmd) ([]byte, error) {
	if dir == r.Root || realPath(dir) == r.Root {
		return r.git.Run(ctx, c.Dir(dir))
	}
	l, err := r.Linked(dir)
	if err != nil {
		return nil, err
	}
	return r.git.Run(ctx, c.In(l))
}

// Linked returns the session worktree at path: git's entry for it is the
// one under <CommonDir>/worktrees whose gitdir file (written by git, in
// the user's git directory) names <path>/.git. It is looked for once and
// kept; the worktree's own .git file is never read to find it.
func (r *Repo) Linked(path string) (Linked, error) {
	r.linkedMu.Lock()
	l, ok := r.linked[path]
	r.linkedMu.Unlock()
	if ok {
		return l, nil
	}
	wt := realPath(path)
	admin, err := r.findEntry(wt)
	if err != nil {
		return Linked{}, err
	}
	l = Linked{WorkTree: wt, GitDir: admin}
	r.linkedMu.Lock()
	if r.linked == nil || len(r.linked) >= 4096 {
		r.linked = map[string]Linked{}
		r.entryOK = map[string]bool{}
	}
	r.linked[path] = l
	r.linkedMu.Unlock()
	return l, nil
}

// forgetLinked drops what Linked kept of the worktree at path.
func (r *Repo) forgetLinked(path string) {
	r.linkedMu.Lock()
	delete(r.linked, path)
	delete(r.entryOK, path)
	r.linkedMu.Unlock()
}

// findEntry finds git's entry for the worktree wt (a real path). git names
// it after the worktree's directory (with a number added when the name is
// taken), so that one is looked at first. When no entry names wt, the one
// named after it whose gitdir names no directory that exists (git's
// record went stale: the worktree was moved, or the file rewritten) is
// taken; RepairDotGit points it back.
func (r *Repo) findEntry(wt string) (string, error) {
	dir := filepath.Join(r.CommonDir, "worktrees")
	want := filepath.Join(wt, ".git")
	first := filepath.Base(wt)
	names := []string{first}
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			if e.Name() != first && e.IsDir() {
				names = append(names, e.Name())
			}
		}
	}
	for _, n := range names {
		admin := filepath.Join(dir, n)
		if g, ok := entryGitdir(admin); ok && (g == want || realPath(g) == want) {
			return admin, nil
		}
	}
	admin := filepath.Join(dir, first)
	if fi, err := os.Stat(filepath.Join(admin, "commondir")); err == nil && fi.Mode().IsRegular() {
		g, ok := entryGitdir(admin)
		if _, err := os.Stat(filepath.Dir(g)); !ok || errors.Is(err, os.ErrNotExist) {
			return admin, nil
		}
	}
	return "", fmt.Errorf("worktree %s: git has no entry for it in %s", wt, dir)
}

// entryGitdir reads the gitdir file of git's entry admin: the path of the
// worktree's .git file, absolute (a relative one, as
// worktree.useRelativePaths writes, is taken from admin).
func entryGitdir(admin string) (string, bool) {
	b, err := readSmall(filepath.Join(admin, "gitdir"))
	if err != nil {
		return "", false
	}
	g := strings.TrimSpace(string(b))
	if g == "" {
		return "", false
	}
	if !filepath.IsAbs(g) {
		g = filepath.Join(admin, g)
	}
	return filepath.Clean(g), true
}

// readSmall reads at most maxGitdirFile bytes of the regular file p. It
// never blocks on a FIFO and never follows a symlink at p: the file may
// be the agent's.
func readSmall(p string) ([]byte, error) {
	return readRegular(p, osproc.NoFollow, maxGitdirFile)
}

// readRegular reads at most limit bytes (and one more, for the caller to
// tell) of the regular file p, opened with flags besides O_RDONLY.
func readRegular(p string, flags int, limit int64) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|flags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", p)
	}
	return io.ReadAll(io.LimitReader(f, limit+1))
}

// HeadOf is the commit the HEAD of the session worktree at path points
// at, read from git's files without a git process: its entry's HEAD, and
// the loose branch ref that names (refs/heads/...), or a commit id there.
// ok is false where the files do not say plainly (a packed or missing
// ref, a ref of another kind, anything odd): the caller then asks git.
// The files are the agent's to write too; they can only make prsm ask
// git, or name the commit git would resolve HEAD to as well.
func (r *Repo) HeadOf(path string) (commit string, ok bool) {
	l, err := r.Linked(path)
	if err != nil {
		return "", false
	}
	b, err := readRegular(filepath.Join(l.GitDir, "HEAD"), osproc.NoFollow, 4096)
	if err != nil {
		return "", false
	}
	head := strings.TrimRight(string(b), "\n")
	if hexID.MatchString(head) {
		return head, true
	}
	ref, isRef := strings.CutPrefix(head, "ref: ")
	if !isRef || !strings.HasPrefix(ref, "refs/heads/") || strings.Contains(ref, "..") || strings.ContainsAny(ref, "\x00\n\r\\") {
		return "", false
	}
	b, err = readRegular(filepath.Join(r.CommonDir, filepath.FromSlash(ref)), osproc.NoFollow, 4096)
	if id := strings.TrimRight(string(b), "\n"); err == nil && hexID.MatchString(id) {
		return id, true
	}
	return "", false
}
