package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/prsm-dev/prsm"
)

func TestBlobRoundTripAndDedup(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	q := db.Q()
	for _, tc := range []struct {
		data []byte
		hash string
	}{
		{[]byte("hello"), "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"},
		{[]byte{}, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{nil, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	} {
		for range 2 {
			h, err := PutBlob(ctx, q, tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if h != tc.hash {
				t.Fatalf("PutBlob(%q) = %s, want %s", tc.data, h, tc.hash)
			}
		}
		got, err := GetBlob(ctx, q, tc.hash)
		if err != nil {
			t.Fatal(err)
		}
		if got == nil || !bytes.Equal(got, tc.data) {
			t.Fatalf("GetBlob = %#v, want %q", got, tc.data)
		}
		ok, err := HasBlob(ctx, q, tc.hash)
		if err != nil || !ok {
			t.Fatalf("HasBlob = %v, %v; want true", ok, err)
		}
		if got, want := count(t, q, "SELECT COUNT(*) FROM blobs WHERE hash = ?", tc.hash), 1; got != want {
			t.Fatalf("rows for %s = %d, want %d", tc.hash, got, want)
		}
	}
	if got, want := count(t, q, "SELECT COUNT(*) FROM blobs"), 2; got != want {
		t.Fatalf("blob rows = %d, want %d", got, want)
	}

	missing := HashBlob([]byte("never stored"))
	if _, err := GetBlob(ctx, q, missing); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("GetBlob(missing) error = %v, want ErrNotFound", err)
	}
	ok, err := HasBlob(ctx, q, missing)
	if err != nil || ok {
		t.Fatalf("HasBlob(missing) = %v, %v; want false, nil", ok, err)
	}
}

// storedBlob returns how a blob is kept in its row.
func storedBlob(t *testing.T, q Querier, hash string) (encoding string, size, stored int) {
	t.Helper()
	err := q.QueryRowContext(context.Background(),
		"SELECT encoding, size, length(data) FROM blobs WHERE hash = ?", hash).Scan(&encoding, &size, &stored)
	if err != nil {
		t.Fatal(err)
	}
	return encoding, size, stored
}

func TestBlobCompression(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	q := db.Q()

	text := bytes.Repeat([]byte("func main() { fmt.Println(\"hello, world\") }\n"), 2000)
	h, err := PutBlob(ctx, q, text)
	if err != nil {
		t.Fatal(err)
	}
	enc, size, stored := storedBlob(t, q, h)
	if enc != encodingZstd || size != len(text) || stored >= len(text)/10 {
		t.Fatalf("compressible blob stored as %s, size %d, %d bytes; want zstd, %d, far fewer bytes", enc, size, stored, len(text))
	}
	got, err := GetBlob(ctx, q, h)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, text) {
		t.Fatal("compressed blob did not round-trip")
	}

	random := make([]byte, 8192)
	rand.Read(random)
	h, err = PutBlob(ctx, q, random)
	if err != nil {
		t.Fatal(err)
	}
	enc, size, stored = storedBlob(t, q, h)
	if enc != encodingRaw || size != len(random) || stored != len(random) {
		t.Fatalf("random blob stored as %s, size %d, %d bytes; want raw, %d, %d", enc, size, stored, len(random), len(random))
	}
	got, err = GetBlob(ctx, q, h)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, random) {
		t.Fatal("raw blob did not round-trip")
	}
}

func TestBlobCorruptionDetected(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	q := db.Q()

	raw, err := PutBlob(ctx, q, []byte("short"))
	if err != nil {
		t.Fatal(err)
	}
	zipped, err := PutBlob(ctx, q, bytes.Repeat([]byte("abcdefgh"), 1000))
	if err != nil {
		t.Fatal(err)
	}
	if enc, _, _ := storedBlob(t, q, zipped); enc != encodingZstd {
		t.Fatalf("setup: blob stored as %s, want zstd", enc)
	}
	zipped2, err := PutBlob(ctx, q, bytes.Repeat([]byte("12345678"), 1000))
	if err != nil {
		t.Fatal(err)
	}
	var other []byte
	if err := q.QueryRowContext(ctx, "SELECT data FROM blobs WHERE hash = ?", zipped2).Scan(&other); err != nil {
		t.Fatal(err)
	}

	tamper := func(hash string, data []byte) {
		t.Helper()
		if _, err := q.ExecContext(ctx, "UPDATE blobs SET data = ? WHERE hash = ?", data, hash); err != nil {
			t.Fatal(err)
		}
	}
	tamper(raw, []byte("shorT"))               // same length, different bytes
	tamper(zipped, other)                      // a valid zstd frame of other content
	tamper(zipped2, []byte("not zstd at all")) // not a frame
	for _, h := range []string{raw, zipped, zipped2} {
		if _, err := GetBlob(ctx, q, h); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("GetBlob(tampered %s) error = %v, want ErrCorrupt", h[:8], err)
		}
	}
}

// TestPutEncoded: content encoded ahead is stored exactly as PutBlob
// stores it (same hash, encoding and bytes), once; a zero Encoded is
// refused and stores nothing.
func TestPutEncoded(t *testing.T) {
	ctx := context.Background()
	q := openTestDB(t).Q()
	for _, data := range [][]byte{
		bytes.Repeat([]byte("line of text\n"), 500), // compressed
		{0x00, 0x01, 0x02},                          // raw: zstd would not shrink it
		{},
	} {
		b := EncodeBlob(data)
		if b.Hash != HashBlob(data) {
			t.Fatalf("EncodeBlob hash = %s, want %s", b.Hash, HashBlob(data))
		}
		for range 2 {
			if err := PutEncoded(ctx, q, b); err != nil {
				t.Fatal(err)
			}
		}
		got, err := GetBlob(ctx, q, b.Hash)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("GetBlob = %q, %v; want %q", got, err, data)
		}
		enc, size, stored := storedBlob(t, q, b.Hash)
		if enc != b.enc || size != len(data) || stored != len(b.stored) {
			t.Fatalf("stored as %s, %d, %d bytes; want %s, %d, %d", enc, size, stored, b.enc, len(data), len(b.stored))
		}
	}
	if n := count(t, q, "SELECT COUNT(*) FROM blobs"); n != 3 {
		t.Fatalf("blob rows = %d, want 3", n)
	}
	if err := PutEncoded(ctx, q, Encoded{Hash: HashBlob([]byte("x"))}); err == nil {
		t.Fatal("PutEncoded of a zero Encoded: no error")
	}
	if n := count(t, q, "SELECT COUNT(*) FROM blobs"); n != 3 {
		t.Fatalf("blob rows after the refused put = %d, want 3", n)
	}
}
