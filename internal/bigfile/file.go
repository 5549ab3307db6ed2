package bigfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	stdsync "sync"

	"github.com/prsm-dev/prsm"
)

// extents finds the holes of a file with SEEK_DATA and SEEK_HOLE, so that
// the blocks of a sparse file that hold no data are never read. On a
// system or file system without them every block counts as data.
type extents struct {
	f          *os.File
	size       int64
	start, end int64 // the data run at or after the last block looked at
	none       bool  // no hole seeking: every block is read
}

func newExtents(f *os.File, size int64) *extents {
	return &extents{f: f, size: size, none: !canSeekHoles}
}

// hole reports whether [lo, hi) lies in a hole. Blocks are asked in order.
func (e *extents) hole(lo, hi int64) bool {
	if e.none {
		return false
	}
	if lo >= e.end {
		d, err := e.f.Seek(lo, seekData)
		switch {
		case isNoData(err):
			e.start, e.end = e.size, e.size+1 // only holes left
		case err != nil:
			e.none = true
			return false
		default:
			h, err := e.f.Seek(d, seekHole)
			if err != nil || h <= d {
				e.none = true
				return false
			}
			e.start, e.end = d, h
		}
	}
	return hi <= e.start
}

// HashFile is Hash of the content of f, whose size is size, read without
// reading its holes. It fails with ErrChanged if f no longer has size
// bytes.
func HashFile(f *os.File, size int64) (string, error) {
	return copyFile(nil, f, size, "")
}

// copyFile hashes the size bytes of src and, when dst is given, writes
// them there, leaving holes for blocks of zeros and truncating dst to
// size. With want, a content that does not hash to it fails with
// ErrChanged.
func copyFile(dst, src *os.File, size int64, want string) (string, error) {
	x := newHasher(size)
	ext := newExtents(src, size)
	buf := make([]byte, blockSize)
	for i := int64(0); i < blocks(size); i++ {
		lo := i * blockSize
		hi := min(lo+blockSize, size)
		if ext.hole(lo, hi) {
			x.block(nil)
			continue
		}
		b := buf[:hi-lo]
		if n, err := src.ReadAt(b, lo); n < len(b) {
			if err == io.EOF || err == nil {
				return "", ErrChanged
			}
			return "", fmt.Errorf("read %s: %w", src.Name(), err)
		}
		x.block(b)
		if dst != nil && !isZero(b) {
			if _, err := dst.WriteAt(b, lo); err != nil {
				return "", fmt.Errorf("write %s: %w", dst.Name(), err)
			}
		}
	}
	id := x.hex()
	if want != "" && id != want {
		return id, ErrChanged
	}
	if dst != nil {
		if err := dst.Truncate(size); err != nil {
			return id, fmt.Errorf("write %s: %w", dst.Name(), err)
		}
	}
	return id, nil
}

// copyReader is copyFile for a content read from r (a git blob).
func copyReader(dst *os.File, r io.Reader, size int64, want string) error {
	x := newHasher(size)
	buf := make([]byte, blockSize)
	for i := int64(0); i < blocks(size); i++ {
		lo := i * blockSize
		b := buf[:min(blockSize, size-lo)]
		if _, err := io.ReadFull(r, b); err != nil {
			return fmt.Errorf("read content: %w", err)
		}
		x.block(b)
		if !isZero(b) {
			if _, err := dst.WriteAt(b, lo); err != nil {
				return fmt.Errorf("write %s: %w", dst.Name(), err)
			}
		}
	}
	if x.hex() != want {
		return ErrChanged
	}
	if err := dst.Truncate(size); err != nil {
		return fmt.Errorf("write %s: %w", dst.Name(), err)
	}
	return nil
}

// sparseFrom is the size from which WriteSparse leaves holes.
const sparseFrom = 1 << 20

