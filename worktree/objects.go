package worktree

import (
	"errors"
	"fmt"
	"io"
	stdsync "sync"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Objects reads commits, trees and blobs of the repository with go-git, in
// process: a session's base files are read far more often than a git
// process per file could afford. go-git does not handle linked worktrees, so
// it is used for object reads only.
type Objects struct {
	mu    stdsync.Mutex
	repo  *git.Repository
	trees map[string]*object.Tree
}

// Objects opens the repository's object store once and returns it.
func (r *Repo) Objects() (*Objects, error) {
	r.objOnce.Do(func() {
		repo, err := git.PlainOpenWithOptions(r.Root, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
		if err != nil {
			r.objErr = fmt.Errorf("open objects of %s: %w", r.Root, err)
			return
		}
		r.obj = &Objects{repo: repo, trees: map[string]*object.Tree{}}
	})
	return r.obj, r.objErr
}

// File is a file of a commit: its st_mode bits (0o100644, 0o100755,
// 0o120000) and content (the link target for a symlink).
type File struct {
	Mode    uint32
	Content []byte
}

// ErrNoFile means the commit has no file at that path.
var ErrNoFile = errors.New("no such file in commit")

// ReadFile returns the file at path (slash separated) in commit.
func (o *Objects) ReadFile(commit, path string) (File, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	tree, ok := o.trees[commit]
	if !ok {
		c, err := o.repo.CommitObject(plumbing.NewHash(commit))
		if err != nil {
			return File{}, fmt.Errorf("read commit %s: %w", commit, err)
		}
		if tree, err = c.Tree(); err != nil {
			return File{}, fmt.Errorf("read tree of %s: %w", commit, err)
		}
		o.trees[commit] = tree
	}
	ent, err := tree.FindEntry(path)
	if errors.Is(err, object.ErrEntryNotFound) || errors.Is(err, object.ErrDirectoryNotFound) {
		return File{}, ErrNoFile
	}
	if err != nil {
		return File{}, fmt.Errorf("find %s: %w", path, err)
	}
	if !ent.Mode.IsFile() {
		return File{}, ErrNoFile // a directory or submodule
	}
	blob, err := o.repo.BlobObject(ent.Hash)
	if err != nil {
		return File{}, fmt.Errorf("read blob of %s: %w", path, err)
	}
	rd, err := blob.Reader()
	if err != nil {
		return File{}, err
	}
	defer rd.Close()
	b, err := io.ReadAll(rd)
	if err != nil {
		return File{}, err
	}
	return File{Mode: uint32(ent.Mode), Content: b}, nil
}
