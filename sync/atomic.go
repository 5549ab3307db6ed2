package sync

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/prsm-dev/prsm/internal/bigfile"
	"github.com/prsm-dev/prsm/internal/osproc"
	"github.com/prsm-dev/prsm/internal/safepath"
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

// writebackAtStage: stageFile starts the staged file's writeback
// (startWriteback). Only BenchmarkPlace turns it off, to compare.
var writebackAtStage = true

// TempPrefix starts the name of every temporary file prsm writes next to a
// workspace or worktree file: the prefix and 13 random base-36 digits
// (tempName). A file named so is never the user's: one left behind by a
// crash is removed by CleanTemp. Other names with the prefix are.
const TempPrefix = ".prsm-tmp-"

// tempDigits is how many base-36 digits follow TempPrefix in a
// temporary file's name.
const tempDigits = 13

// tempName is a new temporary file name (see TempPrefix).
func tempName() string {
	return fmt.Sprintf("%s%0*s", TempPrefix, tempDigits, strconv.FormatUint(rand.Uint64(), 36))
}

// IsTempName reports whether name is one tempName gives.
func IsTempName(name string) bool {
	digits, ok := strings.CutPrefix(name, TempPrefix)
	if !ok || len(digits) != tempDigits {
		return false
	}
	for _, c := range digits {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

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
// first; this function writes wherever it is told. Writes into a workspace
// or worktree go through writeFileIn, which also holds against a directory
// swapped for a symlink while it runs.
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create parent of %s: %w", path, err)
	}
	return writeFileIn(dir, path, data, mode)
}

// writeFileIn is WriteFileAtomic for a path below root. The directories
// from root down to path's parent are opened one by one, each checked to be
// a real directory (not a symlink) after it was opened (openDirIn), and the
// temporary file is created, renamed and synced relative to that open
// parent: a directory swapped for a symlink at any moment (TOCTOU) makes
// the write fail instead of land outside root.
func writeFileIn(root, path string, data []byte, mode os.FileMode) (err error) {
	d, err := openDirIn(root, filepath.Dir(path), true)
	if err != nil {
		return fmt.Errorf("create parent of %s: %w", path, err)
	}
	defer d.Close()
	tmp, f, err := stageFile(d, path, data, mode)
	if err != nil {
		return err
	}
	return commitStaged(d, tmp, f, path)
}

// commitStaged puts the staged file tmp (open as f) in place of path, in
// d: synced before the rename, so that whoever sees the new name after any
// crash sees all of the content, and the directory synced after it. On
// failure before the rename the staged file is removed.
func commitStaged(d *os.Root, tmp string, f *os.File, path string) error {
	err := syncStaged(f, path)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close %s: %w", tmp, cerr)
	}
	if err != nil {
		d.Remove(tmp)
		return err
	}
	if err := placeStaged(d, tmp, path); err != nil {
		return err
	}
	if err := syncRoot(d); err != nil {
		// The new content is in place; only its durability is in doubt.
		return fmt.Errorf("replaced %s: %w", path, err)
	}
	return nil
}

// stageFile writes data to a new temporary file in d (the open parent of
// path), sets its permission bits and returns its name and the file, open
// and not yet synced (syncStaged), for the caller to close; on failure
// nothing is left behind.
func stageFile(d *os.Root, path string, data []byte, mode os.FileMode) (_ string, open *os.File, err error) {
	return stage(d, path, data, mode, writebackAtStage)
}

// stage is stageFile; writeback starts the staged file's writeback (a
// bulk write, synced whole after, does without: a system call a file).
// Data that is a big file's stub is copied, sparse, from where its content
// was seen, never read whole.
func stage(d *os.Root, path string, data []byte, mode os.FileMode, writeback bool) (_ string, open *os.File, err error) {
	big, isBig := bigfile.Parse(data)
	tmp, f, err := stageWith(d, path, mode, func(f *os.File) error {
		if err := fault("write", path); err != nil {
			f.Write(data[:len(data)/2])
			return err
		}
		if isBig {
			return bigfile.Write(f, big)
		}
		return bigfile.WriteSparse(f, data)
	})
	if err != nil {
		return "", nil, err
	}
	if isBig {
		if st, err := f.Stat(); err == nil {
			bigfile.Remember(path, st, big.ID)
		}
	}
	if writeback {
		startWriteback(f)
	}
	return tmp, f, nil
}

