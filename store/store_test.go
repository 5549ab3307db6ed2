package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
)

// openTestDB opens a fresh database in a temp dir and closes it at cleanup.
func openTestDB(t *testing.T) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "prsm.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// mustSession creates a session with the given id, created at created.
func mustSession(t *testing.T, q Querier, id string, created time.Time) *prsm.Session {
	t.Helper()
	s := &prsm.Session{ID: id, Name: "n-" + id, Mode: prsm.ModeAuto, Status: prsm.SessionActive, CreatedAt: created}
	if err := CreateSession(context.Background(), q, s); err != nil {
		t.Fatalf("CreateSession %s: %v", id, err)
	}
	return s
}

func count(t *testing.T, q Querier, query string, args ...any) int {
	t.Helper()
	var n int
	if err := q.QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

var t0 = time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.UTC)

func TestOpenWALAndPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home", "projects", "abc")
	path := filepath.Join(dir, "prsm.db")
	db, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()

	var mode string
	if err := db.QueryRowContext(context.Background(), "PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if got, want := mode, "wal"; got != want {
		t.Fatalf("journal_mode = %q, want %q", got, want)
	}
	var fk int
	if err := db.QueryRowContext(context.Background(), "PRAGMA foreign_keys").Scan(&fk); err != nil {
		t.Fatal(err)
	}
	if got, want := fk, 1; got != want {
		t.Fatalf("foreign_keys = %d, want %d", got, want)
	}

	// Write something so the -wal file surely exists.
	mustSession(t, db.Q(), "s1", t0)
	for _, p := range []string{path, path + "-wal"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fi.Mode().Perm(), os.FileMode(0o600); got != want {
			t.Fatalf("mode of %s = %v, want %v", filepath.Base(p), got, want)
		}
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fi.Mode().Perm(), os.FileMode(0o700); got != want {
			t.Fatalf("mode of %s = %v, want %v", d, got, want)
		}
	}
	if got, want := db.Path(), path; got != want {
		t.Fatalf("Path() = %q, want %q", got, want)
	}
}

func TestOpenTightensExistingFileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prsm.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fi.Mode().Perm(), os.FileMode(0o600); got != want {
		t.Fatalf("mode = %v, want %v", got, want)
	}
}

func TestOpenOddPath(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "dir with spaces", "ünï ?#%20&x=y", "prsm.db")
	db, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	mustSession(t, db.Q(), "s1", t0)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// The database is exactly at path, not at some unescaped variant.
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("stat db: %v", err)
	}
	var files []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	for _, f := range files {
		if !strings.HasPrefix(filepath.Base(f), "prsm.db") || filepath.Dir(f) != filepath.Dir(path) {
			t.Fatalf("unexpected file %q", f)
		}
	}

	db, err = Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	s, err := GetSession(context.Background(), db.Q(), "s1")
	if err != nil {
		t.Fatalf("GetSession after reopen: %v", err)
	}
	if got, want := s.Name, "n-s1"; got != want {
		t.Fatalf("name = %q, want %q", got, want)
	}
}

