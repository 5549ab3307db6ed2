// Package store owns prsm's per-workspace sqlite database: its schema and
// embedded migrations, the one transaction helper, the functions that read
// and write sessions, tool calls, records, checkpoints, the hashes of the
// sessions' hook tokens and small key-value state, and the content-addressed blob store that keeps every file content
// a rewind may need. Every function takes a Querier, so the caller decides
// how wide a transaction is.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
)

// pragmas are applied by the driver to every new connection. _txlock=immediate
// makes every transaction take the write lock at BEGIN, so two writers never
// deadlock upgrading a read lock; busy_timeout makes the loser wait instead
// of failing with SQLITE_BUSY. wal_autocheckpoint(0): no commit checkpoints
// the WAL itself; the DB's checkpointer does, in the background.
const pragmas = "_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=wal_autocheckpoint(0)&_txlock=immediate"

// checkpointEvery is how many commits the checkpointer lets go by between
// two checkpoints of the WAL. sqlite's own automatic checkpoint ran inside
// the commit that took the WAL past 1000 pages, which a tool call's
// answer then waited for: a copy of the new pages into the database file
// and two fsyncs, a few milliseconds, in about one tool call in forty. A
// tool call commits three transactions of 5-10 pages each, so this keeps
// the WAL near the size sqlite's default kept it at.
const checkpointEvery = 50

// The checkpointer waits for a pause of checkpointQuiet in the commits
// (tool calls come in bursts), for checkpointMaxWait or another
// checkpointEvery commits at most (the WAL grows by some 70 KB a tool
// call, so waiting longer in a long burst let it grow by tens of MB), and then
// holds the transaction connection while it checkpoints: sqlite starts
// the WAL file over only after a checkpoint that reached its end, once no
// reader reads from the WAL any more.
const (
	checkpointQuiet   = 50 * time.Millisecond
	checkpointMaxWait = 2 * time.Second
	// checkpointWait bounds the checkpoint's wait for readers.
	checkpointWait = 100 * time.Millisecond
)

// Querier is what every store function runs its SQL on. Both *sql.DB and
// *sql.Tx satisfy it (and so does *DB), so one function serves inside and
// outside a transaction.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

var (
	_ Querier = (*sql.DB)(nil)
	_ Querier = (*sql.Tx)(nil)
	_ Querier = (*DB)(nil)
)

// DB is an open workspace database. The embedded *sql.DB is safe for
// concurrent use; Close closes it.
type DB struct {
	*sql.DB
	path string
	// Every transaction runs on one connection, w, taken in turn (wsem):
	// sqlite drops a connection's page cache whenever another connection
	// wrote, so transactions spread over the pool read their pages anew
	// each time (5 preads of a tool call's 7 statements). Reads use the
	// pool. wmu guards w.
	wsem chan struct{}
	wmu  stdsync.Mutex
	w    *sql.Conn
	// sweeps counts the sweeps of unreferenced blobs begun (SweepBlobs).
	sweeps atomic.Uint64
	// commits counts the commits of Tx; every checkpointEvery-th kicks
	// the checkpointer (ckptKick), which Close stops (ckptStop) and
	// waits for (ckptDone). Every commit kicks it while ckptShort says
	// the last checkpoint did not get through, as sqlite's automatic
	// checkpoint retried.
	commits            atomic.Uint64
	ckptShort          atomic.Bool
	ckptKick, ckptStop chan struct{}
	ckptDone           chan struct{}
	closeOnce          stdsync.Once
}

// Open opens (creating if needed) the database at path, makes sure it is in
// WAL mode and readable by its owner only, and applies pending migrations.
func Open(path string) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("open database %s: %w", abs, err)
	}
	// Create the file ourselves so it never exists with a wider mode; sqlite
	// gives the -wal and -shm files the mode of the database file.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", abs, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("open database %s: %w", abs, err)
	}

	sqldb := sql.OpenDB(&connector{dsn: dsn(abs), d: &sqlite.Driver{}})
	db := &DB{DB: sqldb, path: abs, wsem: make(chan struct{}, 1),
		ckptKick: make(chan struct{}, 1), ckptStop: make(chan struct{}), ckptDone: make(chan struct{})}
	if err := db.init(); err != nil {
		sqldb.Close()
		return nil, fmt.Errorf("open database %s: %w", abs, err)
	}
	go db.checkpointer()
	// The migrations' transactions pinned a connection; the first
	// transaction of the caller pins one anew, after any limit the caller
	// sets on the pool.
	db.unpin()
	return db, nil
}

func (db *DB) init() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("read journal mode: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %q, want wal", mode)
	}
	for _, p := range []string{db.path, db.path + "-wal", db.path + "-shm"} {
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return migrate(ctx, db)
}

