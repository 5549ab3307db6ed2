package engine_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testgit"
)

// TestOverlappingToolCallsClaimTheirOwnChanges: tool calls that run at the
// same time (parallel tool calls, subagents) each get their own changes:
// an Edit or a Write claims the file it names, a Bash what no other
// running call names, whichever completes first.
func TestOverlappingToolCallsClaimTheirOwnChanges(t *testing.T) {
	scannedAndWatched(t, func(t *testing.T, f *fixture) {
		s := f.start(prsm.ModeAuto)
		base := read(t, f.ws, "f.txt")
		// A formatter's Bash runs while a fixer's Edit and a writer's
		// Write come and go.
		if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "bash", ToolName: "Bash", AgentID: "claude/formatter"}); err != nil {
			t.Fatal(err)
		}
		write(t, s.WorktreePath, "keep.txt", "formatted\n")
		f.capture(s, "edit", "Edit", "f.txt")
		f.capture(s, "write", "Write", "new.txt")
		write(t, s.WorktreePath, "f.txt", replaceLine(base, 2, "fixed"))
		write(t, s.WorktreePath, "new.txt", "written\n")
		if got := summary(f.complete(s, "write")); got != "write create new.txt pending/synced" {
			t.Errorf("the Write's records:\n%s", got)
		}
		// The Bash completes before the Edit: the Edit's file is not its.
		write(t, s.WorktreePath, "gen.txt", "generated\n")
		if got := summary(f.complete(s, "bash")); got != "bash:0 create gen.txt pending/synced\nbash:1 modify keep.txt pending/synced" {
			t.Errorf("the Bash's records:\n%s", got)
		}
		if got := summary(f.complete(s, "edit")); got != "edit modify f.txt pending/synced" {
			t.Errorf("the Edit's records:\n%s", got)
		}
		engine.Settle(f.eng)
		for rel, want := range map[string]string{"keep.txt": "formatted\n", "new.txt": "written\n", "gen.txt": "generated\n", "f.txt": replaceLine(base, 2, "fixed")} {
			if got := read(t, f.ws, rel); got != want {
				t.Errorf("workspace %s: %q", rel, got)
			}
		}
	})
}

// TestANewTurnClosesACallThatNeverCompleted: a tool call whose
// PostToolUse never comes (the tool was denied, or its agent died) is
// closed by the next prompt's turn: it holds up neither Watch records nor
// rewinds, and the next call does not take its place.
func TestANewTurnClosesACallThatNeverCompleted(t *testing.T) {
	f := newFixture(t)
	f.watch()
	s := f.start(prsm.ModeAuto)
	first := f.turn(s, 1)
	f.capture(s, "denied", "Write", "notes.txt")
	f.turn(s, 2)
	// Something writes in the worktree between tool calls: a Watch record.
	write(t, s.WorktreePath, "bg.txt", "background\n")
	waitFor(t, "a watch record of bg.txt", func() bool {
		recs, _ := f.eng.Records(f.ctx, s.ID, "", "bg.txt")
		return len(recs) == 1 && recs[0].ToolName == "Watch" && recs[0].SyncState == prsm.SyncSynced
	})
	if got := read(t, f.ws, "bg.txt"); got != "background\n" {
		t.Errorf("workspace bg.txt: %q", got)
	}
	// Rewinding is not held up by the closed call.
	if _, err := f.eng.Rewind(f.ctx, s.ID, first.ID, false); err != nil {
		t.Fatalf("rewind: %v", err)
	}
	if exists(f.ws, "bg.txt") {
		t.Errorf("bg.txt still in the workspace after the rewind")
	}
	// A late PostToolUse of the closed call records nothing.
	if recs := f.complete(s, "denied"); len(recs) != 0 {
		t.Errorf("the closed call's late complete: %s", summary(recs))
	}
}

