package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in version order. A file is
// named NNNN_description.sql; versions start at 1 and have no gaps.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number and '_'", base)
		}
		b, err := migrationFS.ReadFile(name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: want version %d", m.name, i+1)
		}
	}
	return ms, nil
}

// migrate applies every migration newer than the database's schema version,
// all in one transaction. The version is read inside that (immediate)
// transaction, so two processes opening the same database at once cannot
// both apply a migration.
func migrate(ctx context.Context, db *DB) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	return db.Tx(ctx, func(q Querier) error {
		if _, err := q.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
			version    INTEGER PRIMARY KEY,
			name       TEXT NOT NULL,
			applied_at TEXT NOT NULL
		)`); err != nil {
			return fmt.Errorf("create schema_version: %w", err)
		}
		var cur int
		if err := q.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_version").Scan(&cur); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		if cur > len(ms) {
			return fmt.Errorf("database schema version %d is newer than this prsm knows (%d); upgrade prsm", cur, len(ms))
		}
		now := formatTime(time.Now())
		for _, m := range ms[cur:] {
			if _, err := q.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("apply migration %s: %w", m.name, err)
			}
			if _, err := q.ExecContext(ctx, "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)", m.version, m.name, now); err != nil {
				return fmt.Errorf("record migration %s: %w", m.name, err)
			}
		}
		return nil
	})
}

// SchemaVersion returns the version of the newest migration applied to q.
func SchemaVersion(ctx context.Context, q Querier) (int, error) {
	var v int
	if err := q.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}
