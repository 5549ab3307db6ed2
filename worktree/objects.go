package worktree

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	stdsync "sync"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/prsm-dev/prsm/internal/bigfile"
)

// Objects reads commits, trees and blobs of the repository with go-git, in
// process: a session's base files are read far more often than a git
// process per file could afford. go-git does not handle linked worktrees, so
// it is used for object reads only; prsm writes its checkpoints' objects
// itself (Batch, WriteObjects) and can stage them for reads first.
type Objects struct {
	mu      stdsync.Mutex
	root    string
	objDir  string              // the loose object store prsm writes checkpoints into
	refDir  string              // the common git dir, where refs/prsm/... live
	storage *filesystem.Storage // closed when the store is reopened
	// alts are the object stores objects/info/alternates names (git
	// clone --shared and --reference write it), opened once with the
	// store and read after it (reader).
	alts []*filesystem.Storage
	// commitTrees maps commits read to their root trees; treeCache holds
	// the decoded trees.
	commitTrees map[plumbing.Hash]plumbing.Hash
	treeCache   treeCache
	// staged holds objects a checkpoint made that are not written yet
	// (Stage); every read sees them.
	staged map[plumbing.Hash]*stagedObject
	// own are the packs this process wrote (pack.go), packed where their
	// objects are, keptLarge the kept packs of large blobs by blob. All
	// three are guarded by mu; writeMu serializes WriteKept.
	own       []*ownPack
	packed    map[plumbing.Hash]packEntry
	keptLarge map[plumbing.Hash]*ownPack
	writeMu   stdsync.Mutex
}

// Objects opens the repository's object store once and returns it.
func (r *Repo) Objects() (*Objects, error) {
	r.objOnce.Do(func() {
		o := &Objects{root: r.Root, objDir: filepath.Join(r.CommonDir, "objects"), refDir: r.CommonDir}
		if err := o.open(); err != nil {
			r.objErr = err
			return
		}
		r.obj = o
	})
	return r.obj, r.objErr
}

// largeObject is the size from which go-git reads an object as a stream
// instead of whole into memory (and prsm's own loose reads leave it to
// go-git): a blob over the size limit is then hashed as it streams
// (blobContent), and never held whole.
const largeObject = 4 << 20

// objectCache bounds go-git's cache of decoded objects (its default is
// 96 MiB), which the server's resident size is measured against.
const objectCache = 32 * cache.MiByte

func (o *Objects) open() error {
	// The common git dir holds the objects and refs of every worktree.
	// Pack files stay open between reads (KeepDescriptors): by default
	// go-git opens the pack again for every object, which was most of a
	// 100-file rewind's planning in a trace.
	objCache := cache.NewObjectLRU(objectCache)
	st := filesystem.NewStorageWithOptions(osfs.New(o.refDir), objCache, filesystem.Options{KeepDescriptors: true, LargeObjectThreshold: largeObject})
	// The storage itself, not go-git's Repository: git.Open refuses every
	// repository whose config lists an extension go-git does not
	// implement as a whole git (worktreeConfig, which sparse-checkout
	// sets; partialClone, of blobless clones; preciousObjects), though
	// none changes how objects and refs are stored. HEAD is what it
	// checked for a repository.
	if _, err := st.Reference(plumbing.HEAD); err != nil {
		st.Close()
		return fmt.Errorf("open objects of %s: %w", o.root, err)
	}
	if err := storedAsGoGitReads(st); err != nil {
		st.Close()
		return fmt.Errorf("open objects of %s: %w", o.root, err)
	}
	o.close()
	o.storage = st
	for _, dir := range alternates(o.objDir) {
		o.alts = append(o.alts, filesystem.NewStorageWithOptions(osfs.New(filepath.Dir(dir)), objCache,
			filesystem.Options{KeepDescriptors: true, LargeObjectThreshold: largeObject}))
	}
	return nil
}

// close closes the store and its alternates.
func (o *Objects) close() {
	if o.storage != nil {
		o.storage.Close()
	}
	for _, a := range o.alts {
		a.Close()
	}
	o.storage, o.alts = nil, nil
}

// stores are the object store and then its alternates.
func (o *Objects) stores() []*filesystem.Storage {
	return append([]*filesystem.Storage{o.storage}, o.alts...)
}

// maxAlternateDepth is how deep alternates of alternates are followed,
// as git does.
const maxAlternateDepth = 5

// alternates returns the object directories objects/info/alternates of
// objDir names, and theirs in turn, each once (nearest first; which
// store an object is read from does not change its bytes). go-git
// follows them itself, but opens each one anew (and reads its pack
// index) on every object it does not find at home, which made a file
// read in a --shared clone a hundred times slower. A path relative to
// an object directory is taken from it, as git does; one that does not
// end in "objects" (go-git finds objects only there) or that is not a
// directory is left out, and objects only it holds are not found.
func alternates(objDir string) []string {
	var out []string
	seen := map[string]bool{filepath.Clean(objDir): true}
	level := []string{objDir}
	for depth := 0; depth < maxAlternateDepth && len(level) > 0; depth++ {
		var next []string
		for _, dir := range level {
			b, err := os.ReadFile(filepath.Join(dir, "info", "alternates"))
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(b), "\n") {
				line = strings.TrimSpace(line)
				if line == "" || line[0] == '#' {
					continue
				}
				if line[0] == '"' {
					if uq, err := strconv.Unquote(line); err == nil {
						line = uq
					}
				}
				if !filepath.IsAbs(line) {
					line = filepath.Join(dir, line)
				}
				line = filepath.Clean(line)
				if seen[line] || filepath.Base(line) != "objects" {
					continue
				}
				seen[line] = true
				if fi, err := os.Stat(line); err != nil || !fi.IsDir() {
					continue
				}
				out = append(out, line)
				next = append(next, line)
			}
		}
		level = next
	}
	return out
}