// TestTurnsCountOnAfterARestart: with automatic checkpoints off no
// checkpoint keeps the turn count; a restarted server counts on from the
// tool calls' message indexes.
func TestTurnsCountOnAfterARestart(t *testing.T) {
	f := newFixture(t)
	off := false
	s, err := f.eng.StartSession(f.ctx, api.StartRequest{AutoCheckpoints: &off})
	if err != nil {
		t.Fatal(err)
	}
	for i, rel := range []string{"t1.txt", "t2.txt"} {
		if _, err := f.eng.Turn(f.ctx, s.ID, api.TurnRequest{}); err != nil {
			t.Fatal(err)
		}
		recs := f.tool(s, rel, "Write", rel, func(wt string) { write(t, wt, rel, "x\n") })
		if len(recs) != 1 || recs[0].MessageIndex != i+1 {
			t.Fatalf("turn %d: %s message index %d", i+1, summary(recs), recs[0].MessageIndex)
		}
	}
	f.restart()
	if _, err := f.eng.Turn(f.ctx, s.ID, api.TurnRequest{}); err != nil {
		t.Fatal(err)
	}
	recs := f.tool(s, "t3", "Write", "t3.txt", func(wt string) { write(t, wt, "t3.txt", "x\n") })
	if len(recs) != 1 || recs[0].MessageIndex != 3 {
		t.Errorf("after the restart: %s message index %d, want 3", summary(recs), recs[0].MessageIndex)
	}
}

// TestClosingACallWithoutAWatcher: a server that does not watch (no
// watcher started) closes a dangling call too, and nothing runs later
// that needs the watcher (it crashed the process: a watch record with no
// context).
func TestClosingACallWithoutAWatcher(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeAuto)
	f.capture(s, "denied", "Write", "notes.txt")
	write(t, s.WorktreePath, "notes.txt", "agent\n")
	f.turn(s, 1)
	time.Sleep(3 * engine.WatchQuiet)
	if recs := f.tool(s, "w1", "Write", "notes.txt", func(wt string) { write(t, wt, "notes.txt", "again\n") }); len(recs) != 1 {
		t.Errorf("the next call: %s", summary(recs))
	}
}

// TestAWriteOutsideTheWorktreeClaimsNothing: a Write whose file is
// outside the worktree (refused, or written elsewhere) changes nothing
// there; while a Bash runs beside it, the Bash's changes stay the Bash's.
func TestAWriteOutsideTheWorktreeClaimsNothing(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeAuto)
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "bash", ToolName: "Bash"}); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "elsewhere.txt")
	args, _ := json.Marshal(map[string]string{"file_path": outside})
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "write", ToolName: "Write", Args: args}); err != nil {
		t.Fatal(err)
	}
	write(t, s.WorktreePath, "gen.txt", "generated\n")
	if recs := f.complete(s, "write"); len(recs) != 0 {
		t.Errorf("the outside Write took %s", summary(recs))
	}
	if got := summary(f.complete(s, "bash")); got != "bash:0 create gen.txt pending/synced" {
		t.Errorf("the Bash's records:\n%s", got)
	}
}

// TestOverlappingShellCallsKeepTheFilesTheirCommandsName: two Bash calls
// open at once (a subagent's and the main agent's). A file the other
// open call's command names, and this one's does not, is not this call's:
// it waits for the call that names it, whichever completes first. A file
// both commands name, or neither, goes to the first to complete.
func TestOverlappingShellCallsKeepTheFilesTheirCommandsName(t *testing.T) {
	cmds := map[string]string{"a": "echo a > from-a.txt; echo a >> both.txt", "b": "echo b > from-b.txt && touch both.txt"}
	for _, order := range [][2]string{{"a", "b"}, {"b", "a"}} {
		first, second := order[0], order[1]
		t.Run(first+"-first", func(t *testing.T) {
			scannedAndWatched(t, func(t *testing.T, f *fixture) {
				s := f.start(prsm.ModeAuto)
				for _, id := range []string{"a", "b"} {
					args, _ := json.Marshal(map[string]string{"command": cmds[id]})
					if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Bash", Args: args, AgentID: "claude/" + id}); err != nil {
						t.Fatal(err)
					}
				}
				want := map[string]string{"from-a.txt": "a\n", "from-b.txt": "b\n", "both.txt": "a\n", "none.txt": "none\n"}
				for rel, content := range want {
					write(t, s.WorktreePath, rel, content)
				}
				wantFirst := fmt.Sprintf("%[1]s:0 create both.txt pending/synced\n%[1]s:1 create from-%[1]s.txt pending/synced\n%[1]s:2 create none.txt pending/synced", first)
				if got := summary(f.complete(s, first)); got != wantFirst {
					t.Errorf("%s's records:\n%s\nwant:\n%s", first, got, wantFirst)
				}
				wantSecond := fmt.Sprintf("%[1]s:0 create from-%[1]s.txt pending/synced", second)
				if got := summary(f.complete(s, second)); got != wantSecond {
					t.Errorf("%s's records:\n%s\nwant:\n%s", second, got, wantSecond)
				}
				engine.Settle(f.eng)
				for rel, content := range want {
					if got := read(t, f.ws, rel); got != content {
						t.Errorf("workspace %s: %q", rel, got)
					}
				}
			})
		})
	}
}

