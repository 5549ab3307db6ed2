package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	stdsync "sync"

	"github.com/klauspost/compress/zstd"
	"github.com/prsm-dev/prsm"
)

// Blob encodings, as stored in blobs.encoding.
const (
	encodingRaw  = "raw"
	encodingZstd = "zstd"
)

// One encoder and one decoder for the process: EncodeAll and DecodeAll are
// safe for concurrent use, and building them is not cheap.
var (
	zstdEncoder = stdsync.OnceValue(func() *zstd.Encoder {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(2))
		if err != nil {
			panic(fmt.Sprintf("zstd encoder: %v", err)) // only on invalid options
		}
		return e
	})
	zstdDecoder = stdsync.OnceValue(func() *zstd.Decoder {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(2))
		if err != nil {
			panic(fmt.Sprintf("zstd decoder: %v", err)) // only on invalid options
		}
		return d
	})
)

// HashBlob returns the hash under which PutBlob stores data: the lowercase
// hex sha256 of the raw bytes.
func HashBlob(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// blobCheckFirst is the size from which PutBlob asks whether a blob is
// stored before compressing it; a smaller one is compressed and inserted
// at once (the insert ignores a blob that is there), which costs less
// than the extra query.
const blobCheckFirst = 16 << 10

// PutBlob stores data under its hash and returns the hash. Storing content
// that is already there changes nothing. Empty content is a valid blob.
func PutBlob(ctx context.Context, q Querier, data []byte) (string, error) {
	hash := HashBlob(data)
	if len(data) >= blobCheckFirst {
		ok, err := HasBlob(ctx, q, hash)
		if err != nil {
			return "", err
		}
		if ok {
			return hash, nil
		}
	}
	if len(data) >= chunkFrom {
		return hash, putChunks(ctx, q, hash, data, nil)
	}
	return hash, PutEncoded(ctx, q, encode(data, hash))
}

// Content of chunkFrom bytes and more is stored in chunks of chunkSize
// (blob_chunks), each compressed or not on its own: SQLite then never holds
// more than a chunk of it in its own memory, where binding the whole
// content as one value cost a copy of its size, and reading it back two.
const (
	chunkSize = 1 << 20
	chunkFrom = 4 << 20
)

// encodingChunks marks an Encoded whose content goes to blob_chunks; its
// blobs row holds no data.
const encodingChunks = "chunks"

// chunk is one stored piece of a content: its encoding and bytes.
type chunk struct {
	enc  string
	data []byte
}

// encodeChunk is piece as it is stored: compressed into scratch when that
// makes it smaller, else piece itself. The result may share scratch.
func encodeChunk(piece, scratch []byte) chunk {
	if _, ok := compressedRoom(piece); ok {
		if z := zstdEncoder().EncodeAll(piece, scratch[:0]); len(z) < len(piece) {
			return chunk{encodingZstd, z}
		}
	}
	return chunk{encodingRaw, piece}
}

// putChunks stores data (chunkFrom bytes or more) under hash: its blobs
// row, without data, then its chunks, taken from encoded (encoded ahead)
// or encoded one at a time. A content stored already changes nothing.
func putChunks(ctx context.Context, q Querier, hash string, data []byte, encoded []chunk) error {
	return atomically(ctx, q, func(q Querier) error { return putChunksIn(ctx, q, hash, data, encoded) })
}

// atomically runs fn in a transaction: q's own, or one begun for it when
// q is the database (a content's row and its chunks are stored together
// or not at all).
func atomically(ctx context.Context, q Querier, fn func(q Querier) error) error {
	switch db := q.(type) {
	case *DB:
		return db.Tx(ctx, fn)
	case *sql.DB:
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return mapErr(err)
		}
		if err := fn(tx); err != nil {
			tx.Rollback()
			return err
		}
		return mapErr(tx.Commit())
	}
	return fn(q)
}

func putChunksIn(ctx context.Context, q Querier, hash string, data []byte, encoded []chunk) error {
	res, err := q.ExecContext(ctx, `INSERT INTO blobs (hash, encoding, size, data) VALUES (?, ?, ?, ?)
		ON CONFLICT (hash) DO NOTHING`, hash, encodingRaw, len(data), []byte{})
	if err != nil {
		return fmt.Errorf("put blob %s: %w", hash, mapErr(err))
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return mapErr(err) // stored already
	}
	var scratch []byte
	if encoded == nil {
		scratch = make([]byte, 0, chunkSize+chunkSize/8)
	}
	for seq, off := 0, 0; off < len(data); seq, off = seq+1, off+chunkSize {
		var c chunk
		if encoded != nil {
			c = encoded[seq]
		} else {
			c = encodeChunk(data[off:min(off+chunkSize, len(data))], scratch)
		}
		// The driver copies the bytes it binds: scratch is free again.
		if _, err := q.ExecContext(ctx, "INSERT INTO blob_chunks (hash, seq, encoding, data) VALUES (?, ?, ?, ?)",
			hash, seq, c.enc, c.data); err != nil {
			return fmt.Errorf("put blob %s: chunk %d: %w", hash, seq, mapErr(err))
		}
	}
	return nil
}