// dsn builds a sqlite URI for path. Each segment is percent-escaped, so
// spaces, non-ASCII and even '?', '#' and '%' in the path survive.
func dsn(path string) string {
	segs := strings.Split(filepath.ToSlash(path), "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "file:" + strings.Join(segs, "/") + "?" + pragmas
}

// Path returns the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Q returns the database itself as a Querier, for work that needs no
// transaction.
func (db *DB) Q() Querier { return db.DB }

// ReadWarm runs fn, which only reads, on the transaction connection when
// no transaction holds it, and on the pool otherwise. The transaction
// connection has the pages the last writes touched in its cache; a pool
// connection drops its cache whenever another connection wrote, and a
// point read on it after a write reads its pages from the file again.
// For the small reads of a tool call, between the writes of the ones
// before; fn must not write or begin a transaction.
func (db *DB) ReadWarm(ctx context.Context, fn func(q Querier) error) error {
	if db.DB.Stats().MaxOpenConnections == 1 {
		return fn(db.DB)
	}
	select {
	case db.wsem <- struct{}{}:
	default:
		return fn(db.DB) // a transaction runs: do not wait for it
	}
	defer func() { <-db.wsem }()
	db.wmu.Lock()
	w := db.w
	db.wmu.Unlock()
	if w == nil {
		return fn(db.DB)
	}
	return fn(w)
}

// Tx runs fn in one transaction and commits it when fn returns nil. It rolls
// back when fn returns an error or panics (and then re-panics). fn's error is
// returned as is, so errors.Is still finds the store's sentinels. Do not nest
// Tx calls: the inner one would wait for the outer one's write lock.
func (db *DB) Tx(ctx context.Context, fn func(q Querier) error) (err error) {
	return db.tx(ctx, false, fn)
}

// TxMany is Tx for a transaction of many rows (the records of a tool call
// that wrote thousands of files): its connection keeps statement journals
// in memory, not in a temporary file written a page at a time, and up to
// manyCache of pages, so that the random inserts into the indexes (record
// ids, blob hashes) do not spill pages to the WAL and read them back.
// Both are set back, and the cache freed, at the end: a connection kept
// with them would hold that memory, and a large content's statement
// journal in memory too.
func (db *DB) TxMany(ctx context.Context, fn func(q Querier) error) error {
	return db.tx(ctx, true, fn)
}

// manyCache is TxMany's page cache, in KiB (sqlite's default is 2000).
const manyCache = 16 << 10

func (db *DB) tx(ctx context.Context, many bool, fn func(q Querier) error) (err error) {
	var tx *sql.Tx
	if db.DB.Stats().MaxOpenConnections == 1 {
		// One connection in all: nothing to pin, and pinning it would
		// leave none for reads.
		tx, err = db.BeginTx(ctx, nil)
	} else {
		var release func()
		if release, err = db.writer(ctx); err != nil {
			return fmt.Errorf("begin transaction: %w", err)
		}
		defer release()
		if many {
			if err := db.tuneForMany(ctx); err != nil {
				return err
			}
			defer db.untune()
		}
		if tx, err = db.w.BeginTx(ctx, nil); err != nil {
			db.dropWriter(err)
		}
	}
	if err != nil {
		return fmt.Errorf("begin transaction: %w", mapErr(err))
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		if rerr := tx.Rollback(); rerr != nil && !errors.Is(rerr, sql.ErrTxDone) {
			return errors.Join(err, fmt.Errorf("roll back transaction: %w", rerr))
		}
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit transaction: %w", mapErr(err))
	}
	if db.commits.Add(1)%checkpointEvery == 0 || db.ckptShort.Load() {
		select {
		case db.ckptKick <- struct{}{}:
		default: // one is due already
		}
	}
	return nil
}

// checkpointer checkpoints the WAL when Tx kicks it, until Close, after
// a pause in the commits (checkpointQuiet).
func (db *DB) checkpointer() {
	defer close(db.ckptDone)
	for {
		select {
		case <-db.ckptStop:
			return
		case <-db.ckptKick:
		}
		if !db.awaitPause() {
			return
		}
		db.ckptShort.Store(!db.checkpoint())
	}
}

// awaitPause returns once the commits paused for checkpointQuiet, or
// after checkpointEvery more commits or checkpointMaxWait, whichever
// comes first; false if Close stopped the checkpointer meanwhile.
func (db *DB) awaitPause() bool {
	tick := time.NewTicker(checkpointQuiet / 10)
	defer tick.Stop()
	kicked, start := db.commits.Load(), time.Now()
	last, lastAt := kicked, start
	for {
		select {
		case <-db.ckptStop:
			return false
		case at := <-tick.C:
			if now := db.commits.Load(); now != last {
				last, lastAt = now, at
			}
			if at.Sub(lastAt) >= checkpointQuiet || last-kicked >= checkpointEvery || at.Sub(start) >= checkpointMaxWait {
				return true
			}
		}
	}
}

// checkpoint runs a RESTART checkpoint on the transaction connection,
// which it holds meanwhile, and reports whether it got through: every
// page of the WAL copied into the database file, and the readers of the
// WAL gone (they are short; sqlite waits for them up to checkpointWait,
// not the connection's busy_timeout, since transactions wait meanwhile),
// so the next transaction writes the WAL from its start again. A PASSIVE
// checkpoint, what sqlite's automatic one is, does not wait for readers:
// run beside them, it seldom let the WAL start over, and the WAL grew by
// everything written. An error (another process's checkpoint runs)
// counts as not getting through.
func (db *DB) checkpoint() (complete bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var c *sql.Conn
	if db.DB.Stats().MaxOpenConnections != 1 {
		release, err := db.writer(ctx)
		if err != nil {
			return false
		}
		defer release()
		c = db.w
	} else {
		var err error
		if c, err = db.DB.Conn(ctx); err != nil {
			return false
		}
		defer c.Close()
	}
	var old int
	if err := c.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&old); err != nil {
		return false
	}
	if _, err := c.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", checkpointWait.Milliseconds())); err != nil {
		return false
	}
	defer c.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", old))
	var busy, frames, done int
	if err := c.QueryRowContext(ctx, "PRAGMA wal_checkpoint(RESTART)").Scan(&busy, &frames, &done); err != nil {
		return false
	}
	return busy == 0 && frames == done
}

