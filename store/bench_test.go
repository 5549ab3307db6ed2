package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/prsm-dev/prsm"
)

// BenchmarkRecordsOfToolCall: the records of one tool call in a session
// of 20k records (what a repeated complete, GET of a tool call's changes
// or an accept by tool call reads).
func BenchmarkRecordsOfToolCall(b *testing.B) {
	ctx := context.Background()
	db, err := Open(filepath.Join(b.TempDir(), "prsm.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	s := &prsm.Session{ID: "s1", Name: "s1", Mode: prsm.ModeAuto, Status: prsm.SessionActive, CreatedAt: t0}
	if err := CreateSession(ctx, db.Q(), s); err != nil {
		b.Fatal(err)
	}
	const n = 20_000
	err = db.Tx(ctx, func(q Querier) error {
		for i := range n {
			r := testRecord("s1", fmt.Sprintf("r%d", i), fmt.Sprintf("toolu_%05d", i), fmt.Sprintf("f%d", i%500))
			r.Status = prsm.StatusPending
			if err := InsertRecord(ctx, q, r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("toolu_%05d", (i*7919)%n)
		i++
		rs, err := ListRecords(ctx, db.Q(), RecordFilter{SessionID: "s1", ToolCallID: id})
		if err != nil || len(rs) != 1 {
			b.Fatalf("records of %s: %d, %v", id, len(rs), err)
		}
	}
}

// BenchmarkRecordMany: the store's share of recording one tool call that
// created many files (an agent's npm install): a blob, a record and a file
// state per file, in one transaction, with ids as random as the engine's.
// PRSM_BENCH_FILES sets how many (20k unless set).
func BenchmarkRecordMany(b *testing.B) {
	ctx := context.Background()
	n := 20_000
	if v, err := strconv.Atoi(os.Getenv("PRSM_BENCH_FILES")); err == nil && v > 0 {
		n = v
	}
	for b.Loop() {
		b.StopTimer()
		db, err := Open(filepath.Join(b.TempDir(), "prsm.db"))
		if err != nil {
			b.Fatal(err)
		}
		s := &prsm.Session{ID: "s1", Name: "s1", Mode: prsm.ModeAuto, Status: prsm.SessionActive, CreatedAt: t0}
		if err := CreateSession(ctx, db.Q(), s); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		err = db.TxMany(ctx, func(q Querier) error {
			for i := range n {
				rel := fmt.Sprintf("gen/d%04d/f%06d.js", i/50, i)
				h, err := PutBlob(ctx, q, []byte("module.exports = "+rel+"\n"))
				if err != nil {
					return err
				}
				r := testRecord("s1", fmt.Sprintf("%016x", uint64(i)*0x9E3779B97F4A7C15), "npm-install", rel)
				r.ChangeType, r.NewHash = prsm.ChangeCreate, h
				if err := InsertRecord(ctx, q, r); err != nil {
					return err
				}
				if err := PutFileState(ctx, q, "s1", rel, FileState{Present: true, Mode: 0o644, Hash: h, Size: 30}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
}
