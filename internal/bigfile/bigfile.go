// Package bigfile owns the files over prsm's size limit: content that is
// never read whole into memory, never kept in the store and never made
// dense. Such a file stands in prsm's records, file states and checkpoint
// trees as a stub: a few hundred bytes that name its size and a hash of its
// content, computed as the file streams past (holes of a sparse file are
// not even read). Whatever prsm has in memory for a file is then either its
// real content (up to the limit) or a stub, and everything that compares,
// stores or hashes contents works on stubs unchanged. Only a write of a
// stub to disk needs the content: the package remembers where it last saw
// each big content (a worktree or workspace file, a git blob) and copies it
// from there, sparse, checking the hash as it goes; a content no longer
// found anywhere is an error (ErrNotKept), and the file being written is
// left as it was.
package bigfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
)

// DefaultLimit is the size above which a file is big: 100 MiB.
const DefaultLimit int64 = 100 << 20

var limit atomic.Int64

func init() { limit.Store(DefaultLimit) }

// Limit is the size limit in bytes: a file larger than it is big.
func Limit() int64 { return limit.Load() }

// SetLimit sets the size limit (n > 0) and returns a function that puts
// the previous one back, for tests.
func SetLimit(n int64) (restore func()) {
	if n <= 0 {
		n = DefaultLimit
	}
	old := limit.Swap(n)
	return func() { limit.Store(old) }
}

// magic starts every stub. Its NUL makes a stub binary for git and for
// prsm, so no diff or merge ever treats it as lines.
const magic = "\x00prsm-bigfile v1\n"

// Info is what a stub says of a big content.
type Info struct {
	Size int64  // in bytes
	ID   string // Hash of the content, lowercase hex
}

// Stub is the stand-in for a big content.
func Stub(in Info) []byte {
	return []byte(magic + "size " + strconv.FormatInt(in.Size, 10) + "\nid " + in.ID + "\n" +
		"This file was over prsm's size limit: prsm compares it by its size and a hash of its content, and keeps no copy of it.\n")
}

// Parse reads a stub; ok is false for any other content.
func Parse(content []byte) (in Info, ok bool) {
	if !bytes.HasPrefix(content, []byte(magic)) {
		return Info{}, false
	}
	lines := strings.Split(string(content[len(magic):]), "\n")
	if len(lines) < 2 {
		return Info{}, false
	}
	size, ok1 := strings.CutPrefix(lines[0], "size ")
	id, ok2 := strings.CutPrefix(lines[1], "id ")
	n, err := strconv.ParseInt(size, 10, 64)
	if !ok1 || !ok2 || err != nil || n < 0 || len(id) != 64 {
		return Info{}, false
	}
	if _, err := hex.DecodeString(id); err != nil {
		return Info{}, false
	}
	return Info{Size: n, ID: id}, true
}

// IsStub reports whether content is a stub.
func IsStub(content []byte) bool {
	_, ok := Parse(content)
	return ok
}

// HasMagic reports whether head starts like a stub: content that must
// stand as a stub whatever its size (a file that forges one is taken for
// what it is, a file prsm keeps no copy of, and never for the content a
// stub names).
func HasMagic(head []byte) bool { return bytes.HasPrefix(head, []byte(magic)) }

// blockSize is the unit the content hash is taken in: a block of zeros
// counts as one byte, whether it is a hole or written zeros, so that the
// hash of a content does not depend on how sparse its file is and a
// sparse copy keeps it.
const blockSize = 64 << 10

var zeros = make([]byte, blockSize)

// hasher computes Hash as blocks come.
type hasher struct {
	h hash.Hash
}

func newHasher(size int64) *hasher {
	h := sha256.New()
	var head [8]byte
	binary.BigEndian.PutUint64(head[:], uint64(size))
	h.Write([]byte("prsm-bigfile-v1\x00"))
	h.Write(head[:])
	return &hasher{h: h}
}

// block adds the next block (its full blockSize, or what is left of the
// content); nil means a block of zeros.
func (x *hasher) block(b []byte) {
	if b == nil || bytes.Equal(b, zeros[:len(b)]) {
		x.h.Write([]byte{0})
	} else {
		x.h.Write([]byte{1})
		x.h.Write(b)
	}
}

func (x *hasher) hex() string { return hex.EncodeToString(x.h.Sum(nil)) }

// blocks is how many blocks a content of size has.
func blocks(size int64) int64 { return (size + blockSize - 1) / blockSize }

// HashBytes is Hash of content held in memory.
func HashBytes(b []byte) string {
	x := newHasher(int64(len(b)))
	for off := 0; off < len(b); off += blockSize {
		x.block(b[off:min(off+blockSize, len(b))])
	}
	return x.hex()
}

// HashReader is Hash of a content of size read from r; it fails if r
// holds more or less.
func HashReader(r io.Reader, size int64) (string, error) {
	x := newHasher(size)
	buf := make([]byte, blockSize)
	for i := int64(0); i < blocks(size); i++ {
		n := int(min(blockSize, size-i*blockSize))
		if _, err := io.ReadFull(r, buf[:n]); err != nil {
			return "", fmt.Errorf("read content: %w", err)
		}
		x.block(buf[:n])
	}
	if n, _ := r.Read(buf[:1]); n > 0 {
		return "", ErrChanged
	}
	return x.hex(), nil
}

// ErrChanged means a content changed while it was read.
var ErrChanged = errors.New("content changed while it was read")

// ErrNotKept means prsm needs a big content it keeps no copy of, and no
// file it knows holds it any longer.
var ErrNotKept = errors.New("over the size limit, and no copy of this version is kept")