// stageWith is the one way prsm stages a file: a new temporary file in d
// (the open parent of path) that write fills, with mode's permission bits
// exactly; it returns its name and the file, open and not yet synced
// (syncStaged). On failure nothing is left behind.
func stageWith(d *os.Root, path string, mode os.FileMode, write func(*os.File) error) (_ string, open *os.File, err error) {
	if err := fault("create", path); err != nil {
		return "", nil, fmt.Errorf("create temp file for %s: %w", path, err)
	}
	var f *os.File
	var tmp string
	for attempt := 0; ; attempt++ {
		tmp = tempName()
		f, err = d.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || attempt == 10 {
			return "", nil, fmt.Errorf("create temp file for %s: %w", path, err)
		}
	}
	defer func() {
		if err != nil {
			f.Close()
			d.Remove(tmp)
		}
	}()
	if err := write(f); err != nil {
		return "", nil, fmt.Errorf("write %s: %w", path, err)
	}
	// Chmod on the open file rather than relying on the create mode, which
	// the umask would trim.
	if err := f.Chmod(mode.Perm()); err != nil {
		return "", nil, fmt.Errorf("chmod %s: %w", tmp, err)
	}
	return tmp, f, nil
}

// WriteFileFrom replaces path with what write puts into a new file, with
// mode's permission bits exactly, as WriteFileAtomic does with bytes: a
// temporary file in path's directory, synced, renamed over path, and the
// directory synced. Its content is taken as it is (a big file's stub is
// not followed). Prsm's own files (server.json, an agent's hook
// settings) and a worktree's files git wrote are written through it.
func WriteFileFrom(path string, mode os.FileMode, write func(*os.File) error) error {
	d, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("open parent of %s: %w", path, err)
	}
	defer d.Close()
	tmp, f, err := stageWith(d, path, mode, write)
	if err != nil {
		return err
	}
	return commitStaged(d, tmp, f, path)
}

// syncStaged syncs the content of a staged file, of path, to the disk.
func syncStaged(f *os.File, path string) error {
	if err := fault("sync", path); err != nil {
		return fmt.Errorf("sync %s: %w", f.Name(), err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", f.Name(), err)
	}
	return nil
}

// placeStaged renames the staged file tmp over path, in d; on failure the
// staged file is removed.
func placeStaged(d *os.Root, tmp, path string) error {
	err := fault("rename", path)
	if err == nil {
		err = d.Rename(tmp, filepath.Base(path))
	}
	if err != nil {
		d.Remove(tmp)
		return fmt.Errorf("replace %s: %w", path, err)
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
	return writeSymlinkIn(dir, path, target)
}

// writeSymlinkIn is WriteSymlinkAtomic for a path below root, with the
// parent directory opened as writeFileIn does.
func writeSymlinkIn(root, path, target string) error {
	d, err := openDirIn(root, filepath.Dir(path), true)
	if err != nil {
		return fmt.Errorf("create parent of %s: %w", path, err)
	}
	defer d.Close()
	if err := fault("symlink", path); err != nil {
		return fmt.Errorf("create temp link for %s: %w", path, err)
	}
	var tmp string
	for attempt := 0; ; attempt++ {
		tmp = tempName()
		err := d.Symlink(target, tmp)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || attempt == 10 {
			return fmt.Errorf("create temp link for %s: %w", path, err)
		}
	}
	if err := d.Rename(tmp, filepath.Base(path)); err != nil {
		d.Remove(tmp)
		return fmt.Errorf("replace %s: %w", path, err)
	}
	if err := syncRoot(d); err != nil {
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
// A parent directory that is a symlink is followed only if it resolves
// inside root; the removal itself then happens relative to the directory
// opened as writeFileIn does, so that a swap meanwhile cannot lead out.
func RemoveFile(root, path string) error {
	root, path = filepath.Clean(root), filepath.Clean(path)
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." || safepath.Escapes(rel) {
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
	if r, err := filepath.Rel(realRoot, realDir); err != nil || safepath.Escapes(r) {
		return fmt.Errorf("remove %s: parent resolves outside %s", path, root)
	}

	d, err := openDirIn(realRoot, realDir, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // gone since: nothing to remove or prune
	}
	if err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	defer d.Close()
	name := filepath.Base(path)
	info, err := d.Lstat(name)
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
		if err := d.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", path, err)
		}
		if err := syncRoot(d); err != nil {
			return fmt.Errorf("removed %s: %w", path, err)
		}
	}

	prune(root, dir)
	return nil
}

// openDirIn opens dir, which is root or below it, for operations relative
// to it. Every directory from root down is looked at with Lstat, refused if
// it is a symlink (safepath.ErrOutside, as safepath.Join does), opened, and
// checked to be the very directory that was looked at: a directory swapped
// for a symlink between the look and the open is caught, and the open
// directories cannot be swapped from under the caller. With create, missing
// directories are made (mode 0755). Only root itself is opened by name.
func openDirIn(root, dir string, create bool) (*os.Root, error) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(absRoot, absDir)
	if err != nil || safepath.Escapes(rel) {
		return nil, fmt.Errorf("%s is not inside %s: %w", dir, root, safepath.ErrOutside)
	}
	cur, err := os.OpenRoot(absRoot)
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return cur, nil
	}
	at := absRoot
	for _, seg := range strings.Split(rel, string(filepath.Separator)) {
		at = filepath.Join(at, seg)
		next, err := openChild(cur, seg, create)
		cur.Close()
		if err != nil {
			if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
				pe.Path = at
			}
			return nil, err
		}
		cur = next
	}
	return cur, nil
}

