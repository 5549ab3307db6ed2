package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"

	"github.com/prsm-dev/prsm/internal/bigfile"
	"github.com/prsm-dev/prsm/internal/osproc"
	"github.com/prsm-dev/prsm/sync"
)

// Big files in a snapshot. A file over the size limit (bigfile) that git
// would read for the snapshot, untracked or changed since the user's
// index saw it, is never given to git: `git add` would stream all of it
// into a pack in the user's repository (100 GiB of holes from a
// `truncate -s 100G` took longer than any timeout, and every session
// start failed). The snapshot stores its stub instead, as checkpoint
// trees do, and names it in the commit's message (bigKey lines); the
// content is hashed as the rest of prsm hashes big files, holes unread,
// and remembered where it lies. PlaceBig then puts the real content into
// the session's checkout in place of the stub, copied sparse from the
// workspace file. What reads the base later reads the stub, as it reads
// any big file: by size and hash.

// bigKey starts a line of a snapshot's commit message that names a file
// stored as its stub (the path quoted as strconv.Quote does).
const bigKey = "prsm-big-file: "

// addBig stages into the index file idx (a copy of the user's) the stub
// of every file over the size limit among changed (the files `git add -A`
// would read), and returns those files (sorted). tmpDir is the
// snapshot's own temporary directory.
func (r *Repo) addBig(ctx context.Context, idx, tmpDir string, changed []string) ([]string, error) {
	var big, stubs []string
	var exec []bool
	for _, rel := range changed {
		fi, err := os.Lstat(filepath.Join(r.Root, filepath.FromSlash(rel)))
		if err != nil || !fi.Mode().IsRegular() || fi.Size() <= bigfile.Limit() {
			continue
		}
		in, x, err := r.hashBig(rel)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotRegular) {
			continue // gone, or no longer a file: git takes it as it finds it
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", rel, err)
		}
		stub := filepath.Join(tmpDir, "stub-"+strconv.Itoa(len(stubs)))
		if err := os.WriteFile(stub, bigfile.Stub(in), 0o600); err != nil {
			return nil, err
		}
		big, stubs, exec = append(big, rel), append(stubs, stub), append(exec, x)
	}
	if len(big) == 0 {
		return nil, nil
	}
	if err := r.stageBytes(ctx, idx, stubs, big, exec); err != nil {
		return nil, fmt.Errorf("store stubs of big files: %w", err)
	}
	sort.Strings(big)
	return big, nil
}

// errNotRegular: a path that is no longer a regular file.
var errNotRegular = errors.New("not a regular file")

// hashBig reads the workspace file rel, over the size limit, as a big
// file: its size and content hash (holes unread), remembered at its path
// for PlaceBig's copy. A file that changes while it is read is read
// again, twice at most.
func (r *Repo) hashBig(rel string) (in bigfile.Info, exec bool, err error) {
	p := filepath.Join(r.Root, filepath.FromSlash(rel))
	f, err := os.OpenFile(p, os.O_RDONLY|osproc.NoFollow, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			err = errNotRegular
		}
		return in, false, err
	}
	defer f.Close()
	for try := 0; ; try++ {
		st, err := f.Stat()
		if err != nil {
			return in, false, err
		}
		if !st.Mode().IsRegular() {
			return in, false, errNotRegular
		}
		id, err := bigfile.HashFile(f, st.Size())
		now, serr := f.Stat()
		if serr != nil {
			return in, false, serr
		}
		if err == nil && now.Size() == st.Size() && now.ModTime().Equal(st.ModTime()) {
			bigfile.Remember(p, st, id)
			return bigfile.Info{Size: st.Size(), ID: id}, st.Mode()&0o111 != 0, nil
		}
		if err != nil && !errors.Is(err, bigfile.ErrChanged) || try == 2 {
			if err == nil {
				err = bigfile.ErrChanged
			}
			return in, false, err
		}
	}
}

// BigFiles returns the files that the snapshot commit stores as stubs
// (none for any other commit), relative, slash separated and sorted.
func (r *Repo) BigFiles(commit string) ([]string, error) {
	set, err := r.named(commit, bigKey)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// PlaceBig writes into dir, a worktree just checked out at commit, the
// real content of each file that commit stores as a stub, in place of
// the stub the checkout wrote: copied sparse from where the snapshot saw
// it (bigfile.Write), so that the worktree starts equal to the
// workspace. A content no file holds any more (the workspace file
// changed since the snapshot) is an error. It returns the files it
// wrote.
func (r *Repo) PlaceBig(dir, commit string) ([]string, error) {
	return r.placeNamed(dir, commit, bigKey, func(p string, f File, perm fs.FileMode) (bool, error) {
		in, ok := bigfile.Parse(f.Content)
		if !ok {
			return false, nil
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return false, err
		}
		return true, sync.WriteFileFrom(p, perm, func(f *os.File) error { return bigfile.Write(f, in) })
	})
}
