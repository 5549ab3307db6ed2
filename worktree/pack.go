package worktree

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/klauspost/compress/zlib"
)

// prsm writes its objects as packs, each kept by a .keep file from
// before git can see it until the refs that reach its objects are set
// (Kept.Release). Between an object's write and its ref a `git gc
// --prune=now` deletes every unreachable loose object, and a repack drops
// the unreachable objects of every pack but a kept one; git prune never
// touches packed objects. The pack stays once it is released: its objects
// are then reachable, and written loose they could be deleted by a gc
// that had walked the refs before they were set (git prune-packed even
// deletes loose objects a kept pack also holds). So that packs do not
// pile up (git gc --auto repacks the whole repository beyond 50), a
// flush folds prsm's packs of its size into its own once there are a few
// (foldCandidates): their number grows with the logarithm of what prsm
// wrote.
//
// prsm reads the objects of its packs itself (packedObject): go-git finds
// a new pack only once it reads the index of every pack again, which in a
// large repository costs far more than the flush.

// ownPack is a pack this process wrote: a flush's objects (WriteKept) or
// one large blob (Batch.add).
type ownPack struct {
	name string   // its path less ".pack"
	f    *os.File // the pack, open for reads (packedObject)
	ids  []plumbing.Hash
	raw  int64 // the sizes of its objects, summed
	// kept: its .keep file is there; Release takes it away once refs
	// reach its objects. A kept pack is never folded.
	kept bool
	// large: one blob over largeObject (Batch.add), never folded.
	large bool
	ents  []ownEntry // as written, until addOwn takes them
}

// packEntry is where an object of an own pack is.
type packEntry struct {
	pack *ownPack
	typ  plumbing.ObjectType
	size int64
	off  int64 // of its deflated body
	clen int64 // the deflated body's length
}

// foldMax bounds what one flush folds: the objects of the packs it folds
// are read into memory.
const foldMax = 32 << 20

// keepLine is the content of the .keep files o writes: git shows it, and
// a start of the same workspace's server removes the ones a crash left
// (ReleaseKeeps). Another workspace of the same repository (a linked
// worktree with its own prsm) writes its own.
func (o *Objects) keepLine() string { return "prsm checkpoint objects of " + o.root + "\n" }

// Kept is a pack of prsm's objects held by a .keep file: no git gc drops
// its objects, reachable or not, until Release.
type Kept struct {
	o *Objects
	p *ownPack
}

// Release takes the pack's .keep file away: call it once refs reach its
// objects. A Kept of no objects has nothing to release.
func (k *Kept) Release() error {
	if k == nil || k.p == nil {
		return nil
	}
	k.o.mu.Lock()
	defer k.o.mu.Unlock()
	return k.o.unkeep(k.p)
}

// unkeep removes p's .keep file. Callers hold o.mu.
func (o *Objects) unkeep(p *ownPack) error {
	if !p.kept {
		return nil
	}
	if err := os.Remove(p.name + ".keep"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("release pack %s: %w", filepath.Base(p.name), err)
	}
	p.kept = false
	return nil
}

// WriteKept stores objects as one new pack, kept until the returned
// Kept's Release, and folds prsm's smaller packs into it (see
// foldCandidates). Every object goes in, even one the repository holds
// already: a copy no ref reaches could be pruned before the ref is set.
// The objects are read back at once, from the pack itself.
func (o *Objects) WriteKept(objs []Object) (*Kept, error) {
	o.writeMu.Lock()
	defer o.writeMu.Unlock()
	seen := make(map[plumbing.Hash]bool, len(objs))
	all := make([]Object, 0, len(objs))
	var raw int64
	for _, ob := range objs {
		if !seen[ob.Hash] {
			seen[ob.Hash] = true
			all = append(all, ob)
			raw += int64(len(ob.Body))
		}
	}
	if len(all) == 0 {
		return &Kept{}, nil
	}
	o.mu.Lock()
	o.dropVanished()
	folds := o.foldCandidates(raw)
	entries := make([][]packEntry, len(folds))
	for i, p := range folds {
		for _, id := range p.ids {
			entries[i] = append(entries[i], o.packed[id])
		}
	}
	o.mu.Unlock()
	// Their objects are read without o.mu: only a writer (this one,
	// under writeMu) closes a pack's file.
	folded := folds[:0]
	for i, p := range folds {
		var add []Object
		ok := true
		for j, e := range entries[i] {
			id := p.ids[j]
			if seen[id] {
				continue
			}
			body, err := e.read()
			if err != nil {
				ok = false // left as it is
				break
			}
			add = append(add, Object{Hash: id, Type: e.typ, Body: body})
		}
		if !ok {
			continue
		}
		for _, ob := range add {
			seen[ob.Hash] = true
			all = append(all, ob)
		}
		folded = append(folded, p)
	}
	p, err := o.writePack(all, true)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.addOwn(p)
	var errs []error
	for _, f := range folded {
		if f.name == p.name {
			continue
		}
		if err := o.removeOwn(f); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		// The new pack holds their objects: a pack left over costs
		// room only.
		return &Kept{o: o, p: p}, fmt.Errorf("remove folded packs: %w", err)
	}
	return &Kept{o: o, p: p}, nil
}

