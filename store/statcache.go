package store

import (
	"context"
	"fmt"
)

// Stat is one row of the tracker's stat cache: what lstat said of a session
// file when its content had the blob hash Hash. Seen is when prsm looked
// (Unix nanoseconds); an entry whose file changed within the filesystem's
// timestamp granularity of Seen is not trusted (see tracker.StatCache).
type Stat struct {
	Size  int64
	Mtime int64
	Ctime int64
	Ino   uint64
	Mode  uint32
	Hash  string
	Seen  int64
}

// PutStats stores stat cache entries of a session; a nil entry deletes the
// path's row.
func PutStats(ctx context.Context, q Querier, sessionID string, stats map[string]*Stat) error {
	for rel, st := range stats {
		var err error
		if st == nil {
			_, err = q.ExecContext(ctx, `DELETE FROM stat_cache WHERE session_id = ? AND rel_path = ?`, sessionID, rel)
		} else {
			_, err = q.ExecContext(ctx, `INSERT INTO stat_cache (session_id, rel_path, size, mtime_ns, ctime_ns, ino, mode, hash, seen_ns)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (session_id, rel_path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns,
					ctime_ns = excluded.ctime_ns, ino = excluded.ino, mode = excluded.mode, hash = excluded.hash,
					seen_ns = excluded.seen_ns`,
				sessionID, rel, st.Size, st.Mtime, st.Ctime, int64(st.Ino), st.Mode, st.Hash, st.Seen)
		}
		if err != nil {
			return fmt.Errorf("put stat cache %s: %w", rel, mapErr(err))
		}
	}
	return nil
}

// ListStats returns a session's stat cache by path.
func ListStats(ctx context.Context, q Querier, sessionID string) (map[string]Stat, error) {
	rows, err := q.QueryContext(ctx, `SELECT rel_path, size, mtime_ns, ctime_ns, ino, mode, hash, seen_ns
		FROM stat_cache WHERE session_id = ?`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("list stat cache: %w", mapErr(err))
	}
	defer rows.Close()
	m := map[string]Stat{}
	for rows.Next() {
		var rel string
		var st Stat
		var ino int64
		if err := rows.Scan(&rel, &st.Size, &st.Mtime, &st.Ctime, &ino, &st.Mode, &st.Hash, &st.Seen); err != nil {
			return nil, fmt.Errorf("list stat cache: %w", err)
		}
		st.Ino = uint64(ino)
		m[rel] = st
	}
	return m, rows.Err()
}