// storedAsGoGitReads refuses the repositories whose objects or refs are
// stored in a way go-git cannot read: SHA-256 object names
// (extensions.objectFormat, compatObjectFormat) and refs in a reftable
// (extensions.refStorage). Every other extension git knows of leaves
// objects and refs as they are.
func storedAsGoGitReads(st *filesystem.Storage) error {
	cfg, err := st.Config()
	if err != nil {
		return err
	}
	if cfg.Raw == nil || !cfg.Raw.HasSection("extensions") {
		return nil
	}
	for _, opt := range cfg.Raw.Section("extensions").Options {
		v := strings.ToLower(opt.Value)
		switch strings.ToLower(opt.Key) {
		case "objectformat":
			if v != "sha1" {
				return fmt.Errorf("the repository names its objects with %s; prsm reads SHA-1 repositories only", opt.Value)
			}
		case "compatobjectformat":
			return fmt.Errorf("the repository keeps %s object names beside its own; prsm reads SHA-1 repositories only", opt.Value)
		case "refstorage":
			if v != "files" {
				return fmt.Errorf("the repository keeps its refs in a %s; prsm reads refs stored as files only", opt.Value)
			}
		}
	}
	return nil
}

// retry runs fn, and once more after reopening the store when an object
// was not found (it may have moved into a new pack).
func (o *Objects) retry(fn func() error) error {
	err := fn()
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		if oerr := o.open(); oerr != nil {
			return err
		}
		err = fn()
	}
	return err
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
func (o *Objects) ReadFile(commit, path string) (f File, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	err = o.retry(func() error {
		var err error
		f, err = o.readFile(commit, path)
		return err
	})
	return f, err
}

// HasFile reports whether commit has a file (not a directory) at path,
// without reading the file.
func (o *Objects) HasFile(commit, path string) (ok bool, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	err = o.retry(func() error {
		_, err := o.findFile(commit, path)
		if errors.Is(err, ErrNoFile) {
			return nil
		}
		ok = err == nil
		return err
	})
	return ok, err
}

// maxCommitTrees bounds the commits whose root tree findFile remembers.
const maxCommitTrees = 1024

// findFile returns the tree entry of the file at path in commit, walking
// down from its root tree through the tree cache.
func (o *Objects) findFile(commit, path string) (*object.TreeEntry, error) {
	id := plumbing.NewHash(commit)
	h, ok := o.commitTrees[id]
	if !ok {
		c, err := object.GetCommit(o.reader(), id)
		if err != nil {
			return nil, fmt.Errorf("read commit %s: %w", commit, err)
		}
		if o.commitTrees == nil || len(o.commitTrees) >= maxCommitTrees {
			o.commitTrees = map[plumbing.Hash]plumbing.Hash{}
		}
		h = c.TreeHash
		o.commitTrees[id] = h
	}
	for {
		name, rest, dir := strings.Cut(path, "/")
		t, err := o.tree(h)
		if err != nil {
			return nil, err
		}
		ent, ok := t.find(name)
		switch {
		case !ok:
			return nil, ErrNoFile
		case dir:
			if ent.Mode != filemode.Dir {
				return nil, ErrNoFile
			}
			h, path = ent.Hash, rest
		case !ent.Mode.IsFile():
			return nil, ErrNoFile // a directory or submodule
		default:
			return &ent, nil
		}
	}
}

func (o *Objects) readFile(commit, path string) (File, error) {
	ent, err := o.findFile(commit, path)
	if err != nil {
		return File{}, err
	}
	b, err := o.blobContent(ent.Hash)
	if err != nil {
		return File{}, fmt.Errorf("read blob of %s: %w", path, err)
	}
	return File{Mode: uint32(ent.Mode), Content: b}, nil
}

// blobContent reads the blob h: its bytes, or for a blob over the size
// limit a stub (bigfile), hashed as the blob streams past and never held
// whole; the blob is then remembered as a place to copy that content
// from. Callers hold o.mu.
func (o *Objects) blobContent(h plumbing.Hash) ([]byte, error) {
	blob, err := object.GetBlob(o.reader(), h)
	if err != nil {
		return nil, err
	}
	rd, err := blob.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	if blob.Size <= bigfile.Limit() {
		// A stub here is one prsm wrote into a checkpoint's tree: it
		// stands for its big file, as it did when it was written. One
		// buffer of the blob's size: io.ReadAll grows by doubling.
		b := make([]byte, blob.Size)
		if _, err := io.ReadFull(rd, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	id, err := bigfile.HashReader(rd, blob.Size)
	if err != nil {
		return nil, err
	}
	bigfile.RememberBlob(id, func() (io.ReadCloser, int64, error) { return o.openBlob(h) })
	return bigfile.Stub(bigfile.Info{Size: blob.Size, ID: id}), nil
}

// openBlob opens the blob h for a stream read, holding o.mu until the
// reader is closed.
func (o *Objects) openBlob(h plumbing.Hash) (io.ReadCloser, int64, error) {
	o.mu.Lock()
	blob, err := object.GetBlob(o.reader(), h)
	if err != nil {
		o.mu.Unlock()
		return nil, 0, err
	}
	rd, err := blob.Reader()
	if err != nil {
		o.mu.Unlock()
		return nil, 0, err
	}
	return &lockedReader{ReadCloser: rd, unlock: o.mu.Unlock}, blob.Size, nil
}

// lockedReader lets go of a lock when it is closed.
type lockedReader struct {
	io.ReadCloser
	unlock func()
	once   stdsync.Once
}

func (r *lockedReader) Close() error {
	err := r.ReadCloser.Close()
	r.once.Do(r.unlock)
	return err
}