// foldCandidates are the packs of this process a new pack of raw bytes
// takes in, tiered by size: a pack's level is how many times foldBase
// times a power of foldTier its bytes reach (level), and when foldTier-1
// packs of the new pack's level wait, it takes them in and climbs to the
// level of what it then holds, where the same goes on. So a flush
// usually writes its own objects only, each object is rewritten about
// log(foldTier) of what prsm wrote times, and at most foldTier-1 packs
// wait at each level. Kept and large ones stay out. Callers hold o.mu.
func (o *Objects) foldCandidates(raw int64) []*ownPack {
	byLevel := map[int][]*ownPack{}
	for _, p := range o.own {
		if !p.kept && !p.large && p.raw <= foldMax {
			byLevel[level(p.raw)] = append(byLevel[level(p.raw)], p)
		}
	}
	var out []*ownPack
	for l := level(raw); len(byLevel[l]) >= foldTier-1; l = max(l+1, level(raw)) {
		for _, p := range byLevel[l] {
			if raw+p.raw > foldMax {
				return out
			}
			out = append(out, p)
			raw += p.raw
		}
		delete(byLevel, l)
	}
	return out
}

// foldTier and foldBase tier prsm's packs (foldCandidates).
const (
	foldTier = 4
	foldBase = 4 << 10
)

// level is the tier of a pack of raw bytes: 0 below foldBase, then one
// more for each foldTier times as much.
func level(raw int64) int {
	l := 0
	for n := int64(foldBase); raw >= n; n *= foldTier {
		l++
	}
	return l
}

// addOwn makes p's objects read from it. A pack of the same name (the
// same objects, written again) is the same pack. Callers hold o.mu.
func (o *Objects) addOwn(p *ownPack) {
	if o.packed == nil {
		o.packed = map[plumbing.Hash]packEntry{}
	}
	for i, q := range o.own {
		if q.name == p.name {
			q.f.Close()
			o.own = slices.Delete(o.own, i, i+1)
			break
		}
	}
	o.own = append(o.own, p)
	for _, e := range p.entries() {
		o.packed[e.id] = e.packEntry
	}
}