// Encoded is content made ready for the store (hashed and compressed) by
// EncodeBlob, for PutEncoded: that work, most of PutBlob's cost, can then
// be done ahead, outside the transaction that stores it.
type Encoded struct {
	Hash   string
	size   int
	enc    string
	stored []byte
	// chunks, for a content of chunkFrom bytes and more (enc is then
	// encodingChunks and stored the content): each chunk as stored.
	chunks []chunk
}

// EncodeBlob hashes and compresses data as PutBlob stores it.
func EncodeBlob(data []byte) Encoded { return encode(data, HashBlob(data)) }

func encode(data []byte, hash string) Encoded {
	if len(data) >= chunkFrom {
		// Each chunk that shrinks is a copy of its compressed bytes, one
		// that does not is data's own: all of them together take at most
		// data's size.
		b := Encoded{Hash: hash, size: len(data), enc: encodingChunks, stored: data}
		scratch := make([]byte, 0, chunkSize+chunkSize/8)
		for off := 0; off < len(data); off += chunkSize {
			c := encodeChunk(data[off:min(off+chunkSize, len(data))], scratch)
			if c.enc != encodingRaw {
				c.data = bytes.Clone(c.data)
			}
			b.chunks = append(b.chunks, c)
		}
		return b
	}
	enc, stored := encodingRaw, data
	if room, ok := compressedRoom(data); ok {
		// Room for the whole output: EncodeAll grew a nil one by
		// doubling, several times a large content's size in all.
		if z := zstdEncoder().EncodeAll(data, make([]byte, 0, room)); len(z) < len(data) {
			enc, stored = encodingZstd, z
		}
	}
	if stored == nil {
		stored = []byte{} // nil would bind as NULL
	}
	return Encoded{Hash: hash, size: len(data), enc: enc, stored: stored}
}

// sampleFrom is the size from which encode first compresses a sample of
// a content, and stores it raw when the sample does not shrink (media,
// archives, random bytes): compressing all of it would cost a copy of its
// size for nothing.
const sampleFrom = 1 << 20

// compressedRoom reports whether data is worth compressing, and the room
// to make for its compressed form: from a sample for a large content.
func compressedRoom(data []byte) (int, bool) {
	if len(data) < sampleFrom {
		return len(data)/2 + 1024, true
	}
	const n = 128 << 10
	z := zstdEncoder().EncodeAll(data[:n], make([]byte, 0, n))
	if len(z) >= n*9/10 {
		return 0, false
	}
	return int(int64(len(data))*int64(len(z))/n)*5/4 + 64<<10, true
}

// PutEncoded stores content EncodeBlob made ready, as PutBlob does.
func PutEncoded(ctx context.Context, q Querier, b Encoded) error {
	if b.enc == "" {
		return fmt.Errorf("put blob %s: not made by EncodeBlob", b.Hash)
	}
	if b.enc == encodingChunks {
		return putChunks(ctx, q, b.Hash, b.stored, b.chunks)
	}
	_, err := q.ExecContext(ctx, `INSERT INTO blobs (hash, encoding, size, data) VALUES (?, ?, ?, ?)
		ON CONFLICT (hash) DO NOTHING`, b.Hash, b.enc, b.size, b.stored)
	if err != nil {
		return fmt.Errorf("put blob %s: %w", b.Hash, mapErr(err))
	}
	return nil
}

// GetBlob returns the content stored under hash. It fails with
// prsm.ErrNotFound when there is none and with ErrCorrupt when the stored
// bytes no longer hash to it.
func GetBlob(ctx context.Context, q Querier, hash string) ([]byte, error) {
	var (
		enc    string
		size   int64
		stored sql.RawBytes
	)
	// RawBytes: the driver's copy of the value, not a second one made by
	// Scan. It is valid until the rows close, so a raw content is copied
	// once more, and a compressed one decoded from it.
	rows, err := q.QueryContext(ctx, "SELECT encoding, size, data FROM blobs WHERE hash = ?", hash)
	if err != nil {
		return nil, fmt.Errorf("get blob %s: %w", hash, mapErr(err))
	}
	defer rows.Close()
	if !rows.Next() {
		err := rows.Err()
		if err == nil {
			err = sql.ErrNoRows
		}
		return nil, fmt.Errorf("get blob %s: %w", hash, mapErr(err))
	}
	if err := rows.Scan(&enc, &size, &stored); err != nil {
		return nil, fmt.Errorf("get blob %s: %w", hash, mapErr(err))
	}
	if chunked(size, stored) {
		rows.Close()
		return getChunks(ctx, q, hash, size)
	}
	return decodeBlob(hash, enc, size, stored)
}

