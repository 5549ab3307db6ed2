package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
)

// startCodex starts tool call id as Codex's hook does: tool (Bash or
// apply_patch) with command as its tool_input.command, in the worktree.
func (f *fixture) startCodex(s *prsm.Session, id, tool, command string) {
	f.t.Helper()
	args, _ := json.Marshal(map[string]string{"command": command})
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: tool, Args: args,
		AgentID: "codex", Cwd: s.WorktreePath}); err != nil {
		f.t.Fatalf("start %s: %v", id, err)
	}
}

// records are every record of s, as "id tool_call tool change path".
func (f *fixture) recordLines(s *prsm.Session) string {
	f.t.Helper()
	recs, err := f.eng.Records(f.ctx, s.ID, "", "")
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, strings.Join([]string{r.ID, r.ToolCallID, r.ToolName, r.ChangeType, r.RelPath}, " "))
	}
	return strings.Join(out, "\n")
}

// openCalls are the ids of s's tool calls stored and not completed.
func (f *fixture) openCalls(s *prsm.Session) []string {
	f.t.Helper()
	open, err := store.OpenToolCalls(f.ctx, f.q(), s.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	var ids []string
	for id := range open {
		ids = append(ids, id)
	}
	return ids
}

func patchText(body string) string { return "*** Begin Patch\n" + body + "*** End Patch\n" }

// TestShellSentPatchIsItsOwnCalls: Codex applies an `apply_patch <<'EOF'`
// sent through its shell itself, firing PreToolUse (Bash) and no
// PostToolUse. Its file, already written when the next shell call
// starts, is the patch's call's (named by its text), not the next
// call's; the patch's call is closed when that call completes.
func TestShellSentPatchIsItsOwnCalls(t *testing.T) {
	scannedAndWatched(t, func(t *testing.T, f *fixture) {
		s := f.start(prsm.ModeAuto)
		f.turn(s, 1)
		f.startCodex(s, "call_viaShell", "Bash", "apply_patch <<'EOF'\n"+patchText("*** Add File: via_shell.txt\n+made by the patch\n")+"EOF\n")
		write(t, s.WorktreePath, "via_shell.txt", "made by the patch\n") // Codex applies it; no PostToolUse
		f.startCodex(s, "call_echo", "Bash", "echo made > out.txt")
		sh(t, s.WorktreePath, "echo made > out.txt")
		if got := summary(f.complete(s, "call_echo")); got != "call_echo:0 create out.txt pending/synced" {
			t.Errorf("the next shell call's records:\n%s", got)
		}
		want := "call_viaShell:0 call_viaShell Bash create via_shell.txt\ncall_echo:0 call_echo Bash create out.txt"
		if got := f.recordLines(s); !sameLines(got, want) {
			t.Errorf("records:\n%s\nwant:\n%s", got, want)
		}
		if open := f.openCalls(s); len(open) != 0 {
			t.Errorf("tool calls left open: %v", open)
		}
		f.bothHold(s, "via_shell.txt", "made by the patch\n", "after the calls")
	})
}

// TestPatchAfterAFailedPatchClaimsItsFiles: a failed apply_patch fires
// PreToolUse only; the patch after it still claims the files its text
// names (ok.txt as Edit, under its own id), and the failed one is closed
// once a later call completes, not held open until the turn ends.
func TestPatchAfterAFailedPatchClaimsItsFiles(t *testing.T) {
	scannedAndWatched(t, func(t *testing.T, f *fixture) {
		s := f.start(prsm.ModeAuto)
		f.turn(s, 1)
		f.startCodex(s, "call_fails", "apply_patch", patchText("*** Update File: missing.txt\n@@\n-x\n+y\n"))
		f.startCodex(s, "call_ok", "apply_patch", patchText("*** Add File: ok.txt\n+ok\n"))
		write(t, s.WorktreePath, "ok.txt", "ok\n")
		if got := summary(f.complete(s, "call_ok")); got != "call_ok create ok.txt pending/synced" {
			t.Errorf("the patch's records:\n%s", got)
		}
		if open := f.openCalls(s); len(open) != 0 {
			t.Errorf("tool calls left open after a later call completed: %v", open)
		}
		f.startCodex(s, "call_z", "Bash", "echo z > z.txt")
		sh(t, s.WorktreePath, "echo z > z.txt")
		f.complete(s, "call_z")
		want := "call_ok call_ok Edit create ok.txt\ncall_z:0 call_z Bash create z.txt"
		if got := f.recordLines(s); !sameLines(got, want) {
			t.Errorf("records:\n%s\nwant:\n%s", got, want)
		}
		f.bothHold(s, "ok.txt", "ok\n", "after the calls")
	})
}

// TestPatchNamingAPathOutside: a patch's path outside the worktree is
// recorded for no call, and prsm writes nothing outside; its file inside
// is the patch's.
func TestPatchNamingAPathOutside(t *testing.T) {
	f := newFixture(t)
	f.watch()
	s := f.start(prsm.ModeAuto)
	f.turn(s, 1)
	f.startCodex(s, "call_out", "apply_patch", patchText("*** Add File: ../escape.txt\n+out\n*** Add File: in.txt\n+in\n"))
	write(t, s.WorktreePath, "in.txt", "in\n")
	if got := summary(f.complete(s, "call_out")); got != "call_out create in.txt pending/synced" {
		t.Errorf("the patch's records:\n%s", got)
	}
	for _, dir := range []string{filepath.Dir(s.WorktreePath), filepath.Dir(f.ws)} {
		if _, err := os.Stat(filepath.Join(dir, "escape.txt")); !os.IsNotExist(err) {
			t.Errorf("%s/escape.txt written (%v)", dir, err)
		}
	}
}

// TestMalformedPatchIsClosedWithNoRecords: a patch whose text names no
// file claims nothing: it is closed with no records once a later call
// completes, or at the turn's end, and what changed meanwhile is the
// watcher's.
func TestMalformedPatchIsClosedWithNoRecords(t *testing.T) {
	f := newFixture(t)
	f.watch()
	s := f.start(prsm.ModeAuto)
	f.turn(s, 1)
	f.startCodex(s, "call_bad", "apply_patch", "*** Begin Patch\nnot a patch at all\n")
	f.startCodex(s, "call_b", "Bash", "echo b > b.txt")
	sh(t, s.WorktreePath, "echo b > b.txt")
	if got := summary(f.complete(s, "call_b")); got != "call_b:0 create b.txt pending/synced" {
		t.Errorf("the next call's records:\n%s", got)
	}
	if open := f.openCalls(s); len(open) != 0 {
		t.Errorf("tool calls left open: %v", open)
	}
	// The last call of a turn: closed by its end.
	f.startCodex(s, "call_bad2", "apply_patch", "*** Begin Patch\n*** Frobnicate File: stray.txt\n")
	write(t, s.WorktreePath, "stray.txt", "stray\n")
	if _, err := f.eng.EndTurn(f.ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	want := "call_b:0 call_b Bash create b.txt\nWatch Watch create stray.txt"
	waitFor(t, "a Watch record of stray.txt", func() bool {
		recs, _ := f.eng.Records(f.ctx, s.ID, "", "stray.txt")
		return len(recs) == 1 && recs[0].ToolName == "Watch"
	})
	got := f.recordLines(s)
	var lines []string
	for _, l := range strings.Split(got, "\n") {
		if fs := strings.Fields(l); len(fs) == 5 && fs[2] == "Watch" {
			l = "Watch Watch " + fs[3] + " " + fs[4] // a Watch record's ids are its own
		}
		lines = append(lines, l)
	}
	if !sameLines(strings.Join(lines, "\n"), want) {
		t.Errorf("records:\n%s\nwant:\n%s", got, want)
	}
	if open := f.openCalls(s); len(open) != 0 {
		t.Errorf("tool calls left open: %v", open)
	}
}

// TestTwoPatchesNamingOneFile: of two patches in flight that name the
// same file, the first to complete takes it, and its record says so.
func TestTwoPatchesNamingOneFile(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeAuto)
	f.turn(s, 1)
	f.startCodex(s, "call_p1", "apply_patch", patchText("*** Add File: same.txt\n+one\n"))
	f.startCodex(s, "call_p2", "apply_patch", patchText("*** Update File: same.txt\n@@\n-one\n+two\n*** Add File: other.txt\n+other\n"))
	write(t, s.WorktreePath, "same.txt", "two\n")
	write(t, s.WorktreePath, "other.txt", "other\n")
	recs := f.complete(s, "call_p2")
	if got := summary(recs); got != "call_p2:0 create other.txt pending/synced\ncall_p2:1 create same.txt pending/synced" {
		t.Fatalf("the first to complete got:\n%s", got)
	}
	if n := recs[1].Note; !strings.Contains(n, "call_p1") || !strings.Contains(n, "first to complete") {
		t.Errorf("same.txt's note = %q, want it to name call_p1 and say the first to complete took it", n)
	}
	if n := recs[0].Note; n != "" {
		t.Errorf("other.txt's note = %q, want none", n)
	}
	if got := summary(f.complete(s, "call_p1")); got != "" {
		t.Errorf("the second to complete got:\n%s", got)
	}
}

// sameLines reports whether a and b hold the same lines in any order.
func sameLines(a, b string) bool {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(x) != len(y) {
		return false
	}
	seen := map[string]int{}
	for _, l := range x {
		seen[l]++
	}
	for _, l := range y {
		if seen[l]--; seen[l] < 0 {
			return false
		}
	}
	return true
}

// TestShellSentPatchLastInTurn: a patch sent through the shell as the
// turn's last call is closed by the turn's end, with its file under its
// own id, not a Watch record.
func TestShellSentPatchLastInTurn(t *testing.T) {
	scannedAndWatched(t, func(t *testing.T, f *fixture) {
		s := f.start(prsm.ModeAuto)
		f.turn(s, 1)
		f.startCodex(s, "call_viaShell", "Bash", "cd sub && apply_patch <<'EOF'\n"+patchText("*** Add File: last.txt\n+last\n")+"EOF\n")
		write(t, s.WorktreePath, "sub/last.txt", "last\n")
		if _, err := f.eng.EndTurn(f.ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		if got, want := f.recordLines(s), "call_viaShell:0 call_viaShell Bash create sub/last.txt"; got != want {
			t.Errorf("records:\n%s\nwant:\n%s", got, want)
		}
		if open := f.openCalls(s); len(open) != 0 {
			t.Errorf("tool calls left open: %v", open)
		}
		f.bothHold(s, "sub/last.txt", "last\n", "after the turn")
	})
}