// removeOwn deletes a pack of this process whose objects another one
// holds now (folded), index first, as git does. Callers hold o.mu.
func (o *Objects) removeOwn(p *ownPack) error {
	o.forget(p)
	var errs []error
	for _, ext := range []string{".idx", ".pack"} {
		if err := os.Remove(p.name + ext); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// forget stops reading from p and closes it. Callers hold o.mu.
func (o *Objects) forget(p *ownPack) {
	for _, id := range p.ids {
		if e, ok := o.packed[id]; ok && e.pack == p {
			delete(o.packed, id)
		}
	}
	if i := slices.Index(o.own, p); i >= 0 {
		o.own = slices.Delete(o.own, i, i+1)
	}
	for id, q := range o.keptLarge {
		if q == p {
			delete(o.keptLarge, id)
		}
	}
	p.f.Close()
}

// dropVanished forgets the packs of this process that are gone (a git
// gc repacked their objects and deleted them): their open files would
// hold their disk space, and go-git finds the objects where git put
// them. Callers hold o.mu.
func (o *Objects) dropVanished() {
	for _, p := range slices.Clone(o.own) {
		if !p.present() {
			o.forget(p)
		}
	}
}

// present reports whether p's file is still the pack of its name.
func (p *ownPack) present() bool {
	open, err1 := p.f.Stat()
	now, err2 := os.Stat(p.name + ".pack")
	return err1 == nil && err2 == nil && os.SameFile(open, now)
}

// keepLarge writes a large blob as a kept pack of its own, unless one
// holds it already; ReleaseLarge releases it once a ref reaches a tree
// that names it. A pack of this process that holds it, released, is kept
// again rather than written again (a file edited back to a large content
// it had). Callers hold o.mu.
func (o *Objects) keepLarge(ob Object) error {
	if o.keptLarge[ob.Hash] != nil {
		return nil
	}
	if o.keptLarge == nil {
		o.keptLarge = map[plumbing.Hash]*ownPack{}
	}
	if e, ok := o.packed[ob.Hash]; ok && e.pack.large {
		if p := e.pack; p.present() {
			if !p.kept {
				if err := os.WriteFile(p.name+".keep", []byte(o.keepLine()), 0o644); err != nil {
					return fmt.Errorf("keep pack %s: %w", filepath.Base(p.name), err)
				}
				p.kept = true
			}
			o.keptLarge[ob.Hash] = p
			return nil
		}
		o.forget(e.pack)
	}
	p, err := o.writePack([]Object{ob}, true)
	if err != nil {
		return err
	}
	p.large = true
	o.addOwn(p)
	o.keptLarge[ob.Hash] = p
	return nil
}

// ReleaseLarge releases the kept packs of the large blobs that the trees
// among objs name (see Batch.add): call it once refs reach those trees.
func (o *Objects) ReleaseLarge(objs []Object) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.keptLarge) == 0 {
		return nil
	}
	var errs []error
	for _, ob := range objs {
		if ob.Type != plumbing.TreeObject {
			continue
		}
		for _, h := range treeEntryIDs(ob.Body) {
			if p := o.keptLarge[h]; p != nil {
				if err := o.unkeep(p); err != nil {
					errs = append(errs, err)
					continue
				}
				delete(o.keptLarge, h)
			}
		}
	}
	return errors.Join(errs...)
}