// chunked reports whether a blobs row of this size and stored data keeps
// its content in blob_chunks.
func chunked(size int64, stored []byte) bool { return size > 0 && len(stored) == 0 }

// gcEvery is how many chunks getChunks reads between two collections.
// The driver hands each chunk over in a new buffer: left to the collector's
// pace (it runs when the heap has doubled), those of one content piled up
// to another copy of its size before any was freed.
const gcEvery = 32

// getChunks reads the content stored in chunks under hash into one buffer
// of its size, a chunk at a time, and checks it against its hash.
func getChunks(ctx context.Context, q Querier, hash string, size int64) ([]byte, error) {
	if size > 1<<31 {
		return nil, fmt.Errorf("get blob %s: bad size %d: %w", hash, size, ErrCorrupt)
	}
	rows, err := q.QueryContext(ctx, "SELECT encoding, data FROM blob_chunks WHERE hash = ? ORDER BY seq", hash)
	if err != nil {
		return nil, fmt.Errorf("get blob %s: %w", hash, mapErr(err))
	}
	defer rows.Close()
	data := make([]byte, 0, size)
	for n := 0; rows.Next(); n++ {
		if n%gcEvery == gcEvery-1 {
			runtime.GC()
		}
		var (
			enc    string
			stored sql.RawBytes
		)
		if err := rows.Scan(&enc, &stored); err != nil {
			return nil, fmt.Errorf("get blob %s: %w", hash, mapErr(err))
		}
		switch {
		case enc == encodingRaw && int64(len(data)+len(stored)) <= size:
			data = append(data, stored...)
		case enc == encodingZstd:
			// Decoded into data's room; a chunk that decodes past the
			// size is corrupt (and stops the decoder there).
			out, err := zstdDecoder().DecodeAll(stored, data[len(data):len(data):cap(data)])
			if err != nil || len(out) > cap(data)-len(data) {
				return nil, fmt.Errorf("get blob %s: %w: chunk does not decode to its room: %v", hash, ErrCorrupt, err)
			}
			data = data[:len(data)+len(out)]
		default:
			return nil, fmt.Errorf("get blob %s: bad chunk (%q, %d bytes): %w", hash, enc, len(stored), ErrCorrupt)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("get blob %s: %w", hash, mapErr(err))
	}
	if int64(len(data)) != size || HashBlob(data) != hash {
		return nil, fmt.Errorf("get blob %s: content does not match its hash: %w", hash, ErrCorrupt)
	}
	return data, nil
}

// decodeBlob is the content of a blob row, checked against its hash;
// stored is the driver's bytes (copied or decoded, never kept).
func decodeBlob(hash, enc string, size int64, stored []byte) ([]byte, error) {
	data := stored
	var err error
	switch enc {
	case encodingRaw:
		data = bytes.Clone(data)
	case encodingZstd:
		if size < 0 || size > 1<<31 {
			return nil, fmt.Errorf("get blob %s: bad size %d: %w", hash, size, ErrCorrupt)
		}
		data, err = zstdDecoder().DecodeAll(stored, make([]byte, 0, size))
		if err != nil {
			return nil, fmt.Errorf("get blob %s: %w: %v", hash, ErrCorrupt, err)
		}
	default:
		return nil, fmt.Errorf("get blob %s: unknown encoding %q: %w", hash, enc, ErrCorrupt)
	}
	if int64(len(data)) != size || HashBlob(data) != hash {
		return nil, fmt.Errorf("get blob %s: content does not match its hash: %w", hash, ErrCorrupt)
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// BlobSize is the size of the content stored under hash, read without
// the content; prsm.ErrNotFound when there is none.
func BlobSize(ctx context.Context, q Querier, hash string) (int64, error) {
	var size int64
	if err := q.QueryRowContext(ctx, "SELECT size FROM blobs WHERE hash = ?", hash).Scan(&size); err != nil {
		return 0, fmt.Errorf("blob size %s: %w", hash, mapErr(err))
	}
	return size, nil
}

// HasBlob reports whether content is stored under hash.
func HasBlob(ctx context.Context, q Querier, hash string) (bool, error) {
	var one int
	err := q.QueryRowContext(ctx, "SELECT 1 FROM blobs WHERE hash = ?", hash).Scan(&one)
	if err != nil {
		if err = mapErr(err); errors.Is(err, prsm.ErrNotFound) {
			return false, nil
		}
		return false, fmt.Errorf("has blob %s: %w", hash, err)
	}
	return true, nil
}