// timeLayout is RFC 3339 in UTC with a fixed nine-digit fraction: unlike
// time.RFC3339Nano it keeps text order equal to time order, and
// time.RFC3339Nano still parses it.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse time %q: %w", s, err)
	}
	return t.UTC(), nil
}

func formatNullTime(t *time.Time) sql.NullString {
	if t == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: formatTime(*t), Valid: true}
}

func parseNullTime(s sql.NullString) (*time.Time, error) {
	if !s.Valid {
		return nil, nil
	}
	t, err := parseTime(s.String)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}

// busyWait bounds the wait for another transaction of this process, as
// sqlite's busy_timeout bounds the wait for another process's.
const busyWait = 5 * time.Second

// writer takes the transaction connection (opening it if needed) and
// returns its release.
func (db *DB) writer(ctx context.Context) (release func(), err error) {
	t := time.NewTimer(busyWait)
	defer t.Stop()
	select {
	case db.wsem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, fmt.Errorf("%w: another transaction of this server held it for %s", ErrBusy, busyWait)
	}
	release = func() { <-db.wsem }
	db.wmu.Lock()
	defer db.wmu.Unlock()
	if db.w == nil {
		if db.w, err = db.DB.Conn(ctx); err != nil {
			release()
			return nil, mapErr(err)
		}
	}
	return release, nil
}

// dropWriter lets a transaction connection that failed with a dead
// connection's error go; the next transaction opens another.
func (db *DB) dropWriter(err error) {
	if !errors.Is(err, driver.ErrBadConn) && !errors.Is(err, sql.ErrConnDone) {
		return
	}
	db.unpin()
}

// unpin gives the transaction connection back to the pool.
func (db *DB) unpin() {
	db.wmu.Lock()
	defer db.wmu.Unlock()
	if db.w != nil {
		db.w.Close()
		db.w = nil
	}
}

// Close stops the checkpointer, closes the transaction connection, then
// the database (sqlite checkpoints the WAL as its last connection closes).
func (db *DB) Close() error {
	db.closeOnce.Do(func() { close(db.ckptStop) })
	<-db.ckptDone
	db.unpin()
	return db.DB.Close()
}

// tuneForMany sets the writer connection up for TxMany; untune sets it
// back. A connection whose settings could not be set back is closed, so
// that the pool opens a new one with the DSN's.
func (db *DB) tuneForMany(ctx context.Context) error {
	if _, err := db.w.ExecContext(ctx, fmt.Sprintf("PRAGMA temp_store = MEMORY; PRAGMA cache_size = -%d", manyCache)); err != nil {
		db.untune()
		return fmt.Errorf("begin transaction of many rows: %w", mapErr(err))
	}
	return nil
}

func (db *DB) untune() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if db.w == nil {
		return
	}
	if _, err := db.w.ExecContext(ctx, "PRAGMA temp_store = DEFAULT; PRAGMA cache_size = -2000; PRAGMA shrink_memory"); err != nil {
		// Bad: the pool closes it instead of taking it back.
		_ = db.w.Raw(func(any) error { return driver.ErrBadConn })
		db.unpin()
	}
}