// ReleaseKeeps releases every pack this workspace's prsm keeps, those a
// crash left on disk included: call it at start, once the refs of every
// checkpoint are set (nothing of this workspace is being written then).
// It returns how many .keep files it removed.
func (o *Objects) ReleaseKeeps() (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, p := range o.own {
		p.kept = false
	}
	o.keptLarge = nil
	keeps, err := filepath.Glob(filepath.Join(o.objDir, "pack", "pack-*.keep"))
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, k := range keeps {
		b, err := os.ReadFile(k)
		if err != nil || string(b) != o.keepLine() {
			continue // git's, or another workspace's
		}
		if err := os.Remove(k); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// treeEntryIDs are the ids a tree's body names.
func treeEntryIDs(body []byte) []plumbing.Hash {
	var out []plumbing.Hash
	for len(body) > 0 {
		nul := bytes.IndexByte(body, 0)
		if nul < 0 || len(body) < nul+1+20 {
			break
		}
		var h plumbing.Hash
		copy(h[:], body[nul+1:nul+21])
		out = append(out, h)
		body = body[nul+21:]
	}
	return out
}

// writePack stores objs as one pack (with its index) in objects/pack:
// every object whole, deflated, no deltas, streamed to its file. Both
// files are synced to the disk, as git syncs packs, and renamed into
// place pack first and index last, as git does: a pack counts once its
// index is there. With keep, the .keep file (keepLine) is there before
// either. It does not take o.mu.
func (o *Objects) writePack(objs []Object, keep bool) (*ownPack, error) {
	dir := filepath.Join(o.objDir, "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("write pack: %w", err)
	}
	var sum plumbing.Hash
	var idx *idxfile.MemoryIndex
	var ents []ownEntry
	tmpPack, err := writeTempWith(dir, "tmp_pack_", true, func(w io.Writer) error {
		var err error
		sum, idx, ents, err = encodePack(w, objs)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("write pack: %w", err)
	}
	defer os.Remove(tmpPack) // nothing once renamed
	var idxBuf bytes.Buffer
	if _, err := idxfile.NewEncoder(&idxBuf).Encode(idx); err != nil {
		return nil, fmt.Errorf("write pack index: %w", err)
	}
	tmpIdx, err := writeTemp(dir, "tmp_idx_", idxBuf.Bytes(), true)
	if err != nil {
		return nil, fmt.Errorf("write pack index: %w", err)
	}
	defer os.Remove(tmpIdx)
	name := filepath.Join(dir, "pack-"+hex.EncodeToString(sum[:]))
	if keep {
		if err := os.WriteFile(name+".keep", []byte(o.keepLine()), 0o644); err != nil {
			return nil, fmt.Errorf("write pack keep: %w", err)
		}
	}
	if err := os.Rename(tmpPack, name+".pack"); err != nil {
		return nil, fmt.Errorf("write pack: %w", err)
	}
	if err := os.Rename(tmpIdx, name+".idx"); err != nil {
		return nil, fmt.Errorf("write pack index: %w", err)
	}
	f, err := os.Open(name + ".pack")
	if err != nil {
		return nil, fmt.Errorf("open pack: %w", err)
	}
	p := &ownPack{name: name, f: f, kept: keep, ids: make([]plumbing.Hash, len(ents))}
	for i, e := range ents {
		p.ids[i] = e.id
		p.raw += e.size
	}
	p.ents = ents
	return p, nil
}

// ownEntry is an object of a pack being written: where it went.
type ownEntry struct {
	id plumbing.Hash
	packEntry
}

// entries are p's objects, as writePack placed them (once: addOwn
// takes them).
func (p *ownPack) entries() []ownEntry {
	ents := p.ents
	p.ents = nil
	for i := range ents {
		ents[i].pack = p
	}
	return ents
}

// encodePack writes objs to w in git's pack format (version 2) and
// returns the pack's checksum (its trailer, which names it), its index
// and where each object's body went.
func encodePack(w io.Writer, objs []Object) (plumbing.Hash, *idxfile.MemoryIndex, []ownEntry, error) {
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
	ents := make([]ownEntry, 0, len(objs))
	for _, ob := range objs {
		crc.Reset()
		cw := &countingWriter{w: io.MultiWriter(bw, crc)}
		hdr := packEntryHeader(ob.Type, len(ob.Body))
		cw.Write(hdr)
		zw.Reset(cw)
		zw.Write(ob.Body)
		if err := zw.Close(); err != nil {
			return plumbing.ZeroHash, nil, nil, err
		}
		iw.Add(ob.Hash, uint64(pos), crc.Sum32())
		off := pos + int64(len(hdr))
		ents = append(ents, ownEntry{id: ob.Hash, packEntry: packEntry{typ: ob.Type, size: int64(len(ob.Body)), off: off, clen: pos + cw.n - off}})
		pos += cw.n
	}
	if err := bw.Flush(); err != nil {
		return plumbing.ZeroHash, nil, nil, err
	}
	var h plumbing.Hash
	copy(h[:], sum.Sum(nil))
	if _, err := w.Write(h[:]); err != nil {
		return plumbing.ZeroHash, nil, nil, err
	}
	if err := iw.OnFooter(h); err != nil {
		return plumbing.ZeroHash, nil, nil, err
	}
	idx, err := iw.Index()
	return h, idx, ents, err
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

// reader reads the object's body from its pack: whole, or streamed when
// it is large.
func (e packEntry) reader() (io.ReadCloser, error) {
	if e.size <= maxLooseRead {
		b, err := e.read()
		if err != nil {
			return nil, err
		}
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	zr, err := zlib.NewReader(bufio.NewReaderSize(io.NewSectionReader(e.pack.f, e.off, e.clen), 64<<10))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(e.pack.name), err)
	}
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(zr, e.size), zr}, nil
}

// read returns the object's body: its deflated bytes read at once, and
// inflated by a pooled reader (a new one, and a buffered reader of the
// pack, per object were most of a fold's time).
func (e packEntry) read() ([]byte, error) {
	z := make([]byte, e.clen)
	if _, err := e.pack.f.ReadAt(z, e.off); err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(e.pack.name), err)
	}
	b, err := inflateLimit(z, int(e.size))
	if err == nil && int64(len(b)) != e.size {
		err = fmt.Errorf("%w: %d bytes, not %d", ErrBadObject, len(b), e.size)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(e.pack.name), err)
	}
	return b, nil
}

// packedObject is an object of an own pack, for go-git's decoders: its
// body streams from the pack when read.
type packedObject struct {
	h plumbing.Hash
	e packEntry
}

func (p *packedObject) Hash() plumbing.Hash            { return p.h }
func (p *packedObject) Type() plumbing.ObjectType      { return p.e.typ }
func (p *packedObject) SetType(plumbing.ObjectType)    {}
func (p *packedObject) Size() int64                    { return p.e.size }
func (p *packedObject) SetSize(int64)                  {}
func (p *packedObject) Reader() (io.ReadCloser, error) { return p.e.reader() }
func (p *packedObject) Writer() (io.WriteCloser, error) {
	return nil, errors.New("a packed object is read only")
}
