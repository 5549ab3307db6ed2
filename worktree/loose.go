package worktree

import (
	"bytes"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	stdsync "sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/klauspost/compress/zlib"
)

// Object is a git object: its id, type and body. It is deflated only when
// written (in the background, by the flusher, into a pack): a
// checkpoint's tool call does not wait for zlib, which was a fifth of its
// CPU.
type Object struct {
	Hash plumbing.Hash
	Type plumbing.ObjectType
	Body []byte
}

func objectHeader(t plumbing.ObjectType, size int) []byte {
	return []byte(t.String() + " " + strconv.Itoa(size) + "\x00")
}

// Loose is the object's loose form before deflating: header and body (a
// pending row stores it so).
func (ob Object) Loose() []byte {
	return append(objectHeader(ob.Type, len(ob.Body)), ob.Body...)
}

// ErrBadObject means bytes given as an object are not one, or not the one
// their id names.
var ErrBadObject = errors.New("malformed git object")

// ParseLoose reads the object id from its loose form, deflated (a loose
// file's bytes) or not (Loose), and checks that the bytes hash to id.
func ParseLoose(id plumbing.Hash, data []byte) (Object, error) {
	if len(data) > 0 && data[0] == 0x78 { // a zlib stream; a header starts with a type name
		var err error
		if data, err = inflate(data); err != nil {
			return Object{}, fmt.Errorf("object %s: %w: %v", id, ErrBadObject, err)
		}
	}
	head, body, ok := bytes.Cut(data, []byte{0})
	typ, size, ok2 := strings.Cut(string(head), " ")
	t, terr := plumbing.ParseObjectType(typ)
	n, nerr := strconv.Atoi(size)
	if !ok || !ok2 || terr != nil || nerr != nil || n != len(body) {
		return Object{}, fmt.Errorf("object %s: %w: bad header", id, ErrBadObject)
	}
	if sha1.Sum(data) != id {
		return Object{}, fmt.Errorf("object %s: %w: its bytes hash to %x", id, ErrBadObject, sha1.Sum(data))
	}
	return Object{Hash: id, Type: t, Body: body}, nil
}

// inflate decompresses a zlib stream with a reader from the pool.
func inflate(data []byte) ([]byte, error) { return inflateLimit(data, -1) }

// inflateLimit is inflate that stops after max+1 bytes (max < 0: never).
func inflateLimit(data []byte, max int) ([]byte, error) {
	br := bytes.NewReader(data)
	zr, _ := zlibReaders.Get().(io.ReadCloser)
	if zr == nil {
		var err error
		if zr, err = zlib.NewReader(br); err != nil {
			return nil, err
		}
	} else if err := zr.(zlib.Resetter).Reset(br, nil); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.Grow(4 * len(data))
	var r io.Reader = zr
	if max >= 0 {
		r = io.LimitReader(zr, int64(max)+1)
	}
	if _, err := out.ReadFrom(r); err != nil {
		return nil, err
	}
	zlibReaders.Put(zr)
	return out.Bytes(), nil
}

// zlibReaders are reused, as zlibWriters are: a new inflater allocates
// about 40 KB.
var zlibReaders stdsync.Pool

// readLoose reads the loose object h straight from objects/xx/yyyy (and
// checks its bytes). go-git's own read of a loose object first resolves
// its path through billy's chroot, an lstat per path element: most of
// what a tool call's capture spent reading a base blob.
// An object that inflates past maxLooseRead is left to go-git, which
// streams it (largeObject): a loose file of a few MiB can hold GiBs.
func (o *Objects) readLoose(h plumbing.Hash) (Object, error) {
	hex := h.String()
	data, err := os.ReadFile(filepath.Join(o.objDir, hex[:2], hex[2:]))
	if err != nil {
		return Object{}, err
	}
	if len(data) > 0 && data[0] == 0x78 {
		if data, err = inflateMax(data, maxLooseRead); err != nil {
			return Object{}, fmt.Errorf("object %s: %w", h, err)
		}
	}
	return ParseLoose(h, data)
}

// maxLooseRead is the largest loose object readLoose inflates itself.
const maxLooseRead = largeObject

// errTooLarge: an object inflates past the size asked for.
var errTooLarge = errors.New("object larger than read here")

// inflateMax is inflate for a stream that must not inflate past max
// bytes (errTooLarge).
func inflateMax(data []byte, max int) ([]byte, error) {
	out, err := inflateLimit(data, max)
	if err != nil {
		return nil, err
	}
	if len(out) > max {
		return nil, errTooLarge
	}
	return out, nil
}