func TestMigrationsIdempotent(t *testing.T) {
	ctx := context.Background()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no migrations embedded")
	}
	path := filepath.Join(t.TempDir(), "prsm.db")
	for i := range 3 {
		db, err := Open(path)
		if err != nil {
			t.Fatalf("open #%d: %v", i, err)
		}
		v, err := SchemaVersion(ctx, db.Q())
		if err != nil {
			t.Fatal(err)
		}
		if got, want := v, len(ms); got != want {
			t.Fatalf("open #%d: schema version = %d, want %d", i, got, want)
		}
		if got, want := count(t, db.Q(), "SELECT COUNT(*) FROM schema_version"), len(ms); got != want {
			t.Fatalf("open #%d: schema_version rows = %d, want %d", i, got, want)
		}
		if i == 0 {
			mustSession(t, db.Q(), "kept", t0)
		}
		if got, want := count(t, db.Q(), "SELECT COUNT(*) FROM sessions"), 1; got != want {
			t.Fatalf("open #%d: sessions = %d, want %d", i, got, want)
		}
		for _, table := range []string{"sessions", "tool_calls", "records", "checkpoints", "blobs", "intents"} {
			if got := count(t, db.Q(), "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", table); got != 1 {
				t.Fatalf("table %s missing", table)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prsm.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(context.Background(),
		"INSERT INTO schema_version (version, name, applied_at) VALUES (999, 'future.sql', '')"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = Open(path)
	if err == nil {
		db.Close()
		t.Fatal("Open of a newer schema succeeded")
	}
	if !strings.Contains(err.Error(), "newer") {
		t.Fatalf("error = %v, want it to mention a newer schema", err)
	}
}

func TestDSNEscapes(t *testing.T) {
	got := dsn("/a b/ü?#%/x.db")
	want := "file:/a%20b/%C3%BC%3F%23%25/x.db?" + pragmas
	if got != want {
		t.Fatalf("dsn = %q, want %q", got, want)
	}
}

func TestTxRollsBackOnError(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	boom := errors.New("boom")
	err := db.Tx(ctx, func(q Querier) error {
		mustSession(t, q, "s1", t0)
		if err := InsertRecord(ctx, q, testRecord("s1", "r1", "t1", "a.txt")); err != nil {
			return err
		}
		if _, err := PutBlob(ctx, q, []byte("content")); err != nil {
			return err
		}
		return fmt.Errorf("step: %w", boom)
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx error = %v, want it to wrap boom", err)
	}
	for _, table := range []string{"sessions", "records", "blobs"} {
		if got := count(t, db.Q(), "SELECT COUNT(*) FROM "+table); got != 0 {
			t.Fatalf("%s has %d rows after rollback, want 0", table, got)
		}
	}
}

func TestTxRollsBackOnPanic(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	func() {
		defer func() {
			if p := recover(); p != "kaboom" {
				t.Fatalf("recovered %v, want kaboom", p)
			}
		}()
		db.Tx(ctx, func(q Querier) error {
			mustSession(t, q, "s1", t0)
			panic("kaboom")
		})
	}()
	if got := count(t, db.Q(), "SELECT COUNT(*) FROM sessions"); got != 0 {
		t.Fatalf("sessions has %d rows after panic, want 0", got)
	}
	// The connection went back to the pool and the write lock is free.
	if err := db.Tx(ctx, func(q Querier) error { return CreateSession(ctx, q, &prsm.Session{ID: "s2", CreatedAt: t0}) }); err != nil {
		t.Fatalf("Tx after panic: %v", err)
	}
}

func TestTxCommits(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	if err := db.Tx(ctx, func(q Querier) error {
		mustSession(t, q, "s1", t0)
		return InsertRecord(ctx, q, testRecord("s1", "r1", "t1", "a.txt"))
	}); err != nil {
		t.Fatal(err)
	}
	if got, want := count(t, db.Q(), "SELECT COUNT(*) FROM records"), 1; got != want {
		t.Fatalf("records = %d, want %d", got, want)
	}
}

func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	mustSession(t, db.Q(), "s1", t0)
	const workers, each = 8, 50
	var wg stdsync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				err := db.Tx(ctx, func(q Querier) error {
					// Read then write in one transaction: with a deferred
					// BEGIN this is where SQLITE_BUSY would show up.
					if _, err := pendingCount(ctx, q, "s1"); err != nil {
						return err
					}
					return InsertRecord(ctx, q, testRecord("s1", fmt.Sprintf("r-%d-%d", w, i), "t", "f.txt"))
				})
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("writer: %v", err)
	}
	if got, want := count(t, db.Q(), "SELECT COUNT(*) FROM records"), workers*each; got != want {
		t.Fatalf("records = %d, want %d", got, want)
	}
	if got, want := count(t, db.Q(), "SELECT COUNT(DISTINCT seq) FROM records"), workers*each; got != want {
		t.Fatalf("distinct seq = %d, want %d", got, want)
	}
}

// TestTransactionsShareOneConnection: every transaction runs on the same
// connection, whatever the reads hold meanwhile (a TEMP table is seen by
// its own connection only), so the page cache it warmed stays valid.
func TestTransactionsShareOneConnection(t *testing.T) {
	db := openTestDB(t)
	ctx := context.Background()
	if err := db.Tx(ctx, func(q Querier) error {
		_, err := q.ExecContext(ctx, "CREATE TEMP TABLE pinned (x)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// A read holding a connection: the pool would hand the one the
	// transaction freed to it.
	rows, err := db.Q().QueryContext(ctx, "SELECT 1 UNION ALL SELECT 2")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	rows.Next()
	for i := 0; i < 3; i++ {
		if err := db.Tx(ctx, func(q Querier) error {
			_, err := q.ExecContext(ctx, "INSERT INTO temp.pinned VALUES (1)")
			return err
		}); err != nil {
			t.Fatalf("transaction %d on another connection: %v", i, err)
		}
	}
}

// TestReadWarm: a read through ReadWarm sees what was committed; it runs
// on the transaction connection when that is free, and on the pool while
// a transaction holds it (without waiting for it, and without seeing its
// uncommitted writes).
func TestReadWarm(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	if err := db.Tx(ctx, func(q Querier) error { mustSession(t, q, "s1", time.Now()); return nil }); err != nil {
		t.Fatal(err)
	}
	read := func() (string, Querier) {
		var on Querier
		var name string
		err := db.ReadWarm(ctx, func(q Querier) error {
			on = q
			return q.QueryRowContext(ctx, "SELECT name FROM sessions WHERE id = 's1'").Scan(&name)
		})
		if err != nil {
			t.Fatal(err)
		}
		return name, on
	}
	if name, on := read(); name != "n-s1" {
		t.Fatalf("read %q, want n-s1", name)
	} else if _, ok := on.(*sql.Conn); !ok {
		t.Fatalf("with no transaction running, read on %T, want the transaction connection", on)
	}

	inTx, done := make(chan struct{}), make(chan struct{})
	txErr := make(chan error, 1)
	go func() {
		txErr <- db.Tx(ctx, func(q Querier) error {
			if _, err := q.ExecContext(ctx, "UPDATE sessions SET name = 'uncommitted' WHERE id = 's1'"); err != nil {
				return err
			}
			close(inTx)
			<-done
			return nil
		})
	}()
	<-inTx
	name, on := read() // must not wait for the transaction
	close(done)
	if err := <-txErr; err != nil {
		t.Fatal(err)
	}
	if name != "n-s1" {
		t.Fatalf("read during a transaction: %q, want the committed n-s1", name)
	}
	if on != Querier(db.DB) {
		t.Fatalf("during a transaction, read on %T, want the pool", on)
	}
	if name, _ := read(); name != "uncommitted" {
		t.Fatalf("read after the commit: %q", name)
	}
}

// TestCommitsLeaveCheckpointsToTheCheckpointer: no commit copies the WAL
// into the database file itself (sqlite's automatic checkpoint did so in
// the commit that took the WAL past 1000 pages, and a tool call's answer
// waited for it); every checkpointEvery-th commit has the checkpointer do
// it in the background.
func TestCommitsLeaveCheckpointsToTheCheckpointer(t *testing.T) {
	db := openTestDB(t)
	size := func() int64 {
		fi, err := os.Stat(db.Path())
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	// 200 KB of incompressible content a commit: over 1000 pages of WAL
	// (sqlite's automatic checkpoint) in fewer than checkpointEvery
	// commits.
	put := func(i int) { putRandomBlob(t, db, i, 200<<10) }
	n := int(db.commits.Load())
	if checkpointEvery-1-n < 1000/50 {
		t.Fatalf("%d commits at the start leave too few before a checkpoint", n)
	}
	before := size()
	for i := 0; n+i < checkpointEvery-1; i++ {
		put(i)
	}
	if got := size(); got != before {
		t.Fatalf("the database file went from %d to %d bytes: a commit checkpointed the WAL", before, got)
	}
	for i := 1000; int(db.commits.Load())%checkpointEvery != 0; i++ {
		put(i)
	}
	deadline := time.Now().Add(20 * time.Second)
	for size() < before+int64(checkpointEvery-1-n)*(200<<10) {
		if time.Now().After(deadline) {
			t.Fatalf("the database file is %d bytes 20 s after the %dth commit: no checkpoint ran", size(), checkpointEvery)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The checkpoint waited for readers only briefly; transactions wait
	// busy_timeout again.
	var ms int
	if err := db.Tx(context.Background(), func(q Querier) error {
		return q.QueryRowContext(context.Background(), "PRAGMA busy_timeout").Scan(&ms)
	}); err != nil {
		t.Fatal(err)
	}
	if ms != int(busyWait.Milliseconds()) {
		t.Fatalf("busy_timeout of the transaction connection after a checkpoint: %d ms, want %d", ms, busyWait.Milliseconds())
	}
}

// TestWALStaysSmallUnderReadsAndWrites: with commits one after another,
// then in bursts as tool calls make them, and reads going on all the
// while, the checkpoints keep up and the WAL file is reused from its
// start: it stays a few checkpoints' worth of pages, not everything ever
// written.
func TestWALStaysSmallUnderReadsAndWrites(t *testing.T) {
	db := openTestDB(t)
	ctx := context.Background()
	mustSession(t, db, "s1", t0)
	stop := make(chan struct{})
	var readers stdsync.WaitGroup
	for r := 0; r < 2; r++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := GetSession(ctx, db, "s1"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	const commits, inRow, size = 3000, 2000, 10 << 10
	walSize := func() int64 {
		fi, err := os.Stat(db.Path() + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	// A cycle of checkpointEvery commits and as many while the
	// checkpointer waits is some 6 pages a commit here; sqlite keeps the
	// WAL file as large as its largest cycle.
	bound := int64(16 * checkpointEvery * size)
	for i := 0; i < commits; i++ {
		if i == inRow {
			if n := walSize(); n > bound {
				t.Fatalf("the WAL is %d bytes after %d commits in a row of %d bytes: the checkpoints do not let it be reused", n, i, size)
			}
		}
		putRandomBlob(t, db, i, size)
		if i > inRow && i%30 == 29 {
			time.Sleep(100 * time.Millisecond) // between two bursts of tool calls
		}
	}
	close(stop)
	readers.Wait()
	// 30 MB went through the WAL; a few checkpoints' worth stays.
	if n := walSize(); n > bound {
		t.Fatalf("the WAL is %d bytes after %d commits of %d bytes: the checkpoints do not let it be reused", n, commits, size)
	}
}

// putRandomBlob stores size bytes of incompressible content (seeded by
// seed) as a blob, in a transaction of its own.
func putRandomBlob(t *testing.T, db *DB, seed, size int) {
	t.Helper()
	b := make([]byte, size)
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8)})
	r.Read(b)
	ctx := context.Background()
	if err := db.Tx(ctx, func(q Querier) error {
		_, err := PutBlob(ctx, q, b)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// TestTxManySetsBack: a TxMany commits like Tx, with its connection tuned
// for many rows inside (statement journals in memory, a larger cache);
// after it, the transaction connection is back to the DSN's settings, so
// that an ordinary transaction (a 99 MiB content's chunks) keeps its
// bounded memory (TestBigBlobMemory).
func TestTxManySetsBack(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	mustSession(t, db.Q(), "s1", t0)
	settings := func(q Querier) (cache, temp int) {
		t.Helper()
		if err := q.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&cache); err != nil {
			t.Fatal(err)
		}
		if err := q.QueryRowContext(ctx, "PRAGMA temp_store").Scan(&temp); err != nil {
			t.Fatal(err)
		}
		return cache, temp
	}
	err := db.TxMany(ctx, func(q Querier) error {
		if c, tmp := settings(q); c != -manyCache || tmp != 2 {
			t.Errorf("inside TxMany: cache_size %d, temp_store %d; want %d, 2 (memory)", c, tmp, -manyCache)
		}
		return InsertRecord(ctx, q, testRecord("s1", "r1", "t1", "a.txt"))
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Tx(ctx, func(q Querier) error {
		if c, tmp := settings(q); c != -2000 || tmp != 0 {
			t.Errorf("the next Tx: cache_size %d, temp_store %d; want -2000, 0 (the defaults)", c, tmp)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := GetRecord(ctx, db.Q(), "s1", "r1"); err != nil {
		t.Errorf("TxMany's record: %v", err)
	}
}