// openChild opens the directory name in d without following a symlink.
func openChild(d *os.Root, name string, create bool) (*os.Root, error) {
	fi, err := d.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) && create {
		if err := d.Mkdir(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		fi, err = d.Lstat(name)
	}
	switch {
	case err != nil:
		return nil, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("%s is a symbolic link: %w", name, safepath.ErrOutside)
	case !fi.IsDir():
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOTDIR}
	}
	sub, err := d.OpenRoot(name)
	if err != nil {
		// A symlink leading out of d, swapped in since the Lstat.
		if fi2, lerr := d.Lstat(name); lerr == nil && fi2.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s became a symbolic link: %w", name, safepath.ErrOutside)
		}
		return nil, err
	}
	st, err := sub.Stat(".")
	if err != nil {
		sub.Close()
		return nil, err
	}
	if !os.SameFile(fi, st) {
		sub.Close()
		return nil, fmt.Errorf("%s was replaced while being opened: %w", name, safepath.ErrOutside)
	}
	return sub, nil
}

// syncRoot makes a rename or removal in the open directory d durable.
func syncRoot(d *os.Root) error {
	f, err := d.Open(".")
	if err != nil {
		return fmt.Errorf("open %s for sync: %w", d.Name(), err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", d.Name(), err)
	}
	return nil
}

// readPathIn reads the version at path, below root, without following a
// symlink anywhere from root down (the parent is opened as writeFileIn
// does, and the file is checked after it is opened to be the one looked
// at): a swap cannot make prsm read a file outside root.
func readPathIn(root, path string, max int64) (Version, error) {
	d, err := openDirIn(root, filepath.Dir(path), false)
	if d != nil {
		defer d.Close()
	}
	v, _, err := readInDir(d, err, path, max)
	return v, err
}

// readInDir reads the version at path in d, its parent as openDirIn
// opened it (derr: why it could not; a parent that is not there holds
// nothing), and returns the lstat of what it read (nil when absent).
func readInDir(d *os.Root, derr error, path string, max int64) (Version, fs.FileInfo, error) {
	if errors.Is(derr, fs.ErrNotExist) || errors.Is(derr, syscallENOTDIR) {
		return Absent, nil, nil
	}
	if derr != nil {
		return Version{}, nil, derr
	}
	v, fi, f, err := readOpenMax(d, path, max)
	if f != nil {
		f.Close()
	}
	return v, fi, err
}

// readOpenMax reads the version at path in d, its open parent, and returns
// the lstat of what it read (nil when absent) and the regular file it
// read, still open (nil for anything else): the caller closes it. A file of
// more than max bytes is read as a stub.
func readOpenMax(d *os.Root, path string, max int64) (_ Version, _ fs.FileInfo, open *os.File, _ error) {
	return readOpenWith(d, path, max, nil)
}

// readOpenLike is readOpenMax at the size limit for a file that likely holds like (the base
// of a merge): a large file that does hold it shares like's bytes instead
// of a copy of its own.
func readOpenLike(d *os.Root, path string, like []byte) (_ Version, _ fs.FileInfo, open *os.File, _ error) {
	return readOpenWith(d, path, bigfile.Limit(), like)
}

func readOpenWith(d *os.Root, path string, max int64, like []byte) (_ Version, _ fs.FileInfo, open *os.File, _ error) {
	name := filepath.Base(path)
	fi, err := d.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscallENOTDIR) {
		return Absent, nil, nil, nil
	}
	if err != nil {
		return Version{}, nil, nil, err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := d.Readlink(name)
		if err != nil {
			return Version{}, nil, nil, err
		}
		return Version{Present: true, Mode: ModeSymlink, Content: []byte(target)}, fi, nil, nil
	case fi.Mode().IsRegular():
		f, err := d.OpenFile(name, os.O_RDONLY|osproc.NoFollow, 0)
		if err != nil {
			return Version{}, nil, nil, fmt.Errorf("read %s: %w", path, err)
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return Version{}, nil, nil, err
		}
		if !os.SameFile(fi, st) || !st.Mode().IsRegular() {
			f.Close()
			return Version{}, nil, nil, fmt.Errorf("read %s: replaced while being read: %w", path, safepath.ErrOutside)
		}
		var b []byte
		if len(like) >= shareFrom && int64(len(like)) == st.Size() && !bigfile.HasMagic(like) && holds(f, like) {
			b = like
		} else if _, err = f.Seek(0, io.SeekStart); err == nil {
			b, err = readContent(f, path, st, max)
		}
		if err != nil {
			f.Close()
			return Version{}, nil, nil, fmt.Errorf("read %s: %w", path, err)
		}
		return Version{Present: true, Mode: ModeRegular | uint32(st.Mode().Perm()), Content: b}, fi, f, nil
	}
	return Version{}, nil, nil, fmt.Errorf("%s: %w", path, ErrNotFile)
}

