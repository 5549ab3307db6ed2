package engine

import (
	"testing"
	"time"
)

// AwaitWarm waits until no warm worktree is being prepared and returns
// the ready one's path ("" when none).
func AwaitWarm(t testing.TB, e *Engine) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		e.warm.pool.mu.Lock()
		filling, ready := e.warm.pool.filling, e.warm.pool.ready
		e.warm.pool.mu.Unlock()
		if !filling {
			if ready == nil {
				return ""
			}
			return ready.path
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("warm worktree still being prepared after 2 minutes")
	return ""
}

// WarmTaken counts the session starts that took a warm worktree.
func WarmTaken(e *Engine) int64 { return e.warm.pool.taken.Load() }

// NoWarmWatch leaves warm worktrees unwatched until the test ends: a
// start checks them with git status.
func NoWarmWatch(t testing.TB) {
	noWarmWatch = true
	t.Cleanup(func() { noWarmWatch = false })
}
