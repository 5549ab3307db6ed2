package store

import (
	"context"
	"fmt"
	"path/filepath"
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
