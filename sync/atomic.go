package sync

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
)

// faultHook is a test's fault injection (SetFaultHook); nil in production.
var faultHook atomic.Pointer[func(op, path string) error]

// SetFaultHook makes the writes of this package call f before each of their
// steps, with op one of "create", "write", "sync", "rename", "symlink" or
// "remove" and the path being written, and fail that step with f's error as
// the file system would (a failed "write" leaves half the data in the
// temporary file first, as a full disk does). For tests of failure handling
// only; the returned function removes the hook.
func SetFaultHook(f func(op, path string) error) (restore func()) {
	faultHook.Store(&f)
	return func() { faultHook.Store(nil) }
}

func fault(op, path string) error {
	if f := faultHook.Load(); f != nil {
		return (*f)(op, path)
	}
	return nil
}

// TempPrefix starts the name of every temporary file prsm writes next to a
// workspace or worktree file. A file with this prefix is never the user's:
// one left behind by a crash is removed by CleanTemp.
const TempPrefix = ".prsm-tmp-"

// WriteFileAtomic replaces path with data and sets its permission bits to
// mode.Perm() exactly (the umask does not apply, so an exec bit is kept or
// dropped as asked). Readers and a crash at any instant see either the old
// file or the new one, never a mix: the data goes to a temporary file in the
// same directory, is synced, and is renamed over path, and then the
// directory is synced so the rename itself survives a power loss.
//
// If path is a symlink, the link itself is replaced by a regular file; the
// file it pointed to is not touched. Missing parent directories are created
// with mode 0755. On failure path is left as it was and the temporary file
// is removed; the one exception is a failing sync of the directory after the
// rename, which is reported although the new content is already in place.
// Callers must have confined path to the workspace or worktree
// first; this function writes wherever it is told.
func WriteFileAtomic(path string, data []byte, mode os.FileMode) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create parent of %s: %w", path, err)
	}
	if err := fault("create", path); err != nil {
		return fmt.Errorf("create temp file for %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, TempPrefix+"*")
	if err != nil {
		return fmt.Errorf("create temp file for %s: %w", path, err)
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		if err != nil && !renamed {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := fault("write", path); err != nil {
		f.Write(data[:len(data)/2])
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	// Chmod on the open file rather than relying on the create mode, which
	// the umask would trim.
	if err := f.Chmod(mode.Perm()); err != nil {
		return fmt.Errorf("chmod %s: %w", tmp, err)
	}
	if err := fault("sync", path); err != nil {
		return fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := fault("rename", path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	renamed = true
	if err := syncDir(dir); err != nil {
		// The new content is in place; only its durability is in doubt.
		return fmt.Errorf("replaced %s: %w", path, err)
	}
	return nil
}

// WriteSymlinkAtomic makes path a symlink to target, replacing whatever file
// or link is there in one rename, so that no moment exists at which path is
// missing. The target is stored as given and not checked; confining what
// links point to is the caller's business.
func WriteSymlinkAtomic(path, target string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create parent of %s: %w", path, err)
	}
	if err := fault("symlink", path); err != nil {
		return fmt.Errorf("create temp link for %s: %w", path, err)
	}
	var tmp string
	for attempt := 0; ; attempt++ {
		tmp = filepath.Join(dir, TempPrefix+strconv.FormatUint(rand.Uint64(), 36))
		err := os.Symlink(target, tmp)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || attempt == 10 {
			return fmt.Errorf("create temp link for %s: %w", path, err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("replace %s: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("replaced %s: %w", path, err)
	}
	return nil
}

// RemoveFile removes the file or symlink at path (a symlink is removed, not
// followed) and then every parent directory that this leaves empty, up to
// but not including root, so that deleting a file the agent created does not
// leave empty directories behind in the workspace. A path that is already
// missing is not an error. path must lie inside root; a directory at path is
// refused, since prsm records changes per file and never removes a tree.
func RemoveFile(root, path string) error {
	root, path = filepath.Clean(root), filepath.Clean(path)
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." || escapes(rel) {
		return fmt.Errorf("remove %s: not inside %s", path, root)
	}
	// The lexical check above does not stop a symlinked parent directory
	// from leading out of root; compare the real locations too.
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", root, err)
	}
	dir := filepath.Dir(path)
	realDir, err := filepath.EvalSymlinks(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // nothing there, so nothing to remove or prune
	}
	if err != nil {
		return fmt.Errorf("resolve %s: %w", dir, err)
	}
	if r, err := filepath.Rel(realRoot, realDir); err != nil || escapes(r) {
		return fmt.Errorf("remove %s: parent resolves outside %s", path, root)
	}

	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Already gone (say, removed before a crash); still prune below.
	case err != nil:
		return fmt.Errorf("remove %s: %w", path, err)
	case info.IsDir():
		return fmt.Errorf("remove %s: is a directory", path)
	default:
		if err := fault("remove", path); err != nil {
			return fmt.Errorf("remove %s: %w", path, err)
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", path, err)
		}
		if err := syncDir(dir); err != nil {
			return err
		}
	}

	for d := dir; d != root; d = filepath.Dir(d) {
		// Only real directories are pruned: removing a symlink to a
		// directory would drop the link even if its target holds files.
		info, err := os.Lstat(d)
		if err != nil || !info.IsDir() {
			break
		}
		if err := os.Remove(d); err != nil {
			break // not empty (or not ours to remove): stop pruning
		}
	}
	return nil
}

// CleanTemp removes the temporary files (TempPrefix) that a crash may have
// left under root, skipping .git directories, and returns how many it
// removed. A leftover is never a user file and never complete work: the
// rename that would have published it did not happen. Call it at start-up,
// before anything writes under root, or it may delete a temp file that a
// running write is about to rename. Unreadable directories are skipped and
// reported in the error, after the rest of the tree was cleaned.
func CleanTemp(root string) (int, error) {
	removed := 0
	var errs []error
	walkErr := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return err
			}
			errs = append(errs, err)
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".git" && path != root {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasPrefix(d.Name(), TempPrefix) {
			return nil
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			return nil
		}
		removed++
		return nil
	})
	if walkErr != nil {
		return removed, fmt.Errorf("clean temp files under %s: %w", root, walkErr)
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("clean temp files under %s: %w", root, errors.Join(errs...))
	}
	return removed, nil
}

// escapes reports whether a filepath.Rel result leads out of its base.
func escapes(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// syncDir makes a rename or removal in dir durable. Without it a power loss
// can bring back the old directory entry even though the file data was
// synced.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open %s for sync: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
