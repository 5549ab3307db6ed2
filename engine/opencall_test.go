package engine_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/store"
)

// restartWatched is restart as `prsm serve` runs it: the new engine
// watches the worktrees before it reconciles.
func (f *fixture) restartWatched() {
	f.t.Helper()
	f.eng = engine.New(f.eng.Repo, f.eng.DB, f.eng.ProjectDir, slog.New(slog.DiscardHandler))
	f.t.Cleanup(f.eng.Close)
	f.watch()
	if _, err := f.eng.Reconcile(f.ctx); err != nil {
		f.t.Fatalf("reconcile after crash: %v", err)
	}
}

// TestRestartClosesCallsACrashLeftOpen: tool calls captured, their tools
// run, and the server killed before their completes are closed at the next
// start, each with what it changed recorded under its own id (not as a
// Reconcile record), so a rewind right after is not refused for ten
// minutes as one in flight. A complete that comes after the restart gets
// those records.
func TestRestartClosesCallsACrashLeftOpen(t *testing.T) {
	for _, watched := range []bool{false, true} {
		t.Run(map[bool]string{false: "scan", true: "watched"}[watched], func(t *testing.T) {
			f := newFixture(t)
			if watched {
				f.watch()
			}
			s := f.start(prsm.ModeAuto)
			base := read(t, f.ws, "f.txt")
			cp := f.turn(s, 1)
			f.tool(s, "e0", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 1, "zero")) })
			// Two calls run at once: an Edit of f.txt and a Bash command.
			f.capture(s, "e1", "Edit", "f.txt")
			args, _ := json.Marshal(map[string]string{"command": "printf 'bash\\n' > keep.txt; echo new > new.txt"})
			if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "b1", ToolName: "Bash", Args: args, AgentID: "claude"}); err != nil {
				t.Fatal(err)
			}
			engine.Settle(f.eng) // the captures are stored
			edited := replaceLine(replaceLine(base, 1, "zero"), 7, "seven")
			write(t, s.WorktreePath, "f.txt", edited)
			sh(t, s.WorktreePath, "printf 'bash\\n' > keep.txt; echo new > new.txt")
			// Killed here: neither complete comes.
			if watched {
				f.restartWatched()
			} else {
				f.restart()
			}
			if open, err := store.OpenToolCalls(f.ctx, f.q(), s.ID); err != nil || len(open) != 0 {
				t.Errorf("tool calls still open after the restart: %v %v", open, err)
			}
			all, err := f.eng.Records(f.ctx, s.ID, "", "")
			if err != nil {
				t.Fatal(err)
			}
			want := "e0 modify f.txt pending/synced\ne1 modify f.txt pending/synced\nb1:0 modify keep.txt pending/synced\nb1:1 create new.txt pending/synced"
			if got := summary(all); got != want {
				t.Errorf("records after the restart:\n%s\nwant:\n%s", got, want)
			}
			for _, r := range all {
				if r.ToolName == "Watch" || strings.HasPrefix(r.ID, "reconcile-") {
					t.Errorf("%s recorded as nobody's: %s", r.ID, r.ToolName)
				}
				if r.ID == "e1" && (r.ToolName != "Edit" || r.AgentID != "claude" || r.MessageIndex != 1) {
					t.Errorf("e1 recorded as %s by %s in turn %d", r.ToolName, r.AgentID, r.MessageIndex)
				}
			}
			f.bothHold(s, "f.txt", edited, "after the restart")
			f.bothHold(s, "keep.txt", "bash\n", "after the restart")
			// The agent's PostToolUse, late: the records made at the start.
			if got := summary(f.complete(s, "b1")); got != "b1:0 modify keep.txt pending/synced\nb1:1 create new.txt pending/synced" {
				t.Errorf("a complete after the restart answered:\n%s", got)
			}
			if _, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false); err != nil {
				t.Fatalf("rewind right after the restart: %v", err)
			}
			f.bothHold(s, "f.txt", base, "after the rewind")
			f.bothHold(s, "keep.txt", "keep\n", "after the rewind")
			if exists(f.ws, "new.txt") || exists(s.WorktreePath, "new.txt") {
				t.Errorf("new.txt left by the rewind")
			}
		})
	}
}

// TestRestartClosesOverlappingShellCallsByTheFilesTheyName: two Bash
// calls a crash left open are closed at the next start, each with the
// file its own command names, not the first with both.
func TestRestartClosesOverlappingShellCallsByTheFilesTheyName(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeAuto)
	for _, id := range []string{"a", "b"} {
		args, _ := json.Marshal(map[string]string{"command": "echo " + id + " > from-" + id + ".txt"})
		if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Bash", Args: args, AgentID: "claude/" + id}); err != nil {
			t.Fatal(err)
		}
	}
	engine.Settle(f.eng) // the captures are stored
	sh(t, s.WorktreePath, "echo a > from-a.txt; echo b > from-b.txt")
	// Killed here: neither complete comes.
	f.restart()
	all, err := f.eng.Records(f.ctx, s.ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	want := "a:0 create from-a.txt pending/synced\nb:0 create from-b.txt pending/synced"
	if got := summary(all); got != want {
		t.Errorf("records after the restart:\n%s\nwant:\n%s", got, want)
	}
	f.bothHold(s, "from-a.txt", "a\n", "after the restart")
	f.bothHold(s, "from-b.txt", "b\n", "after the restart")
}

// TestAClosedCallsChangeIsRecordedByWatch: what a call closed by the next
// turn changed is recorded by Watch, not taken by the next tool call.
func TestAClosedCallsChangeIsRecordedByWatch(t *testing.T) {
	f := newFixture(t)
	f.watch()
	s := f.start(prsm.ModeAuto)
	f.turn(s, 1)
	f.capture(s, "lost", "Write", "notes.txt")
	write(t, s.WorktreePath, "notes.txt", "agent\n") // the tool ran; its PostToolUse is lost
	time.Sleep(800 * time.Millisecond)
	f.turn(s, 2)
	waitFor(t, "a watch record of notes.txt", func() bool {
		recs, _ := f.eng.Records(f.ctx, s.ID, "", "notes.txt")
		return len(recs) == 1 && recs[0].ToolName == "Watch" && recs[0].SyncState == prsm.SyncSynced
	})
	recs := f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 3, "x")) })
	if len(recs) != 1 {
		t.Errorf("an Edit of f.txt got:\n%s", summary(recs))
	}
}

// TestANewTurnClosesACallOpenBeforeARestart: a call captured before a
// restart and never completed is closed by the next turn, which frees
// rewinds.
func TestANewTurnClosesACallOpenBeforeARestart(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeAuto)
	cp := f.turn(s, 1)
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", "agent\n") })
	f.capture(s, "denied", "Write", "notes.txt")
	engine.Settle(f.eng)
	f.restart()
	f.turn(s, 2)
	if _, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false); err != nil {
		t.Errorf("rewind after the next turn: %v", err)
	}
}
