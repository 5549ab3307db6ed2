package store

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/prsm-dev/prsm"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrCorrupt means stored content no longer matches its hash.
var ErrCorrupt = errors.New("corrupt content")

// ErrBusy means the database stayed locked, by another connection or
// another transaction of this process, for longer than the store waits
// for it: what it stopped was not written, and the same work may well
// succeed a moment later. IsBusy finds it, and sqlite's own busy errors.
var ErrBusy = errors.New("database is locked")

// IsBusy reports whether err is the database being busy or locked:
// ErrBusy, or sqlite's SQLITE_BUSY or SQLITE_LOCKED with any extended
// code, which a statement of any store function may return.
func IsBusy(err error) bool {
	if errors.Is(err, ErrBusy) {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return true
		}
	}
	return false
}

// AmbiguousError is returned by ResolveSession when a prefix names several
// sessions.
type AmbiguousError struct {
	Prefix  string
	Matches []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("id prefix %q matches %d sessions: %s", e.Prefix, len(e.Matches), strings.Join(e.Matches, ", "))
}

// Unwrap returns prsm.ErrAmbiguous.
func (e *AmbiguousError) Unwrap() error { return prsm.ErrAmbiguous }

// mapErr turns driver errors into prsm's sentinels at the store's edge: a
// missing row becomes prsm.ErrNotFound, a uniqueness violation
// prsm.ErrConflict and a reference to a missing row (a foreign key)
// prsm.ErrNotFound. Other errors pass through; IsBusy tells a busy
// database's apart, wherever they come from.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return prsm.ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: already exists", prsm.ErrConflict)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("%w: references a missing row", prsm.ErrNotFound)
		case sqlite3.SQLITE_CONSTRAINT_CHECK, sqlite3.SQLITE_CONSTRAINT_NOTNULL:
			return fmt.Errorf("%w: %w", prsm.ErrInvalid, err)
		}
	}
	return err
}

// mustAffect returns prsm.ErrNotFound when res changed no row.
func mustAffect(res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return prsm.ErrNotFound
	}
	return nil
}
