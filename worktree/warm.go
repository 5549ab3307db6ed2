package worktree

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A warm worktree is a checkout prsm prepares before any session asks for
// one: a session start then moves it into place and writes only the
// files that differ between it and the workspace's snapshot (TakeWarm),
// instead of checking out the whole repository. It is detached (on no
// branch, so nothing takes it for a session's) and locked with
// WarmReason, which `git worktree list` shows.

// WarmReason is the lock reason of a warm worktree.
const WarmReason = "prsm: warm worktree for the next session start (no session's work; safe to remove)"

// AddWarm adds a worktree at path detached at commit, locked with
// WarmReason, with no file checked out yet: git's bookkeeping only, so
// that the long part (FillWarm) runs without the lock that serializes
// worktree adds and removes.
func (r *Repo) AddWarm(ctx context.Context, path, commit string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	c := NewCmd("worktree", "add", "--quiet", "--no-checkout", "--detach", "--lock", "--reason", WarmReason).
		Rev(path, commit).Dir(r.Root)
	if _, err := r.git.Run(ctx, c); err != nil {
		return fmt.Errorf("add warm worktree %s: %w", path, err)
	}
	return nil
}

// FillWarm checks out HEAD's files into the warm worktree at path, with
// parallel checkout as AddWorktree does, and then refreshes its index's
// stat data once the files' timestamps lie in the past: otherwise git
// takes every file written in the index's own second for racily clean
// and reads it again at each status (CleanWarm).
func (r *Repo) FillWarm(ctx context.Context, path string) error {
	if _, err := r.RunIn(ctx, path, NewCmd("-c", "checkout.workers=0", "read-tree", "--reset", "-u").
		Rev("HEAD").Timeout(10*time.Minute)); err != nil {
		return fmt.Errorf("fill warm worktree %s: %w", path, err)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(1100 * time.Millisecond):
	}
	if _, err := r.RunIn(ctx, path, NewCmd("update-index", "-q", "--refresh")); err != nil {
		// Exit 1 says some file needs an update: the tree is dirty,
		// which CleanWarm finds and says.
		if ExitCode(err) != 1 {
			return fmt.Errorf("refresh warm worktree %s: %w", path, err)
		}
	}
	return nil
}

// CleanWarm checks that the warm worktree at path is exactly commit: its
// HEAD detached there, its index and every file equal to it, no
// untracked or ignored file, and its .git file git's own. It returns why
// not ("" when clean). git status reads every file's stat data against
// the index, so a file edited, added or deleted (a directory too) since
// FillWarm shows.
func (r *Repo) CleanWarm(ctx context.Context, path, commit string) (string, error) {
	l, err := r.Linked(path)
	if err != nil {
		return "", err
	}
	dotgit, err := readSmall(filepath.Join(path, ".git"))
	if err != nil || strings.TrimSpace(string(dotgit)) != "gitdir: "+l.GitDir {
		return ".git file changed", nil
	}
	out, err := r.git.Run(ctx, NewCmd("status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all",
		"--ignored=matching", "--no-renames").Env("GIT_OPTIONAL_LOCKS=0").In(l))
	if err != nil {
		return "", fmt.Errorf("status of warm worktree %s: %w", path, err)
	}
	detached := false
	for _, f := range bytes.Split(out, []byte{0}) {
		switch line := string(f); {
		case line == "":
		case line == "# branch.oid "+commit:
		case line == "# branch.head (detached)":
			detached = true
		case strings.HasPrefix(line, "# branch."):
			return "HEAD moved: " + line, nil
		default:
			return "changed: " + line, nil
		}
	}
	if !detached {
		return "HEAD is not detached", nil
	}
	return "", nil
}

// TakeWarm turns the clean warm worktree at from (CleanWarm) into a
// session worktree at path on a new branch at commit: it unlocks and
// moves it, then checks commit out there, which writes only the files
// that differ between the two commits (contents, modes, symlinks,
// deletions) and leaves the index's stat data of the others as it was,
// and puts HEAD on the new branch.
// The result is what AddWorktree gives. warmCommit is what the warm
// worktree holds; a commit that changes a .gitattributes file is refused
// (ErrWarmAttributes): files the checkout does not write would keep the
// old attributes' conversion.
func (r *Repo) TakeWarm(ctx context.Context, from, warmCommit, path, branch, commit string) error {
	if !hexID.MatchString(warmCommit) || !hexID.MatchString(commit) {
		return fmt.Errorf("take warm worktree: bad object id %q %q", warmCommit, commit)
	}
	out, err := r.git.Run(ctx, NewCmd("diff-tree", "-r", "-z", "--name-only", "--no-renames").
		Rev(warmCommit, commit).Dir(r.Root))
	if err != nil {
		return fmt.Errorf("take warm worktree: %w", err)
	}
	for _, p := range bytes.Split(out, []byte{0}) {
		if string(p) == ".gitattributes" || bytes.HasSuffix(p, []byte("/.gitattributes")) {
			return ErrWarmAttributes
		}
	}
	if _, err := r.git.Run(ctx, NewCmd("worktree", "unlock").Rev(from).Dir(r.Root)); err != nil {
		return fmt.Errorf("unlock warm worktree: %w", err)
	}
	if _, err := r.git.Run(ctx, NewCmd("worktree", "move").Rev(from, path).Dir(r.Root)); err != nil {
		return fmt.Errorf("move warm worktree to %s: %w", path, err)
	}
	r.forgetLinked(from)
	// A two-way read-tree writes what differs and keeps the other
	// entries' stat data; unlike git switch it does not first lstat
	// every file to refresh the index (a tenth of a second at 50k files).
	if _, err := r.RunIn(ctx, path, NewCmd("read-tree", "-m", "-u").Rev(warmCommit, commit).Timeout(10*time.Minute)); err != nil {
		return fmt.Errorf("check out %s in warm worktree: %w", commit, err)
	}
	ref := "refs/heads/" + branch
	if _, err := r.git.Run(ctx, NewCmd("update-ref", "-m", "prsm: session start").Rev(ref, commit, "").Dir(r.Root)); err != nil {
		return fmt.Errorf("create branch %s: %w", branch, err)
	}
	if _, err := r.RunIn(ctx, path, NewCmd("symbolic-ref", "-m", "prsm: session start").Rev("HEAD", ref)); err != nil {
		return fmt.Errorf("point HEAD at %s: %w", branch, err)
	}
	return nil
}

// ErrWarmAttributes refuses a warm worktree whose commit and the
// session's differ in a .gitattributes file.
var ErrWarmAttributes = fmt.Errorf("take warm worktree: .gitattributes changed")

// RemoveWarm removes a warm worktree: its files first, with no lock
// held (a whole checkout takes a while to delete), then, when unlocked
// is called, git's entry for it (RemoveWorktree), under whatever lock the
// caller serializes worktree bookkeeping with.
func (r *Repo) RemoveWarm(ctx context.Context, path string, locked func(func() error) error) error {
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("remove warm worktree %s: %w", path, err)
	}
	return locked(func() error { return r.RemoveWorktree(ctx, path, "") })
}
