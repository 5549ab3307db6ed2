package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
)

// A hook token's hash finds its session and the session's status; an
// unknown hash and the token of a session that is gone find nothing, and
// a token cannot be stored for a session that does not exist.
func TestHookTokens(t *testing.T) {
	db := openTestDB(t)
	ctx := context.Background()
	now := time.Now()
	mustSession(t, db, "s1", now)
	mustSession(t, db, "s2", now)
	if err := AddHookToken(ctx, db, "s1", "h1", now); err != nil {
		t.Fatal(err)
	}
	if err := AddHookToken(ctx, db, "nope", "h9", now); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("a token of no session: %v, want ErrNotFound", err)
	}
	if err := AddHookToken(ctx, db, "s2", "h1", now); !errors.Is(err, prsm.ErrConflict) {
		t.Fatalf("the same hash twice: %v, want ErrConflict", err)
	}
	if sid, status, err := HookTokenSession(ctx, db, "h1"); err != nil || sid != "s1" || status != prsm.SessionActive {
		t.Fatalf("h1: %q %q %v", sid, status, err)
	}
	if _, err := db.ExecContext(ctx, "UPDATE sessions SET status = ? WHERE id = 's1'", prsm.SessionEnded); err != nil {
		t.Fatal(err)
	}
	if sid, status, err := HookTokenSession(ctx, db, "h1"); err != nil || sid != "s1" || status != prsm.SessionEnded {
		t.Fatalf("h1 after the end: %q %q %v", sid, status, err)
	}
	if _, _, err := HookTokenSession(ctx, db, "h2"); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("unknown hash: %v", err)
	}
	if _, err := db.ExecContext(ctx, "DELETE FROM sessions WHERE id = 's1'"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := HookTokenSession(ctx, db, "h1"); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("token of a session that is gone: %v", err)
	}
	if n := count(t, db, "SELECT COUNT(*) FROM hook_tokens"); n != 0 {
		t.Fatalf("%d hook tokens left after their session went", n)
	}
}
