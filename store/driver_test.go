package store

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
)

// cachedStmts returns the statement texts one pooled connection holds.
func cachedStmts(t *testing.T, db *DB) map[string]bool {
	t.Helper()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	out := map[string]bool{}
	if err := conn.Raw(func(dc any) error {
		sc, ok := dc.(*stmtConn)
		if !ok {
			return fmt.Errorf("connection is a %T, not the caching one", dc)
		}
		for q := range sc.stmts {
			out[q] = true
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStatementsArePreparedOnce: a statement run twice is prepared once
// and kept by its connection, inside transactions too.
func TestStatementsArePreparedOnce(t *testing.T) {
	db := openTestDB(t)
	db.SetMaxOpenConns(1) // one connection, so the cache seen is the one used
	ctx := context.Background()
	const q = "SELECT COUNT(*) FROM sessions WHERE status = ?"
	for i := 0; i < 2; i++ {
		if got := count(t, db.Q(), q, "active"); got != 0 {
			t.Fatalf("count = %d", got)
		}
	}
	if err := db.Tx(ctx, func(tx Querier) error {
		mustSession(t, tx, "s1", t0)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := count(t, db.Q(), q, "active"); got != 1 {
		t.Fatalf("count after insert = %d, want 1 (a cached statement must see new rows)", got)
	}
	stmts := cachedStmts(t, db)
	if !stmts[q] {
		t.Errorf("query not cached; cache holds %d statements", len(stmts))
	}
	var insert bool
	for s := range stmts {
		if strings.HasPrefix(s, "INSERT INTO sessions") {
			insert = true
		}
	}
	if !insert {
		t.Errorf("the session insert run in a transaction is not cached: %v", stmts)
	}
}

// TestCachedStatementNestedQuery: while rows of a statement are open, the
// same text runs again (unprepared) and both give their own rows.
func TestCachedStatementNestedQuery(t *testing.T) {
	db := openTestDB(t)
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c"} {
		mustSession(t, db.Q(), id, t0)
	}
	const q = "SELECT id FROM sessions WHERE id >= ? ORDER BY id"
	err := db.Tx(ctx, func(tx Querier) error {
		outer, err := tx.QueryContext(ctx, q, "a")
		if err != nil {
			return err
		}
		defer outer.Close()
		var got []string
		for outer.Next() {
			var id string
			if err := outer.Scan(&id); err != nil {
				return err
			}
			inner, err := tx.QueryContext(ctx, q, id)
			if err != nil {
				return err
			}
			n := 0
			for inner.Next() {
				n++
			}
			if err := inner.Close(); err != nil {
				return err
			}
			got = append(got, fmt.Sprintf("%s:%d", id, n))
		}
		if fmt.Sprint(got) != "[a:3 b:2 c:1]" {
			t.Errorf("nested queries gave %v, want [a:3 b:2 c:1]", got)
		}
		return outer.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	// The statement is free again afterwards.
	var id string
	if err := db.QueryRowContext(ctx, q, "b").Scan(&id); err != nil || id != "b" {
		t.Fatalf("after the nested use: %q %v", id, err)
	}
}

// TestCachedStatementAfterError: a statement that failed (a constraint)
// runs fine next time, and the failed transaction left nothing.
func TestCachedStatementAfterError(t *testing.T) {
	db := openTestDB(t)
	ctx := context.Background()
	mustSession(t, db.Q(), "dup", t0)
	err := db.Tx(ctx, func(tx Querier) error {
		mustSession(t, tx, "other", t0)
		return CreateSession(ctx, tx, mustSessionValue("dup"))
	})
	if err == nil {
		t.Fatal("a duplicate session id was accepted")
	}
	if n := count(t, db.Q(), "SELECT COUNT(*) FROM sessions"); n != 1 {
		t.Fatalf("%d sessions after the failed transaction, want 1", n)
	}
	if err := CreateSession(ctx, db.Q(), mustSessionValue("fresh")); err != nil {
		t.Fatalf("the same statement after its failure: %v", err)
	}
	if n := count(t, db.Q(), "SELECT COUNT(*) FROM sessions"); n != 2 {
		t.Fatalf("%d sessions, want 2", n)
	}
}

func mustSessionValue(id string) *prsm.Session {
	return &prsm.Session{ID: id, Name: "n-" + id, Mode: prsm.ModeAuto, Status: prsm.SessionActive, CreatedAt: t0}
}
