package worktree

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/klauspost/compress/zlib"
)

// PackMin is the number of new objects from which WriteObjects writes one
// pack instead of loose objects, as git keeps a fetch of at least 100
// objects (transfer.unpackLimit) as a pack. Each loose object is a new
// file: on ext4 without a journal (the bench machine's disk) creating a
// file costs 0.6 ms of kernel time once many files were deleted in the
// last minutes (the allocator skips each recently deleted inode), and the
// flush of a Bash call that changed a thousand files wrote thousands of
// them. A pack is two files whatever it holds. Small flushes, the common
// case, stay loose, so packs do not pile up (git gc --auto folds them
// beyond 50).
var PackMin = 100

// writePack stores objs as one pack (with its index) in objects/pack:
// every object whole, deflated, no deltas. Both files are synced to the
// disk, as git syncs packs (not loose objects, nor does WriteObjects),
// and renamed into place pack first and index last, as git does: a pack
// counts once its index is there. go-git's index of packs is dropped, so
// reads find the new one.
func (o *Objects) writePack(objs []Object) error {
	dir := filepath.Join(o.objDir, "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	var pack bytes.Buffer
	sum, idx, err := encodePack(&pack, objs)
	if err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	var idxBuf bytes.Buffer
	if _, err := idxfile.NewEncoder(&idxBuf).Encode(idx); err != nil {
		return fmt.Errorf("write pack index: %w", err)
	}
	tmpPack, err := writeTemp(dir, "tmp_pack_", pack.Bytes(), true)
	if err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	defer os.Remove(tmpPack) // nothing once renamed
	tmpIdx, err := writeTemp(dir, "tmp_idx_", idxBuf.Bytes(), true)
	if err != nil {
		return fmt.Errorf("write pack index: %w", err)
	}
	defer os.Remove(tmpIdx)
	name := filepath.Join(dir, "pack-"+hex.EncodeToString(sum[:]))
	if err := os.Rename(tmpPack, name+".pack"); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	if err := os.Rename(tmpIdx, name+".idx"); err != nil {
		return fmt.Errorf("write pack index: %w", err)
	}
	o.mu.Lock()
	o.storage.Reindex()
	o.mu.Unlock()
	return nil
}

// encodePack writes objs to w in git's pack format (version 2) and
// returns the pack's checksum (its trailer, which names it) and its
// index.
func encodePack(w io.Writer, objs []Object) (plumbing.Hash, *idxfile.MemoryIndex, error) {
	sum := sha1.New()
	bw := bufio.NewWriterSize(io.MultiWriter(w, sum), 64<<10)
	var head [12]byte
	copy(head[:], "PACK")
	binary.BigEndian.PutUint32(head[4:], 2)
	binary.BigEndian.PutUint32(head[8:], uint32(len(objs)))
	bw.Write(head[:])
	iw := new(idxfile.Writer)
	iw.OnHeader(uint32(len(objs)))
	pos := int64(len(head))
	crc := crc32.NewIEEE()
	zw := zlibWriters.Get().(*zlib.Writer)
	defer zlibWriters.Put(zw)
	for _, ob := range objs {
		crc.Reset()
		cw := &countingWriter{w: io.MultiWriter(bw, crc)}
		cw.Write(packEntryHeader(ob.Type, len(ob.Body)))
		zw.Reset(cw)
		zw.Write(ob.Body)
		if err := zw.Close(); err != nil {
			return plumbing.ZeroHash, nil, err
		}
		iw.Add(ob.Hash, uint64(pos), crc.Sum32())
		pos += cw.n
	}
	if err := bw.Flush(); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	var h plumbing.Hash
	copy(h[:], sum.Sum(nil))
	if _, err := w.Write(h[:]); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	if err := iw.OnFooter(h); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	idx, err := iw.Index()
	return h, idx, err
}

// packEntryHeader is an entry's type and inflated size: 3 bits of type
// and 4 of size in the first byte, then 7 bits of size per byte, each
// byte but the last with its high bit set.
func packEntryHeader(t plumbing.ObjectType, size int) []byte {
	b := []byte{byte(t)<<4 | byte(size&0x0f)}
	size >>= 4
	for size > 0 {
		b[len(b)-1] |= 0x80
		b = append(b, byte(size&0x7f))
		size >>= 7
	}
	return b
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
