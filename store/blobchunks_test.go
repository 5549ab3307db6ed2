package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/prsm-dev/prsm/internal/memtest"
)

// mixed is n bytes whose first half is random (stored raw) and the rest
// text (compressed).
func mixed(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range n / 2 {
		b[i] = byte(r.Uint32())
	}
	for i := n / 2; i < n; i++ {
		b[i] = "line of text\n"[i%13]
	}
	return b
}

// TestChunkedBlobs: a content of chunkFrom bytes and more is stored in
// chunks (its blobs row without data), each compressed when that shrinks
// it, whether put at once or encoded ahead; it reads back byte for byte,
// alone or with others; a damaged or missing chunk is ErrCorrupt; a
// sweep takes its chunks with it. A smaller content keeps its one row.
func TestChunkedBlobs(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	q := db.Q()
	small := mixed(chunkFrom-1, 1)
	big := mixed(chunkFrom+chunkSize/2+7, 2)
	ahead := mixed(2*chunkFrom, 3)
	hs, err := PutBlob(ctx, q, small)
	if err != nil {
		t.Fatal(err)
	}
	hb, err := PutBlob(ctx, q, big)
	if err != nil {
		t.Fatal(err)
	}
	enc := EncodeBlob(ahead)
	for range 2 { // a second put changes nothing
		if err := db.Tx(ctx, func(q Querier) error { return PutEncoded(ctx, q, enc) }); err != nil {
			t.Fatal(err)
		}
		if _, err := PutBlob(ctx, q, big); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		hash   string
		data   []byte
		chunks int
	}{{hs, small, 0}, {hb, big, 5}, {enc.Hash, ahead, 8}} {
		got, err := GetBlob(ctx, q, tc.hash)
		if err != nil || !bytes.Equal(got, tc.data) {
			t.Fatalf("GetBlob(%d bytes) = %d bytes, %v", len(tc.data), len(got), err)
		}
		_, size, stored := storedBlob(t, q, tc.hash)
		if n := count(t, q, "SELECT COUNT(*) FROM blob_chunks WHERE hash = ?", tc.hash); n != tc.chunks || size != len(tc.data) || (stored == 0) != (tc.chunks > 0) {
			t.Errorf("%d bytes stored as %d chunks (want %d), row of size %d holding %d bytes", len(tc.data), n, tc.chunks, size, stored)
		}
	}
	zipped := count(t, q, "SELECT COUNT(*) FROM blob_chunks WHERE hash = ? AND encoding = 'zstd'", hb)
	if zipped != 2 { // chunks 3 and 4; 2 starts random, which its sample tells
		t.Errorf("%d of 5 chunks compressed, want 2", zipped)
	}
	all, err := GetBlobs(ctx, q, []string{hs, hb, enc.Hash})
	if err != nil || !bytes.Equal(all[hs], small) || !bytes.Equal(all[hb], big) || !bytes.Equal(all[enc.Hash], ahead) {
		t.Fatalf("GetBlobs: %d contents, %v", len(all), err)
	}

	for _, damage := range []string{
		"UPDATE blob_chunks SET data = X'00' || data WHERE hash = ? AND seq = 1 AND encoding = 'raw'",
		"UPDATE blob_chunks SET data = substr(data, 2) WHERE hash = ? AND seq = 3",
		"DELETE FROM blob_chunks WHERE hash = ? AND seq = 4",
	} {
		if _, err := q.ExecContext(ctx, damage, hb); err != nil {
			t.Fatal(err)
		}
		if _, err := GetBlob(ctx, q, hb); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("after %q: GetBlob error %v, want ErrCorrupt", damage, err)
		}
		if _, err := GetBlobs(ctx, q, []string{hs, hb}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("after %q: GetBlobs error %v, want ErrCorrupt", damage, err)
		}
	}
	if n, _, err := db.SweepBlobs(ctx); err != nil || n != 3 {
		t.Fatalf("sweep: %d blobs, %v", n, err)
	}
	if n := count(t, q, "SELECT COUNT(*) FROM blob_chunks"); n != 0 {
		t.Errorf("%d chunks left after the sweep", n)
	}
}

// TestBigBlobMemory: storing a content just under the size limit (99
// MiB, random: stored raw, the worst case) costs the process a few
// chunks, and reading it back about one copy of it, the one GetBlob
// returns. Bound as one value, it raised the resident peak by 203 MiB to
// store (SQLite's copy of the value, and its pages), and by 198 MiB to
// read (SQLite's copy, the driver's, the one returned); now by 18 MiB and
// 116 to 132 MiB.
func TestBigBlobMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a 99 MiB content")
	}
	ctx := context.Background()
	db := openTestDB(t)
	data := make([]byte, 99<<20)
	r := rand.New(rand.NewPCG(4, 1))
	for i := 0; i < len(data); i += 8 {
		binary.LittleEndian.PutUint64(data[i:], r.Uint64())
	}
	var hash string
	var err error
	put, ok := memtest.Resident(func() { hash, err = PutBlob(ctx, db.Q(), data) })
	if !ok {
		t.Skip("no resident high-water mark here (not Linux, or the race detector)")
	}
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	get, _ := memtest.Resident(func() { got, err = GetBlob(ctx, db.Q(), hash) })
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("GetBlob: %d bytes, %v", len(got), err)
	}
	t.Logf("99 MiB content: resident peak %d MiB above the baseline to store, %d MiB to read", put>>20, get>>20)
	if put > 32<<20 {
		t.Errorf("storing 99 MiB raised the resident peak by %d MiB, want at most 32", put>>20)
	}
	if get > 99<<20+40<<20 {
		t.Errorf("reading 99 MiB back raised the resident peak by %d MiB, want at most 139 (the copy returned, and chunks)", get>>20)
	}
}
