package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/prsm-dev/prsm"
)

// PendingObject is one git object of a pending row: its 20-byte id and
// its loose form (header and body; rows written before the checkpoint
// objects were deflated lazily hold it zlib-deflated).
type PendingObject struct {
	ID   [20]byte
	Data []byte
}

// Pending is a checkpoint's objects waiting to be written into the
// repository, and the refs to point at its commit once they are.
type Pending struct {
	Seq       int64
	SessionID string
	Commit    string
	Refs      []string
	Objects   []PendingObject
	// Bad is why the row could not be read (ErrCorrupt); its other
	// fields but Seq may then be empty. Such a row is set aside
	// (SetPendingAside), not written.
	Bad error
}

// Pending rows are bounded: each object's length is stored in 4 bytes,
// and a row is bound as one sqlite value, which must stay well under
// sqlite's limit of about 1 GB. Checkpoint objects of files over the size
// limit are stubs (bigfile), so real rows are far smaller.
const (
	maxPendingObject = 256 << 20
	maxPendingRow    = 512 << 20
)

// AddPending stores a checkpoint's objects and refs to write.
func AddPending(ctx context.Context, q Querier, p *Pending) error {
	refs, err := json.Marshal(p.Refs)
	if err != nil {
		return err
	}
	total, err := pendingSize(p.Objects, maxPendingObject, maxPendingRow)
	if err != nil {
		return fmt.Errorf("add pending objects: %w", err)
	}
	buf := make([]byte, 0, total) // never NULL, also with no objects (a named checkpoint of an unchanged tree)
	for _, o := range p.Objects {
		buf = append(buf, o.ID[:]...)
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(o.Data)))
		buf = append(buf, o.Data...)
	}
	res, err := q.ExecContext(ctx, `INSERT INTO pending_objects (session_id, commit_id, refs, objects) VALUES (?, ?, ?, ?)`,
		p.SessionID, p.Commit, string(refs), buf)
	if err != nil {
		return fmt.Errorf("add pending objects: %w", mapErr(err))
	}
	p.Seq, _ = res.LastInsertId()
	return nil
}

// pendingSize is the size of a row of objs, checked against the bounds
// (prsm.ErrInvalid past them).
func pendingSize(objs []PendingObject, maxObject, maxRow int) (int, error) {
	total := 0
	for _, o := range objs {
		if len(o.Data) > maxObject {
			return 0, fmt.Errorf("object %x is %d bytes, over %d: %w", o.ID, len(o.Data), maxObject, prsm.ErrInvalid)
		}
		total += 24 + len(o.Data)
	}
	if total > maxRow {
		return 0, fmt.Errorf("%d bytes, over %d: %w", total, maxRow, prsm.ErrInvalid)
	}
	return total, nil
}

// ListPending returns every pending row, oldest first.
func ListPending(ctx context.Context, q Querier) ([]*Pending, error) {
	rows, err := q.QueryContext(ctx, `SELECT seq, session_id, commit_id, refs, objects FROM pending_objects ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("list pending objects: %w", mapErr(err))
	}
	return collect(rows, func(sc scanner) (*Pending, error) {
		var p Pending
		var refs, commit, session sql.NullString
		var buf []byte
		if err := sc.Scan(&p.Seq, &session, &commit, &refs, &buf); err != nil {
			// A value of the wrong type: this row is bad, not the
			// store.
			return &Pending{Seq: p.Seq, Bad: fmt.Errorf("pending objects %d: %w: %v", p.Seq, ErrCorrupt, err)}, nil
		}
		p.SessionID, p.Commit = session.String, commit.String
		p.Bad = parsePending(&p, refs.String, buf)
		return &p, nil
	})
}

// parsePending fills p's refs and objects from their stored forms.
func parsePending(p *Pending, refs string, buf []byte) error {
	if err := json.Unmarshal([]byte(refs), &p.Refs); err != nil {
		return fmt.Errorf("pending objects %d: refs: %w: %v", p.Seq, ErrCorrupt, err)
	}
	for len(buf) > 0 {
		if len(buf) < 24 {
			return fmt.Errorf("pending objects %d: %w: a truncated object", p.Seq, ErrCorrupt)
		}
		var o PendingObject
		copy(o.ID[:], buf[:20])
		n := binary.BigEndian.Uint32(buf[20:24])
		if uint64(len(buf)-24) < uint64(n) {
			return fmt.Errorf("pending objects %d: %w: an object runs past the row", p.Seq, ErrCorrupt)
		}
		o.Data = buf[24 : 24+n]
		buf = buf[24+n:]
		p.Objects = append(p.Objects, o)
	}
	return nil
}

// SetPendingAside moves the pending row seq, which cannot be read or
// written out, into pending_objects_aside with why: it is no longer
// flushed, and nothing of it is lost.
func SetPendingAside(ctx context.Context, q Querier, seq int64, why string) error {
	_, err := q.ExecContext(ctx, `INSERT OR REPLACE INTO pending_objects_aside (seq, session_id, commit_id, refs, objects, reason, set_aside_at)
		SELECT seq, CAST(session_id AS TEXT), CAST(commit_id AS TEXT), CAST(refs AS TEXT), objects, ?, ? FROM pending_objects WHERE seq = ?`,
		why, formatTime(time.Now()), seq)
	if err == nil {
		_, err = q.ExecContext(ctx, `DELETE FROM pending_objects WHERE seq = ?`, seq)
	}
	if err != nil {
		return fmt.Errorf("set pending objects %d aside: %w", seq, mapErr(err))
	}
	return nil
}

// DeletePending removes the pending rows up to and including seq.
func DeletePending(ctx context.Context, q Querier, upTo int64) error {
	if _, err := q.ExecContext(ctx, `DELETE FROM pending_objects WHERE seq <= ?`, upTo); err != nil {
		return fmt.Errorf("delete pending objects: %w", mapErr(err))
	}
	return nil
}