// TestAShellCallWithoutCaptureClaimsTheFilesItsCommandNames: a Bash whose
// pre-tool capture never came still names its files at complete: a file
// its command and a running call's both name is not left to the other.
func TestAShellCallWithoutCaptureClaimsTheFilesItsCommandNames(t *testing.T) {
	scannedAndWatched(t, func(t *testing.T, f *fixture) {
		s := f.start(prsm.ModeAuto)
		args, _ := json.Marshal(map[string]string{"command": "echo a > from-a.txt; touch both.txt"})
		if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "a", ToolName: "Bash", Args: args, AgentID: "claude/a"}); err != nil {
			t.Fatal(err)
		}
		write(t, s.WorktreePath, "from-a.txt", "a\n")
		write(t, s.WorktreePath, "both.txt", "b\n")
		args, _ = json.Marshal(map[string]string{"command": "echo b > both.txt"})
		res, err := f.eng.CompleteToolCall(f.ctx, s.ID, "b", api.CompleteRequest{ToolName: "Bash", Args: args, AgentID: "claude/b"})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := summary(res.Records), "b:0 create both.txt pending/synced"; got != want {
			t.Errorf("b's records:\n%s\nwant:\n%s", got, want)
		}
		if got, want := summary(f.complete(s, "a")), "a:0 create from-a.txt pending/synced"; got != want {
			t.Errorf("a's records:\n%s\nwant:\n%s", got, want)
		}
	})
}

// TestOverlappingShellCallsKeepTheFilesUnderADirectoryTheirCommandsName:
// a directory a running command names (rm -r, cp -r, mv) holds its files:
// what changed under it waits for that call.
func TestOverlappingShellCallsKeepTheFilesUnderADirectoryTheirCommandsName(t *testing.T) {
	scannedAndWatched(t, func(t *testing.T, f *fixture) {
		testgit.Write(t, f.ws, "build/out.txt", "old\n", 0o644)
		testgit.Git(t, f.ws, "add", "-A")
		testgit.Git(t, f.ws, "commit", "-qm", "build")
		s := f.start(prsm.ModeAuto)
		for id, cmd := range map[string]string{"a": "echo a > from-a.txt", "b": "rm -rf build"} {
			args, _ := json.Marshal(map[string]string{"command": cmd})
			if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Bash", Args: args, AgentID: "claude/" + id}); err != nil {
				t.Fatal(err)
			}
		}
		sh(t, s.WorktreePath, "rm -rf build; echo a > from-a.txt")
		if got, want := summary(f.complete(s, "a")), "a:0 create from-a.txt pending/synced"; got != want {
			t.Errorf("a's records:\n%s\nwant:\n%s", got, want)
		}
		if got, want := summary(f.complete(s, "b")), "b:0 delete build/out.txt pending/synced"; got != want {
			t.Errorf("b's records:\n%s\nwant:\n%s", got, want)
		}
		engine.Settle(f.eng)
		if exists(f.ws, "build/out.txt") {
			t.Errorf("build/out.txt still in the workspace")
		}
	})
}