// shareFrom is the size from which readOpenLike compares a file with the
// content it likely holds instead of reading a copy.
const shareFrom = 1 << 20

// holds reports whether f, from its start, holds exactly want (its size is
// known to match), read in pieces.
func holds(f *os.File, want []byte) bool {
	buf := make([]byte, 64<<10)
	for off := 0; off < len(want); {
		n, err := f.Read(buf[:min(len(buf), len(want)-off)])
		if n == 0 || !bytes.Equal(buf[:n], want[off:off+n]) {
			return false
		}
		off += n
		if err != nil && off < len(want) {
			return false
		}
	}
	return true
}

// readContent reads the content of f, the regular file at path whose
// fstat is st: its bytes, or for a file of more than max bytes (or one
// that starts like a stub) a stub, hashed as the file streams past
// (bigfile), never read whole. A file that grows past max while it is
// read is taken as big.
func readContent(f *os.File, path string, st fs.FileInfo, max int64) ([]byte, error) {
	if st.Size() <= max {
		b, err := readAllSized(f, st.Size(), max+1)
		if err != nil {
			return nil, err
		}
		if int64(len(b)) <= max && !bigfile.HasMagic(b) {
			return b, nil
		}
		if int64(len(b)) <= max {
			id := bigfile.HashBytes(b)
			bigfile.Remember(path, st, id)
			return bigfile.Stub(bigfile.Info{Size: int64(len(b)), ID: id}), nil
		}
	}
	for try := 0; ; try++ {
		if id, ok := bigfile.Known(path, st); ok {
			return bigfile.Stub(bigfile.Info{Size: st.Size(), ID: id}), nil
		}
		id, err := bigfile.HashFile(f, st.Size())
		now, serr := f.Stat()
		if serr != nil {
			return nil, serr
		}
		if err == nil && now.Size() == st.Size() && now.ModTime().Equal(st.ModTime()) {
			bigfile.Remember(path, st, id)
			return bigfile.Stub(bigfile.Info{Size: st.Size(), ID: id}), nil
		}
		if err != nil && !errors.Is(err, bigfile.ErrChanged) || try == 2 {
			if err == nil {
				err = bigfile.ErrChanged
			}
			return nil, err
		}
		st = now
	}
}

// readAllSized reads r to its end, or to max bytes, into one buffer of
// size bytes when r holds that many (io.ReadAll, and a bytes.Buffer
// filled to its capacity, grow by doubling: a large file cost two or
// three copies).
func readAllSized(r io.Reader, size, max int64) ([]byte, error) {
	b := make([]byte, size, size+1)
	n, err := io.ReadFull(r, b)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return b[:n], nil // shorter than its stat said
	}
	if err != nil {
		return nil, err
	}
	rest, err := io.ReadAll(io.LimitReader(r, max-size))
	if err != nil {
		return nil, err
	}
	return append(b, rest...), nil
}

// CleanTemp removes the temporary files (IsTempName) that a crash may have
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
		if !IsTempName(d.Name()) {
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
