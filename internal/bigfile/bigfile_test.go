//go:build unix

package bigfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestStubRoundTrip(t *testing.T) {
	in := Info{Size: 3 << 30, ID: HashBytes([]byte("x"))}
	s := Stub(in)
	got, ok := Parse(s)
	if !ok || got != in {
		t.Fatalf("Parse(Stub(%v)) = %v, %v", in, got, ok)
	}
	if !bytes.HasPrefix(s, []byte{0}) {
		t.Error("a stub must start with NUL, so that it is binary")
	}
	for _, b := range [][]byte{nil, []byte("size 3\nid x\n"), s[:len(magic)+4], append(append([]byte{}, s[:len(magic)]...), "size x\nid y\n"...)} {
		if _, ok := Parse(b); ok {
			t.Errorf("Parse(%q) took it", b)
		}
	}
	if !HasMagic(s) || HasMagic([]byte("plain")) || HasMagic(s[:len(magic)-1]) {
		t.Error("HasMagic: wrong answer")
	}
}

// sparseFile makes a file of size bytes with data only at the offsets
// given.
func sparseFile(t *testing.T, size int64, data map[int64][]byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sparse.bin")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	for off, b := range data {
		if _, err := f.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func allocated(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Blocks * 512
}

// The hash is that of the content: a sparse file, the same bytes written
// densely and the bytes in memory all hash alike, and another byte
// anywhere changes it.
func TestHashSparseDenseMemory(t *testing.T) {
	const size = 5<<20 + 123
	data := map[int64][]byte{0: []byte("head"), 3 << 20: []byte("middle"), size - 4: []byte("tail")}
	sp := sparseFile(t, size, data)
	mem := make([]byte, size)
	for off, b := range data {
		copy(mem[off:], b)
	}
	dense := filepath.Join(t.TempDir(), "dense.bin")
	if err := os.WriteFile(dense, mem, 0o644); err != nil {
		t.Fatal(err)
	}
	hash := func(p string) string {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		id, err := HashFile(f, size)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	want := HashBytes(mem)
	if got := hash(sp); got != want {
		t.Errorf("sparse file hashes to %s, its bytes to %s", got, want)
	}
	if got := hash(dense); got != want {
		t.Errorf("dense file hashes to %s, its bytes to %s", got, want)
	}
	if got, err := HashReader(bytes.NewReader(mem), size); err != nil || got != want {
		t.Errorf("HashReader = %s, %v; want %s", got, err, want)
	}
	mem[4<<20] = 1
	if HashBytes(mem) == want {
		t.Error("a changed byte kept the hash")
	}
	if HashBytes(mem[:size-1]) == HashBytes(append(mem[:size-1:size-1], 0)) {
		t.Error("a trailing zero byte kept the hash")
	}
	if _, err := HashReader(bytes.NewReader(mem), size-1); !errors.Is(err, ErrChanged) {
		t.Errorf("HashReader of a longer content: %v; want ErrChanged", err)
	}
}

// Write copies a big content from the file it was seen in, leaving its
// holes holes, and refuses once no file holds it.
func TestWriteSparseFromRemembered(t *testing.T) {
	const size = 1 << 30 // 1 GiB, almost all hole
	src := sparseFile(t, size, map[int64][]byte{12345: []byte("data"), size - 1: {7}})
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	id, err := HashFile(f, size)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Lstat(src)
	Remember(src, fi, id)
	if got, ok := Known(src, fi); !ok || got != id {
		t.Fatalf("Known = %q, %v", got, ok)
	}

	dstPath := filepath.Join(t.TempDir(), "copy.bin")
	dst, err := os.Create(dstPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(dst, Info{Size: size, ID: id}); err != nil {
		t.Fatal(err)
	}
	dst.Close()
	if n := allocated(t, dstPath); n > 1<<20 {
		t.Errorf("the copy of a sparse 1 GiB file takes %d bytes of disk: made dense", n)
	}
	g, _ := os.Open(dstPath)
	got, err := HashFile(g, size)
	g.Close()
	if err != nil || got != id {
		t.Fatalf("the copy hashes to %s, %v; want %s", got, err, id)
	}
	b := make([]byte, 4)
	g, _ = os.Open(dstPath)
	g.ReadAt(b, 12345)
	g.Close()
	if string(b) != "data" {
		t.Errorf("copy holds %q at 12345", b)
	}

	// The source changes: no copy of the old content is left.
	os.WriteFile(src, []byte("small now"), 0o644)
	dst2, _ := os.Create(filepath.Join(t.TempDir(), "again.bin"))
	defer dst2.Close()
	err = Write(dst2, Info{Size: size, ID: id})
	if !errors.Is(err, ErrNotKept) {
		t.Fatalf("Write after the source changed: %v; want ErrNotKept", err)
	}
	if fi, _ := dst2.Stat(); fi.Size() != 0 {
		t.Errorf("a failed Write left %d bytes", fi.Size())
	}
	now, _ := os.Lstat(src)
	if _, ok := Known(src, now); ok {
		t.Error("Known answered for a file whose facts changed")
	}
}

// A blob source serves when no file holds the content.
func TestWriteFromBlob(t *testing.T) {
	content := bytes.Repeat([]byte("0123456789abcdef"), 10000)
	id := HashBytes(content)
	RememberBlob(id, func() (io.ReadCloser, int64, error) {
		return io.NopCloser(bytes.NewReader(content)), int64(len(content)), nil
	})
	p := filepath.Join(t.TempDir(), "out")
	f, _ := os.Create(p)
	if err := Write(f, Info{Size: int64(len(content)), ID: id}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got, _ := os.ReadFile(p); !bytes.Equal(got, content) {
		t.Error("blob copy differs")
	}
}

// WriteSparse leaves the zeros of a large content as holes, and writes a
// small one as it is.
func TestWriteSparse(t *testing.T) {
	data := make([]byte, 8<<20)
	copy(data[3<<20:], "middle")
	data[len(data)-1] = 'z'
	p := filepath.Join(t.TempDir(), "f")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteSparse(f, data); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, _ := os.ReadFile(p)
	if !bytes.Equal(got, data) {
		t.Fatal("content differs")
	}
	if n := allocated(t, p); n > 1<<20 {
		t.Errorf("8 MiB of mostly zeros take %d bytes of disk", n)
	}
	small := filepath.Join(t.TempDir(), "s")
	g, _ := os.Create(small)
	WriteSparse(g, []byte("tiny\x00\x00"))
	g.Close()
	if got, _ := os.ReadFile(small); string(got) != "tiny\x00\x00" {
		t.Errorf("small content: %q", got)
	}
}
