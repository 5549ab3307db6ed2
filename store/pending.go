package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
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
}

// AddPending stores a checkpoint's objects and refs to write.
func AddPending(ctx context.Context, q Querier, p *Pending) error {
	refs, err := json.Marshal(p.Refs)
	if err != nil {
		return err
	}
	buf := []byte{} // never NULL, also with no objects (a named checkpoint of an unchanged tree)
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

// ListPending returns every pending row, oldest first.
func ListPending(ctx context.Context, q Querier) ([]*Pending, error) {
	rows, err := q.QueryContext(ctx, `SELECT seq, session_id, commit_id, refs, objects FROM pending_objects ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("list pending objects: %w", mapErr(err))
	}
	return collect(rows, func(sc scanner) (*Pending, error) {
		var p Pending
		var refs string
		var buf []byte
		if err := sc.Scan(&p.Seq, &p.SessionID, &p.Commit, &refs, &buf); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(refs), &p.Refs); err != nil {
			return nil, fmt.Errorf("pending objects %d: refs: %w", p.Seq, err)
		}
		for len(buf) > 0 {
			if len(buf) < 24 {
				return nil, fmt.Errorf("pending objects %d: %w", p.Seq, ErrCorrupt)
			}
			var o PendingObject
			copy(o.ID[:], buf[:20])
			n := binary.BigEndian.Uint32(buf[20:24])
			if uint64(len(buf)-24) < uint64(n) {
				return nil, fmt.Errorf("pending objects %d: %w", p.Seq, ErrCorrupt)
			}
			o.Data = buf[24 : 24+n]
			buf = buf[24+n:]
			p.Objects = append(p.Objects, o)
		}
		return &p, nil
	})
}

// DeletePending removes the pending rows up to and including seq.
func DeletePending(ctx context.Context, q Querier, upTo int64) error {
	if _, err := q.ExecContext(ctx, `DELETE FROM pending_objects WHERE seq <= ?`, upTo); err != nil {
		return fmt.Errorf("delete pending objects: %w", mapErr(err))
	}
	return nil
}
