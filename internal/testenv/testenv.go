// Package testenv builds the real parts tests of the upper layers stand on:
// an engine over a real git workspace and a real sqlite store, closed in
// the right order (engine, then store) when the test ends.
package testenv

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

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