// zlibWriters are reused: a new deflate writer allocates about 600 KB of
// tables, which was 40% of a checkpoint's CPU. They are klauspost's zlib
// (the zstd of the store's blobs comes from the same module): it deflates
// a tree in about half the standard library's time, at the same size, and
// trees are most of what the flusher deflates.
var zlibWriters = stdsync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(io.Discard, zlib.BestSpeed)
	return w
}}

// Batch collects the new objects of one tree (and commit) in memory:
// hashing costs little, and a tree needs only its children's ids, so a
// checkpoint's ids are known before any file is written. Writing
// the objects (WriteKept) is what costs.
type Batch struct {
	o    *Objects
	objs []Object
	seen map[plumbing.Hash]bool
	err  error // of a large blob's write (add)
}

// NewBatch starts a batch of new objects.
func (o *Objects) NewBatch() *Batch {
	return &Batch{o: o, seen: map[plumbing.Hash]bool{}}
}

// Objects returns the batch's objects, in the order they were added.
func (b *Batch) Objects() []Object { return b.objs }

// add queues an object of type t with body and returns its id.
func (b *Batch) add(t plumbing.ObjectType, body []byte) plumbing.Hash {
	header := objectHeader(t, len(body))
	h := sha1.New()
	h.Write(header)
	h.Write(body)
	var id plumbing.Hash
	copy(id[:], h.Sum(nil))
	if b.seen[id] {
		return id
	}
	b.seen[id] = true
	ob := Object{Hash: id, Type: t, Body: body}
	if t == plumbing.BlobObject && len(body) > directBlob {
		// Written now, deflated straight into its file: held in a
		// pending row it took three more copies of its size (the
		// loose form, the row, sqlite's). No ref reaches it until the
		// row's commit is flushed: a pack of its own, kept until then
		// (ReleaseLarge), holds it against a git gc.
		if err := b.o.keepLarge(ob); err != nil && b.err == nil {
			b.err = err
		}
		return id
	}
	b.objs = append(b.objs, ob)
	return id
}

// directBlob is the size from which a batch writes a blob into the
// object store at once instead of keeping it for a pending row.
const directBlob = largeObject

// BuildTree adds to the batch the tree base (a tree id; "" for empty) with
// changes applied, and returns its id. Only the changed blobs and the
// trees on their paths are new, so the cost follows the number of
// changes, not the size of the repository. base may itself be staged.
func (b *Batch) BuildTree(base string, changes []TreeChange) (tree string, err error) {
	b.o.mu.Lock()
	defer b.o.mu.Unlock()
	err = b.o.retry(func() error {
		var err error
		tree, err = b.o.buildTree(b, base, changes)
		return err
	})
	if err == nil && b.err != nil {
		err = fmt.Errorf("write blob: %w", b.err)
	}
	return tree, err
}

// Commit adds to the batch a commit of tree (with an optional parent) by
// prsm, and returns its id.
func (b *Batch) Commit(tree, parent, message string, when time.Time) (string, error) {
	sig := object.Signature{Name: "prsm", Email: "prsm@localhost", When: when}
	c := &object.Commit{Author: sig, Committer: sig, Message: message, TreeHash: plumbing.NewHash(tree)}
	if parent != "" {
		c.ParentHashes = []plumbing.Hash{plumbing.NewHash(parent)}
	}
	obj := &plumbing.MemoryObject{}
	if err := c.Encode(obj); err != nil {
		return "", err
	}
	rd, err := obj.Reader()
	if err != nil {
		return "", err
	}
	body, err := io.ReadAll(rd)
	if err != nil {
		return "", err
	}
	return b.add(plumbing.CommitObject, body).String(), nil
}

// Stage makes objects readable by every read of o before they are written:
// a checkpoint is answered at once and its objects reach git's object
// store a moment later (WriteObjects). Stage and Unstage count, so an
// object two batches share stays readable until both are done.
func (o *Objects) Stage(objs []Object) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.staged == nil {
		o.staged = map[plumbing.Hash]*stagedObject{}
	}
	for _, ob := range objs {
		if s, ok := o.staged[ob.Hash]; ok {
			s.refs++
			continue
		}
		o.staged[ob.Hash] = &stagedObject{typ: ob.Type, body: ob.Body, refs: 1}
	}
}

