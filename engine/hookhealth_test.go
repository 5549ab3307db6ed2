package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/api"
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

// A session of an agent prsm has hooks for (its agent id names it, as
// `prsm run -- gemini` sets it) whose changes come only as Watch records,
// with no hook ever reported, warns and says what to run. A session of an
// agent prsm has no hooks for does not.
func TestHookHealthNeverReported(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct{ agent, want string }{
		{"gemini", "prsm hooks install gemini"},
		{"cursor-agent", "prsm hooks install cursor"},
		{"my-script", ""},
	} {
		s, err := f.eng.StartSession(f.ctx, api.StartRequest{AgentID: tc.agent})
		if err != nil {
			t.Fatal(err)
		}
		f.turn(s, 0)
		if h := f.eng.HookHealth(s.ID); h.Warning != "" {
			t.Fatalf("%s: nothing changed yet, warning %q", tc.agent, h.Warning)
		}
		write(t, s.WorktreePath, "w-"+tc.agent+".txt", "by the agent\n")
		if _, err := f.eng.WatchNow(f.ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		h := f.eng.HookHealth(s.ID)
		if h.Agent != "" || h.LastHookAt != nil {
			t.Fatalf("%s: no hook reported, got %+v", tc.agent, h)
		}
		if tc.want == "" {
			if h.Warning != "" {
				t.Fatalf("%s: an agent without hooks, warning %q", tc.agent, h.Warning)
			}
			continue
		}
		if !strings.Contains(h.Warning, "no hooks reported") || !strings.Contains(h.Warning, tc.want) {
			t.Fatalf("%s: warning %q, want one that says %q", tc.agent, h.Warning, tc.want)
		}
		// Its first hook-reported call clears it.
		f.tool(s, "c-"+tc.agent, "Write", "h-"+tc.agent+".txt", func(wt string) { write(t, wt, "h-"+tc.agent+".txt", "x\n") })
		if h := f.eng.HookHealth(s.ID); h.Warning != "" {
			t.Fatalf("%s: after a hook, warning %q", tc.agent, h.Warning)
		}
	}
}
