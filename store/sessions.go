package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/prsm-dev/prsm"
)

// sessionCols selects a session and its pending-record count (kept by
// triggers, migration 0007).
const sessionCols = `s.id, s.name, s.agent_id, s.mode, s.status, s.worktree_path, s.branch,
	s.base_commit, s.created_at, s.ended_at, s.note, s.pending_count`

func scanSession(sc scanner) (*prsm.Session, error) {
	var (
		s       prsm.Session
		created string
		ended   sql.NullString
	)
	if err := sc.Scan(&s.ID, &s.Name, &s.AgentID, &s.Mode, &s.Status, &s.WorktreePath, &s.Branch,
		&s.BaseCommit, &created, &ended, &s.Note, &s.PendingCount); err != nil {
		return nil, err
	}
	var err error
	if s.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	if s.EndedAt, err = parseNullTime(ended); err != nil {
		return nil, err
	}
	return &s, nil
}

// CreateSession stores s. PendingCount is ignored. It fails with
// prsm.ErrConflict when a session with s.ID exists.
func CreateSession(ctx context.Context, q Querier, s *prsm.Session) error {
	if s.ID == "" {
		return fmt.Errorf("create session: empty id: %w", prsm.ErrInvalid)
	}
	_, err := q.ExecContext(ctx, `INSERT INTO sessions
		(id, name, agent_id, mode, status, worktree_path, branch, base_commit, created_at, ended_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.Name, s.AgentID, s.Mode, s.Status, s.WorktreePath, s.Branch, s.BaseCommit,
		formatTime(s.CreatedAt), formatNullTime(s.EndedAt))
	if err != nil {
		return fmt.Errorf("create session %s: %w", s.ID, mapErr(err))
	}
	return nil
}

// GetSession returns the session with exactly this id, with PendingCount
// filled in.
func GetSession(ctx context.Context, q Querier, id string) (*prsm.Session, error) {
	s, err := scanSession(q.QueryRowContext(ctx, "SELECT "+sessionCols+" FROM sessions s WHERE s.id = ?", id))
	if err != nil {
		return nil, fmt.Errorf("get session %s: %w", id, mapErr(err))
	}
	return s, nil
}

// ResolveSession finds a session by its id or by a unique prefix of it. An
// exact id wins over prefix matches. Several matches give an
// *AmbiguousError (errors.Is prsm.ErrAmbiguous), none prsm.ErrNotFound, and
// an empty prefix prsm.ErrInvalid.
func ResolveSession(ctx context.Context, q Querier, idOrPrefix string) (*prsm.Session, error) {
	if idOrPrefix == "" {
		return nil, fmt.Errorf("resolve session: empty id: %w", prsm.ErrInvalid)
	}
	s, err := GetSession(ctx, q, idOrPrefix)
	if err == nil || !errors.Is(err, prsm.ErrNotFound) {
		return s, err
	}
	// substr and length both count characters, and unlike LIKE this is
	// case-sensitive and has no wildcards to escape.
	rows, err := q.QueryContext(ctx,
		"SELECT id FROM sessions WHERE substr(id, 1, length(?1)) = ?1 ORDER BY id", idOrPrefix)
	if err != nil {
		return nil, fmt.Errorf("resolve session %s: %w", idOrPrefix, mapErr(err))
	}
	ids, err := collect(rows, func(sc scanner) (string, error) {
		var id string
		return id, sc.Scan(&id)
	})
	if err != nil {
		return nil, fmt.Errorf("resolve session %s: %w", idOrPrefix, mapErr(err))
	}
	switch len(ids) {
	case 0:
		// No id starts so: a name, as `prsm run --name` gives (the active
		// session of that name, else the newest one).
		var id string
		err := q.QueryRowContext(ctx, `SELECT id FROM sessions WHERE name = ?
			ORDER BY status = ? DESC, created_at DESC, id LIMIT 1`, idOrPrefix, prsm.SessionActive).Scan(&id)
		if err != nil {
			if errors.Is(mapErr(err), prsm.ErrNotFound) {
				return nil, fmt.Errorf("resolve session %s: %w", idOrPrefix, prsm.ErrNotFound)
			}
			return nil, fmt.Errorf("resolve session %s: %w", idOrPrefix, mapErr(err))
		}
		return GetSession(ctx, q, id)
	case 1:
		return GetSession(ctx, q, ids[0])
	default:
		return nil, &AmbiguousError{Prefix: idOrPrefix, Matches: ids}
	}
}

// ListSessions returns the sessions with the given status ("" for all),
// oldest first, each with PendingCount filled in.
func ListSessions(ctx context.Context, q Querier, status string) ([]*prsm.Session, error) {
	rows, err := q.QueryContext(ctx, "SELECT "+sessionCols+
		" FROM sessions s WHERE ?1 = '' OR s.status = ?1 ORDER BY s.created_at, s.id", status)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", mapErr(err))
	}
	ss, err := collect(rows, scanSession)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", mapErr(err))
	}
	return ss, nil
}

// EndSession marks the session ended at endedAt.
func EndSession(ctx context.Context, q Querier, id string, endedAt time.Time) error {
	return EndSessionNote(ctx, q, id, endedAt, "")
}

// EndSessionNote marks the session ended at endedAt, noting why when prsm
// ended it on its own.
func EndSessionNote(ctx context.Context, q Querier, id string, endedAt time.Time, note string) error {
	res, err := q.ExecContext(ctx, "UPDATE sessions SET status = ?, ended_at = ?, note = ? WHERE id = ?",
		prsm.SessionEnded, formatTime(endedAt), note, id)
	if err == nil {
		err = mustAffect(res)
	}
	if err != nil {
		return fmt.Errorf("end session %s: %w", id, mapErr(err))
	}
	return nil
}

// SetSessionNote stores what prsm did on its own in an active session (it
// repaired the worktree's .git, it left a git directory unrecorded), for
// the user to see.
func SetSessionNote(ctx context.Context, q Querier, id, note string) error {
	res, err := q.ExecContext(ctx, "UPDATE sessions SET note = ? WHERE id = ?", note, id)
	if err == nil {
		err = mustAffect(res)
	}
	if err != nil {
		return fmt.Errorf("note session %s: %w", id, mapErr(err))
	}
	return nil
}

// collect scans every row with scan and closes rows.
func collect[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	out := []T{} // non-nil, so an empty list encodes as [] in JSON
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, rows.Close()
}