// Unstage ends Stage for objects (written, or never to be).
func (o *Objects) Unstage(objs []Object) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, ob := range objs {
		if s, ok := o.staged[ob.Hash]; ok {
			if s.refs--; s.refs <= 0 {
				delete(o.staged, ob.Hash)
			}
		}
	}
}

type stagedObject struct {
	typ  plumbing.ObjectType
	body []byte
	refs int
}

// WriteObjects stores objects (WriteKept) and releases their pack at
// once: for objects a ref reaches already, or that no ref needs to.
func (o *Objects) WriteObjects(objs []Object) error {
	k, err := o.WriteKept(objs)
	if err != nil {
		return err
	}
	return k.Release()
}

// WriteLoose stores objects as loose objects, as git add and git commit
// write theirs: deflated, each in objects/xx/yyyy, not synced to the
// disk (git syncs packs, not loose objects). For a few objects of the
// user's own (prsm commit's trees and blobs): a pack's two syncs cost
// more than git's whole add. An object already there is left as it is.
func (o *Objects) WriteLoose(objs []Object) error {
	zw := zlibWriters.Get().(*zlib.Writer)
	defer zlibWriters.Put(zw)
	for _, ob := range objs {
		hex := ob.Hash.String()
		dir := filepath.Join(o.objDir, hex[:2])
		path := filepath.Join(dir, hex[2:])
		if _, err := os.Lstat(path); err == nil {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write object %s: %w", hex, err)
		}
		tmp, err := writeTempWith(dir, "tmp_obj_", false, func(w io.Writer) error {
			zw.Reset(w)
			zw.Write(objectHeader(ob.Type, len(ob.Body)))
			zw.Write(ob.Body)
			return zw.Close()
		})
		if err != nil {
			return fmt.Errorf("write object %s: %w", hex, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("write object %s: %w", hex, err)
		}
	}
	return nil
}

// writeTemp writes data to a new read-only temp file in dir (synced to
// the disk when sync is set) and returns its path, for the caller to
// rename into place. On an error nothing is left.
func writeTemp(dir, pattern string, data []byte, sync bool) (string, error) {
	return writeTempWith(dir, pattern, sync, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeTempWith is writeTemp with the content written by write.
func writeTempWith(dir, pattern string, sync bool, write func(io.Writer) error) (string, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	err = write(f)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o444)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// reader is the object store as prsm reads it: staged objects first, then
// those of the packs this process wrote (pack.go), then go-git's (loose
// and packed). Callers hold o.mu.
func (o *Objects) reader() storer.EncodedObjectStorer {
	return stagedReader{EncodedObjectStorer: o.storage, o: o}
}

type stagedReader struct {
	storer.EncodedObjectStorer
	o *Objects
}

func (r stagedReader) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if s, ok := r.o.staged[h]; ok {
		obj := &plumbing.MemoryObject{}
		obj.SetType(s.typ)
		obj.Write(s.body)
		if t != plumbing.AnyObject && obj.Type() != t {
			return nil, plumbing.ErrObjectNotFound
		}
		return obj, nil
	}
	if e, ok := r.o.packed[h]; ok {
		if t != plumbing.AnyObject && e.typ != t {
			return nil, plumbing.ErrObjectNotFound
		}
		return &packedObject{h: h, e: e}, nil
	}
	// Loose objects are read here; packed ones (and a loose one this
	// cannot read) by go-git.
	if ob, err := r.o.readLoose(h); err == nil {
		if t != plumbing.AnyObject && ob.Type != t {
			return nil, plumbing.ErrObjectNotFound
		}
		obj := &plumbing.MemoryObject{}
		obj.SetType(ob.Type)
		obj.Write(ob.Body)
		return obj, nil
	}
	if len(r.o.alts) == 0 {
		return r.EncodedObjectStorer.EncodedObject(t, h)
	}
	// With alternates, go-git's own search of them (slow: see
	// alternates) is never reached: each store is asked whether it has
	// the object first.
	for _, s := range r.o.stores() {
		if s.HasEncodedObject(h) == nil {
			return s.EncodedObject(t, h)
		}
	}
	return nil, plumbing.ErrObjectNotFound
}

func (r stagedReader) HasEncodedObject(h plumbing.Hash) error {
	if _, ok := r.o.staged[h]; ok {
		return nil
	}
	if _, ok := r.o.packed[h]; ok {
		return nil
	}
	err := r.EncodedObjectStorer.HasEncodedObject(h)
	for _, a := range r.o.alts {
		if !errors.Is(err, plumbing.ErrObjectNotFound) {
			break
		}
		err = a.HasEncodedObject(h)
	}
	return err
}