// WriteSparse writes data to f (new and empty) leaving a hole for every
// block of zeros, as the sparse copies of big files do: a sparse file
// the agent made (truncate -s 50M) is not made dense where prsm copies
// it. Small contents are written as they are.
func WriteSparse(f *os.File, data []byte) error {
	if len(data) < sparseFrom {
		_, err := f.Write(data)
		return err
	}
	for lo := 0; lo < len(data); lo += blockSize {
		b := data[lo:min(lo+blockSize, len(data))]
		if isZero(b) {
			continue
		}
		if _, err := f.WriteAt(b, int64(lo)); err != nil {
			return err
		}
	}
	return f.Truncate(int64(len(data)))
}

func isZero(b []byte) bool {
	for len(b) > 0 {
		n := min(len(b), len(zeros))
		for i := range b[:n] {
			if b[i] != 0 {
				return false
			}
		}
		b = b[n:]
	}
	return true
}

// seen is a file prsm read a big content from: its path and facts then.
type seen struct {
	info  fs.FileInfo
	ctime int64
	id    string
}

// maxRemembered bounds the files and blobs the registry keeps.
const maxRemembered = 4096

var reg struct {
	mu    stdsync.Mutex
	files map[string]seen                                 // by path
	blobs map[string]func() (io.ReadCloser, int64, error) // by content id
}

// Remember notes that the file at path (absolute), whose lstat facts are
// fi, holds the big content id: Known answers from it while the facts
// stay the same, and Write copies from it.
func Remember(path string, fi fs.FileInfo, id string) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if reg.files == nil || len(reg.files) >= maxRemembered {
		reg.files = map[string]seen{}
	}
	reg.files[path] = seen{info: fi, ctime: ctimeOf(fi), id: id}
}

// Known returns the content id of the file at path if Remember noted it
// with the same facts as fi: it is not read again.
func Known(path string, fi fs.FileInfo) (string, bool) {
	reg.mu.Lock()
	s, ok := reg.files[path]
	reg.mu.Unlock()
	if !ok || !sameFacts(s, fi) {
		return "", false
	}
	return s.id, true
}

func sameFacts(s seen, fi fs.FileInfo) bool {
	return os.SameFile(s.info, fi) && s.info.Size() == fi.Size() && s.info.ModTime().Equal(fi.ModTime()) &&
		s.info.Mode() == fi.Mode() && s.ctime == ctimeOf(fi)
}

// RememberBlob notes where the big content id can be read again: open
// returns a reader of it and its size (a git blob of the object store).
func RememberBlob(id string, open func() (io.ReadCloser, int64, error)) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if reg.blobs == nil || len(reg.blobs) >= maxRemembered {
		reg.blobs = map[string]func() (io.ReadCloser, int64, error){}
	}
	reg.blobs[id] = open
}

// Write writes the big content in names into dst, a new empty file,
// sparse: blocks of zeros stay holes. It copies from a file or blob
// Remember noted and checks the hash as it goes; a source that no longer
// holds the content is skipped. ErrNotKept: none holds it.
func Write(dst *os.File, in Info) error {
	reg.mu.Lock()
	var paths []string
	for p, s := range reg.files {
		if s.id == in.ID && s.info.Size() == in.Size {
			paths = append(paths, p)
		}
	}
	blob := reg.blobs[in.ID]
	reg.mu.Unlock()
	for _, p := range paths {
		if err := writeFrom(dst, p, in); err == nil {
			return nil
		}
	}
	if blob != nil {
		if rc, size, err := blob(); err == nil {
			if size == in.Size {
				err = copyReader(dst, rc, in.Size, in.ID)
			}
			rc.Close()
			if err == nil && size == in.Size {
				return nil
			}
		}
	}
	dst.Truncate(0)
	return fmt.Errorf("%s of content: %w", prsm.Size(in.Size), ErrNotKept)
}

func writeFrom(dst *os.File, path string, in Info) error {
	src, err := openNoFollow(path)
	if err != nil {
		return err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != in.Size {
		return ErrChanged
	}
	if err := dst.Truncate(0); err != nil {
		return err
	}
	_, err = copyFile(dst, src, in.Size, in.ID)
	return err
}
