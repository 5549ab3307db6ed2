package worktree

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	stdsync "sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// looseWriter writes the objects of a checkpoint as git's loose objects.
// Objects are hashed and deflated in memory as they are added (a tree
// needs its children's ids, not their files), then written all at once by
// a few goroutines: each loose object costs a temp file and a rename, and
// done one after another (as go-git's storer does) they were most of a
// checkpoint's time. Objects already stored loose are skipped; one that
// is packed is written loose again, which git tolerates and gc folds.
type looseWriter struct {
	dir     string
	pending []looseObject
	seen    map[plumbing.Hash]bool
}

type looseObject struct {
	hash plumbing.Hash
	data []byte // deflated header and body
}

// looseWorkers is how many objects are written at once.
const looseWorkers = 8

// add queues an object of type t with body and returns its id.
func (w *looseWriter) add(t plumbing.ObjectType, body []byte) plumbing.Hash {
	header := []byte(t.String() + " " + strconv.Itoa(len(body)) + "\x00")
	h := sha1.New()
	h.Write(header)
	h.Write(body)
	var id plumbing.Hash
	copy(id[:], h.Sum(nil))
	if w.seen == nil {
		w.seen = map[plumbing.Hash]bool{}
	}
	if w.seen[id] {
		return id
	}
	w.seen[id] = true
	var b bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&b, zlib.BestSpeed)
	zw.Write(header)
	zw.Write(body)
	zw.Close()
	w.pending = append(w.pending, looseObject{hash: id, data: b.Bytes()})
	return id
}

// flush writes every queued object.
func (w *looseWriter) flush() error {
	objs := w.pending
	w.pending = nil
	if len(objs) == 0 {
		return nil
	}
	jobs := make(chan looseObject)
	errs := make(chan error, len(objs))
	var wg stdsync.WaitGroup
	for i := 0; i < min(looseWorkers, len(objs)); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range jobs {
				errs <- w.write(o)
			}
		}()
	}
	for _, o := range objs {
		jobs <- o
	}
	close(jobs)
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		if err != nil {
			all = append(all, err)
		}
	}
	return errors.Join(all...)
}

// write stores one object at objects/xx/yyyy..., through a temp file in
// the same directory and a rename, read-only as git makes them.
func (w *looseWriter) write(o looseObject) error {
	hex := o.hash.String()
	dir := filepath.Join(w.dir, hex[:2])
	p := filepath.Join(dir, hex[2:])
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("write object %s: %w", hex, err)
	}
	f, err := os.CreateTemp(dir, "tmp_obj_")
	if err != nil {
		return fmt.Errorf("write object %s: %w", hex, err)
	}
	_, err = f.Write(o.data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o444)
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write object %s: %w", hex, err)
	}
	return nil
}
