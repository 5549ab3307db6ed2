// Package testenv builds the real parts tests of the upper layers stand on:
// an engine over a real git workspace and a real sqlite store, closed in
// the right order (engine, then store) when the test ends.
package testenv

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	stdsync "sync"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/worktree"
)

// Engine returns an engine for the git workspace ws whose state lives in
// projectDir (created 0700), logging to log (nil: nowhere).
func Engine(tb testing.TB, ws, projectDir string, log *slog.Logger) *engine.Engine {
	tb.Helper()
	repo, err := worktree.Discover(context.Background(), nil, ws)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(projectDir, 0o700); err != nil {
		tb.Fatal(err)
	}
	db, err := store.Open(filepath.Join(projectDir, "prsm.db"))
	if err != nil {
		tb.Fatal(err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	eng := engine.New(repo, db, projectDir, log)
	tb.Cleanup(func() { eng.Close(); db.Close() })
	return eng
}

// ReportCPU reports the process's CPU time (user and system, of every
// goroutine: the background work after each answer too) per op of b,
// from the call to the deferred return, as cpu-µs/op. On a busy 2-core
// host a round trip's wall time follows its CPU time, and the CPU time is
// the steadier figure to compare two versions by.
func ReportCPU(b *testing.B) func() {
	cpu := func() time.Duration {
		d, err := cpuTime()
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	c0 := cpu()
	return func() {
		b.ReportMetric(float64((cpu()-c0).Microseconds())/float64(b.N), "cpu-µs/op")
	}
}

// HoldWriteLock holds the write lock of the database at path from another
// connection, as another process would, until the returned release is
// called (or the test ends).
func HoldWriteLock(tb testing.TB, path string) (release func()) {
	tb.Helper()
	other, err := store.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	held, done, stop := make(chan struct{}), make(chan error, 1), make(chan struct{})
	go func() {
		done <- other.Tx(context.Background(), func(q store.Querier) error {
			if _, err := q.ExecContext(context.Background(), "DELETE FROM intents WHERE id < 0"); err != nil {
				return err
			}
			close(held)
			<-stop
			return nil
		})
	}()
	select {
	case <-held:
	case err := <-done:
		tb.Fatalf("hold the write lock: %v", err)
	}
	var once stdsync.Once
	release = func() {
		once.Do(func() {
			close(stop)
			if err := <-done; err != nil {
				tb.Error(err)
			}
			other.Close()
		})
	}
	tb.Cleanup(release)
	return release
}
