package engine_test

import (
	"strings"
	"testing"
	"time"
)

// Hook health: a session remembers which agent's hooks reported and when
// the last hook event came. A turn in which changes arrive only as Watch
// records, in a session whose hooks reported before, warns that the hooks
// are not firing in this worktree; a tool call reported in the turn clears
// the warning. Before any hook reported there is no agent and no warning,
// Watch records or not (prsm run's own turn is not a hook event).
func TestHookHealth(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")

	f.turn(s, 0) // prsm run's turn: not a hook
	write(t, s.WorktreePath, "watched.txt", "by hand\n")
	if _, err := f.eng.WatchNow(f.ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	h := f.eng.HookHealth(s.ID)
	if h.Agent != "" || h.LastHookAt != nil || h.Warning != "" {
		t.Fatalf("no hook reported yet: %+v", h)
	}

	before := time.Now()
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 2, "fixed")) })
	h = f.eng.HookHealth(s.ID)
	if h.Agent != "claude" || h.LastHookAt == nil || h.LastHookAt.Before(before) || h.Warning != "" {
		t.Fatalf("after a hook-reported tool call: %+v, want agent claude, a time after %v, no warning", h, before)
	}
	last := *h.LastHookAt

	// The next prompt's turn comes from the hook; then only the watcher.
	f.turn(s, 2)
	write(t, s.WorktreePath, "watched.txt", "agent wrote this\n")
	if _, err := f.eng.WatchNow(f.ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	h = f.eng.HookHealth(s.ID)
	if h.Agent != "claude" || h.LastHookAt == nil || h.LastHookAt.Before(last) {
		t.Fatalf("after the turn: %+v", h)
	}
	if !strings.Contains(h.Warning, "hooks are not firing in this worktree") || !strings.Contains(h.Warning, "claude") {
		t.Fatalf("watch-only turn: warning %q", h.Warning)
	}

	// A hook-reported tool call in the turn: the hooks fire.
	f.tool(s, "e2", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 3, "more")) })
	if h = f.eng.HookHealth(s.ID); h.Warning != "" {
		t.Fatalf("after a hook in the turn: warning %q", h.Warning)
	}
}
