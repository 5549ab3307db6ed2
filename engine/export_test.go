package engine

import (
	"context"
	"log/slog"
	"time"

	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/tracker"
)

// SetCrashHook makes the engine call f at every crash point of its
// multi-step operations (see crashPoint) until the returned func is called.
// A test panics in f to stop an operation there, as kill -9 would.
func SetCrashHook(f func(point string)) (restore func()) {
	crashHook.Store(&f)
	return func() { crashHook.Store(nil) }
}

// HoldFlush keeps the engine's checkpoint objects out of the repository
// (every flush waits) until the returned func is called.
func HoldFlush(e *Engine) (release func()) {
	e.ckpt.writeMu.Lock()
	return e.ckpt.writeMu.Unlock
}

// PauseTrash keeps the engine's bins full, as a bulk job does
// (trashCan.pause), until the returned func is first called.
func PauseTrash(e *Engine) (resume func()) { return e.trash.pause() }

// TrashQueue is how many bins wait for the emptier, and whether an
// emptier runs.
func TrashQueue(e *Engine) (queued int, running bool) {
	e.trash.mu.Lock()
	defer e.trash.mu.Unlock()
	return len(e.trash.queue), e.trash.running
}

// SetBulkChunk sets how many records a bulk job's chunk holds until the
// returned func is called: tests of several chunks use fewer files.
func SetBulkChunk(n int) (restore func()) {
	old := bulkChunk
	bulkChunk = n
	return func() { bulkChunk = old }
}

// Settle waits for the work every session's tool calls do after their
// answers (sync states, captures), for tests that read the store directly.
func Settle(e *Engine) {
	e.sessions.awaitAllAnswered()
	if err := e.ckpt.materializeAll(context.Background()); err != nil {
		panic(err)
	}
}

// AwaitAnswered waits for the work every session's tool calls do after
// their answers, and builds no lazy checkpoint (unlike Settle).
func AwaitAnswered(e *Engine) { e.sessions.awaitAllAnswered() }

// EarlyPlaced counts the early workspace writes that served a tool call.
func EarlyPlaced(e *Engine) int64 { return e.ws.EarlyPlaced.Load() }

// EarlyWatched counts the early workspace writes the watcher started.
func EarlyWatched(e *Engine) int64 { return e.capture.earlyWatched.Load() }

// EarlyParts counts the records made with an early write's parts.
func EarlyParts(e *Engine) int64 { return e.rec.earlyParts.Load() }

// EarlyRedone counts the early workspace writes complete started anew.
func EarlyRedone(e *Engine) int64 { return e.capture.earlyRedone.Load() }

// SetMaxDiffText changes the most text of one diff answer.
func SetMaxDiffText(n int) (restore func()) {
	old := maxDiffText
	maxDiffText = n
	return func() { maxDiffText = old }
}

// SetEarlyExpiry changes how long an early write waits for its complete.
func SetEarlyExpiry(d time.Duration) (restore func()) {
	old := earlyExpiry
	earlyExpiry = d
	return func() { earlyExpiry = old }
}

// HoldWritten makes the watcher's write events wait, before the engine
// sees them, until the returned func is called.
func HoldWritten() (release func()) {
	gate := make(chan struct{})
	f := func(string, string) { <-gate }
	writtenHook.Store(&f)
	return func() {
		writtenHook.Store(nil)
		close(gate)
	}
}

// EarlyPartsOf reports whether an early write of a file known as before
// lends its record parts to the change before -> changed: while it is
// still reading, and once it read read and made them.
func EarlyPartsOf(before, read, changed string) (whileReading, afterRead bool) {
	v := func(s string) sync.Version {
		return sync.Version{Present: true, Mode: 0o100644, Content: []byte(s)}
	}
	w := &earlyWrite{before: v(before), partsDone: make(chan struct{})}
	ch := tracker.Change{Before: v(before), After: v(changed)}
	whileReading = w.partsOf(ch) != nil
	w.after = v(read)
	w.parts = makeRecordParts(w.before, w.after)
	b := store.EncodeBlob(w.after.Content)
	w.parts.blob = &b
	close(w.partsDone)
	return whileReading, w.partsOf(ch) != nil
}

// FailWatcher makes StartWatching's watcher fail to start with err (as
// when no descriptor is left) until the returned func is called.
func FailWatcher(err error) (restore func()) {
	old := newWatcher
	newWatcher = func(*slog.Logger) (*tracker.Watcher, error) { return nil, err }
	return func() { newWatcher = old }
}
