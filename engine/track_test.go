package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	stdsync "sync"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/store"
)

// fixture is an engine over a workspace with a committed 20-line file.
type fixture struct {
	t   *testing.T
	eng *engine.Engine
	ws  string
	ctx context.Context
}

func lines(n int, tag string) string { return testgit.Lines(n, tag) }

func newFixture(t *testing.T) *fixture {
	eng, ws := newEngine(t)
	testgit.Write(t, ws, "f.txt", lines(20, ""), 0o644)
	testgit.Write(t, ws, "keep.txt", "keep\n", 0o644)
	testgit.Write(t, ws, ".gitignore", "*.log\n", 0o644)
	testgit.Git(t, ws, "add", "-A")
	testgit.Git(t, ws, "commit", "-qm", "files")
	return &fixture{t: t, eng: eng, ws: ws, ctx: context.Background()}
}

func (f *fixture) start(mode string) *prsm.Session {
	f.t.Helper()
	s, err := f.eng.StartSession(f.ctx, api.StartRequest{Mode: mode})
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

// turn starts turn n of s (its automatic checkpoint, returned).
func (f *fixture) turn(s *prsm.Session, n int) *prsm.Checkpoint {
	f.t.Helper()
	cp, err := f.eng.Turn(f.ctx, s.ID, api.TurnRequest{MessageIndex: n})
	if err != nil {
		f.t.Fatal(err)
	}
	return cp
}

// scannedAndWatched runs test twice on a new fixture: with changes found
// by scanning (no watcher), and by the watcher.
func scannedAndWatched(t *testing.T, test func(t *testing.T, f *fixture)) {
	for _, watched := range []bool{false, true} {
		t.Run(map[bool]string{false: "scan", true: "watched"}[watched], func(t *testing.T) {
			f := newFixture(t)
			if watched {
				f.watch()
			}
			test(t, f)
		})
	}
}

// q is the store for a direct read, once the work the engine's tool calls
// leave for after their answers is done (engine.Settle).
func (f *fixture) q() store.Querier {
	engine.Settle(f.eng)
	return f.eng.DB.Q()
}

// tool plays one agent tool call: capture, act in the worktree, complete.
func (f *fixture) tool(s *prsm.Session, id, name, file string, act func(wt string)) []*prsm.Record {
	f.t.Helper()
	f.capture(s, id, name, file)
	act(s.WorktreePath)
	return f.complete(s, id)
}

// capture starts tool call id (of tool name, naming file unless it is "").
func (f *fixture) capture(s *prsm.Session, id, name, file string) {
	f.t.Helper()
	args := "{}"
	if file != "" {
		b, _ := json.Marshal(map[string]string{"file_path": filepath.Join(s.WorktreePath, file)})
		args = string(b)
	}
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: name, Args: json.RawMessage(args), AgentID: "claude"}); err != nil {
		f.t.Fatalf("start %s: %v", id, err)
	}
}

// completeLater, set by PRSM_TEST_COMPLETE_LATER=1, makes every
// complete of the engine's tests (f.complete, f.tool, the chains and their
// fuzz) go through CompleteToolCallLater, as an agent's PostToolUse does,
// and read the records after it. TestCrashAfterRecordStored is the one
// test that cannot run so: its crash is a panic in the complete's work,
// which then runs in the background.
var completeLater = os.Getenv("PRSM_TEST_COMPLETE_LATER") == "1"

// complete completes tool call id.
func (f *fixture) complete(s *prsm.Session, id string) []*prsm.Record {
	f.t.Helper()
	if completeLater {
		if err := f.eng.CompleteToolCallLater(f.ctx, s.ID, id, api.CompleteRequest{}); err != nil {
			f.t.Fatalf("complete %s later: %v", id, err)
		}
		recs, err := f.eng.RecordsOf(f.ctx, s.ID, id)
		if err != nil && !errors.Is(err, prsm.ErrNotFound) {
			f.t.Fatalf("records of %s: %v", id, err)
		}
		if err := f.eng.FillContent(f.ctx, recs); err != nil {
			f.t.Fatal(err)
		}
		return recs
	}
	res, err := f.eng.CompleteToolCall(f.ctx, s.ID, id, api.CompleteRequest{})
	if err != nil {
		f.t.Fatalf("complete %s: %v", id, err)
	}
	return res.Records
}

// bothHold checks that the session's worktree and the workspace both hold
// want at rel (when says at which step).
func (f *fixture) bothHold(s *prsm.Session, rel, want, when string) {
	f.t.Helper()
	for _, root := range []string{s.WorktreePath, f.ws} {
		if got := read(f.t, root, rel); got != want {
			f.t.Errorf("%s: %s %s:\n%s", when, root, rel, got)
		}
	}
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	testgit.Write(t, root, rel, content, 0o644)
}

func read(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func replaceLine(content string, n int, with string) string {
	ls := strings.SplitAfter(content, "\n")
	ls[n-1] = with + "\n"
	return strings.Join(ls, "")
}

func sh(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

func summary(recs []*prsm.Record) string {
	var out []string
	for _, r := range recs {
		out = append(out, fmt.Sprintf("%s %s %s %s/%s", r.ID, r.ChangeType, r.RelPath, r.Status, r.SyncState))
	}
	return strings.Join(out, "\n")
}

func TestEditBecomesRecordAndReachesWorkspace(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	before := read(t, f.ws, "f.txt")
	want := replaceLine(replaceLine(before, 3, "three"), 15, "fifteen")
	recs := f.tool(s, "t1", "str_replace_editor", "f.txt", func(wt string) { write(t, wt, "f.txt", want) })
	if got := summary(recs); got != "t1 modify f.txt pending/synced" {
		t.Fatalf("records:\n%s", got)
	}
	r := recs[0]
	if r.ToolName != "Edit" || r.AgentID != "claude" || r.FilePath != filepath.Join(f.eng.Repo.Root, "f.txt") {
		t.Errorf("record = %+v", r)
	}
	if r.OldContent == nil || *r.OldContent != before || r.NewContent == nil || *r.NewContent != want || r.PreToolContent == nil || *r.PreToolContent != before {
		t.Errorf("contents not carried")
	}
	if got := fmt.Sprint(r.AddedRanges, r.RemovedRanges); got != "[{3 3} {15 15}] [{3 3} {15 15}]" {
		t.Errorf("ranges = %s", got)
	}
	if r.ModeBefore != 0o100644 || r.ModeAfter != 0o100644 || r.SizeAfter != int64(len(want)) {
		t.Errorf("modes/sizes: %o %o %d", r.ModeBefore, r.ModeAfter, r.SizeAfter)
	}
	if got := read(t, f.ws, "f.txt"); got != want {
		t.Errorf("workspace not synced:\n%s", got)
	}
	// A repeated complete is a no-op that returns the same records.
	again, err := f.eng.CompleteToolCall(f.ctx, s.ID, "t1", api.CompleteRequest{})
	if err != nil || summary(again.Records) != summary(recs) {
		t.Errorf("repeat complete: %v %s", err, summary(again.Records))
	}
	all, _ := f.eng.Records(f.ctx, s.ID, "", "")
	if len(all) != 1 {
		t.Errorf("%d records after repeat", len(all))
	}
	// The user's index and HEAD did not move.
	if st := testgit.Git(t, f.ws, "status", "--porcelain"); st != " M f.txt" {
		t.Errorf("user status %q", st)
	}
}

func TestBashChangesEveryKind(t *testing.T) {
	f := newFixture(t)
	testgit.Write(t, f.ws, "old name.txt", "moving\n", 0o644)
	testgit.Write(t, f.ws, "bin/tool", "#!/bin/sh\n", 0o644)
	testgit.Git(t, f.ws, "add", "-A")
	testgit.Git(t, f.ws, "commit", "-qm", "more")
	s := f.start("")
	recs := f.tool(s, "b1", "run_terminal_cmd", "", func(wt string) {
		sh(t, wt, `sed -i 's/line 2 /LINE TWO /' f.txt && rm keep.txt && mv "old name.txt" "new name.txt" &&
			mkdir -p a/b && printf 'x\000y' > a/b/data.bin && chmod +x bin/tool && ln -s f.txt link &&
			echo scratch > .tmp_x && echo log > debug.log && echo rej > x.rej`)
	})
	want := `b1:0 create a/b/data.bin pending/synced
b1:1 modify bin/tool pending/synced
b1:2 modify f.txt pending/synced
b1:3 delete keep.txt pending/synced
b1:4 create link pending/synced
b1:5 create new name.txt pending/synced
b1:6 delete old name.txt pending/synced`
	if got := summary(recs); got != want {
		t.Fatalf("records:\n%s\nwant\n%s", got, want)
	}
	if !recs[0].Binary || recs[0].NewContent != nil {
		t.Errorf("binary record: %+v", recs[0])
	}
	if recs[1].ModeBefore != 0o100644 || recs[1].ModeAfter != 0o100755 {
		t.Errorf("chmod modes %o -> %o", recs[1].ModeBefore, recs[1].ModeAfter)
	}
	if recs[4].ModeAfter != 0o120000 || recs[4].NewContent == nil || *recs[4].NewContent != "f.txt" {
		t.Errorf("symlink record: %+v", recs[4])
	}
	if recs[2].ToolName != "Bash" {
		t.Errorf("tool name %q", recs[2].ToolName)
	}
	// The workspace now equals the worktree (less ignored and scratch files).
	wsTree := testgit.Tree(t, f.ws, testgit.Ignored(t, f.ws))
	wtTree := testgit.Tree(t, s.WorktreePath, map[string]bool{".tmp_x": true, "debug.log": true, "x.rej": true})
	if d := testgit.Diff(wsTree, wtTree); d != "" {
		t.Fatalf("workspace differs from worktree:\n%s", d)
	}
	if got, _, _ := f.eng.Content(f.ctx, s.ID, "b1:0", "after"); string(got) != "x\x00y" {
		t.Errorf("binary content %q", got)
	}
	// Reject everything: the workspace is back to the base, byte for byte.
	if _, err := f.eng.Bulk(f.ctx, s.ID, false, ""); err != nil {
		t.Fatal(err)
	}
	if st := testgit.Git(t, f.ws, "status", "--porcelain"); st != "" {
		t.Errorf("workspace after reject-all:\n%s", st)
	}
	if st := testgit.Git(t, s.WorktreePath, "status", "--porcelain"); st != "?? .tmp_x\n?? x.rej" {
		t.Errorf("worktree after reject-all:\n%s", st)
	}
	// prsm's own reverts never become records.
	more := f.tool(s, "b2", "Bash", "", func(string) {})
	if len(more) != 0 {
		t.Errorf("reverts recorded: %s", summary(more))
	}
}

func TestUserEditsAreMergedOrLeftAlone(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	// The user edits line 1 in the workspace; the agent edits line 10.
	write(t, f.ws, "f.txt", replaceLine(base, 1, "user one"))
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 10, "agent ten")) })
	if got, want := read(t, f.ws, "f.txt"), replaceLine(replaceLine(base, 1, "user one"), 10, "agent ten"); got != want {
		t.Fatalf("merge:\n%s", got)
	}
	// The user and the agent both change line 5: conflict, workspace untouched.
	userVersion := replaceLine(read(t, f.ws, "f.txt"), 5, "user five")
	write(t, f.ws, "f.txt", userVersion)
	recs := f.tool(s, "e2", "Edit", "f.txt", func(wt string) {
		write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 5, "agent five"))
	})
	if recs[0].SyncState != prsm.SyncConflict {
		t.Fatalf("sync state %s, want conflict", recs[0].SyncState)
	}
	if got := read(t, f.ws, "f.txt"); got != userVersion {
		t.Fatalf("workspace overwritten on conflict:\n%s", got)
	}
	// Rejecting the conflicting record leaves the workspace alone and takes
	// the change out of the worktree.
	if _, err := f.eng.Reject(f.ctx, s.ID, "e2"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, f.ws, "f.txt"); got != userVersion {
		t.Errorf("workspace changed by reject of unsynced record")
	}
	if got, want := read(t, s.WorktreePath, "f.txt"), replaceLine(base, 10, "agent ten"); got != want {
		t.Errorf("worktree after reject:\n%s", got)
	}
}

func TestRejectCascadesAndKeepsUserEdits(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 3, "agent three")) })
	// The user edits line 18 of the workspace between the agent's edits.
	write(t, f.ws, "f.txt", replaceLine(read(t, f.ws, "f.txt"), 18, "user eighteen"))
	f.tool(s, "e2", "Edit", "f.txt", func(wt string) {
		write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 8, "agent eight"))
	})
	f.tool(s, "k1", "Write", "keep.txt", func(wt string) { write(t, wt, "keep.txt", "agent keep\n") })
	res, err := f.eng.Reject(f.ctx, s.ID, "e1")
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(res.Records); got != "e1 modify f.txt rejected/synced\ne2 modify f.txt rejected/synced" {
		t.Fatalf("reject answer:\n%s", got)
	}
	if got, want := read(t, f.ws, "f.txt"), replaceLine(base, 18, "user eighteen"); got != want {
		t.Errorf("workspace after cascade:\n%s", got)
	}
	if got := read(t, s.WorktreePath, "f.txt"); got != base {
		t.Errorf("worktree after cascade:\n%s", got)
	}
	// Another file's change is untouched; rejecting again is a no-op.
	if got := read(t, f.ws, "keep.txt"); got != "agent keep\n" {
		t.Errorf("unrelated file reverted")
	}
	if res, err := f.eng.Reject(f.ctx, s.ID, "e1"); err != nil || len(res.Records) != 0 {
		t.Errorf("second reject: %v %v", err, res)
	}
	all, _ := f.eng.Records(f.ctx, s.ID, "", "")
	if got := summary(all); got != "e1 modify f.txt rejected/synced\ne2 modify f.txt rejected/synced\nk1 modify keep.txt pending/synced" {
		t.Errorf("records:\n%s", got)
	}
	// Accepting a rejected record is refused.
	if _, err := f.eng.Accept(f.ctx, s.ID, "e2"); err == nil {
		t.Errorf("accepting a rejected record succeeded")
	}
}

func TestRejectCreatedFileTheUserEdited(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	f.tool(s, "c1", "Write", "new.txt", func(wt string) { write(t, wt, "new.txt", "agent\n") })
	write(t, f.ws, "new.txt", "agent\nuser line\n")
	res, err := f.eng.Reject(f.ctx, s.ID, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if res.Records[0].SyncState != prsm.SyncConflict {
		t.Errorf("sync state %s", res.Records[0].SyncState)
	}
	if got := read(t, f.ws, "new.txt"); got != "agent\nuser line\n" {
		t.Errorf("user's file changed: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(s.WorktreePath, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("worktree file not removed")
	}
	// A deletion comes back on reject.
	f.tool(s, "d1", "Bash", "", func(wt string) { sh(t, wt, "rm keep.txt") })
	if _, err := os.Stat(filepath.Join(f.ws, "keep.txt")); !os.IsNotExist(err) {
		t.Fatalf("delete not synced")
	}
	if _, err := f.eng.Reject(f.ctx, s.ID, "d1"); err != nil {
		t.Fatal(err)
	}
	if read(t, f.ws, "keep.txt") != "keep\n" || read(t, s.WorktreePath, "keep.txt") != "keep\n" {
		t.Errorf("deleted file not restored")
	}
}

func TestReviewMode(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeReview)
	base := read(t, f.ws, "f.txt")
	f.tool(s, "r1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 2, "two")) })
	recs := f.tool(s, "r2", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 4, "four")) })
	if recs[0].SyncState != prsm.SyncPendingReview {
		t.Errorf("sync state %s", recs[0].SyncState)
	}
	if read(t, f.ws, "f.txt") != base {
		t.Fatalf("review mode wrote the workspace")
	}
	res, err := f.eng.Accept(f.ctx, s.ID, "r2")
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(res.Records); got != "r1 modify f.txt accepted/synced\nr2 modify f.txt accepted/synced" {
		t.Errorf("accept answer %s", got)
	}
	if got, want := read(t, f.ws, "f.txt"), replaceLine(replaceLine(base, 2, "two"), 4, "four"); got != want {
		t.Errorf("workspace after accept:\n%s", got)
	}
	all, _ := f.eng.Records(f.ctx, s.ID, "", "")
	if got := summary(all); got != "r1 modify f.txt accepted/synced\nr2 modify f.txt accepted/synced" {
		t.Errorf("records:\n%s", got)
	}
	// Accepting again is a no-op.
	if _, err := f.eng.Accept(f.ctx, s.ID, "r2"); err != nil {
		t.Error(err)
	}
	// A rejected pending_review record never touches the workspace.
	f.tool(s, "r3", "Write", "keep.txt", func(wt string) { write(t, wt, "keep.txt", "x\n") })
	if _, err := f.eng.Reject(f.ctx, s.ID, "r3"); err != nil {
		t.Fatal(err)
	}
	if read(t, f.ws, "keep.txt") != "keep\n" || read(t, s.WorktreePath, "keep.txt") != "keep\n" {
		t.Errorf("keep.txt after review reject")
	}
}

func TestMissedPreCaptureAndBadPaths(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	write(t, s.WorktreePath, "f.txt", "rewritten\n")
	res, err := f.eng.CompleteToolCall(f.ctx, s.ID, "late1", api.CompleteRequest{ToolName: "write_file"})
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(res.Records); got != "late1 modify f.txt pending/synced" || res.Records[0].ToolName != "Write" {
		t.Fatalf("missed capture: %s", got)
	}
	if *res.Records[0].OldContent != lines(20, "") {
		t.Errorf("base not used as old content")
	}
	// An args path outside the worktree is never read; nothing is recorded.
	outside := filepath.Join(t.TempDir(), "secret.txt")
	write(t, filepath.Dir(outside), "secret.txt", "secret\n")
	for i, p := range []string{outside, "../../../../etc/passwd", filepath.Join(s.WorktreePath, "..", "x")} {
		args, _ := json.Marshal(map[string]string{"file_path": p})
		id := fmt.Sprintf("o%d", i)
		if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Write", Args: args}); err != nil {
			t.Fatal(err)
		}
		res, err := f.eng.CompleteToolCall(f.ctx, s.ID, id, api.CompleteRequest{})
		if err != nil || len(res.Records) != 0 {
			t.Errorf("%s: %v %s", p, err, summary(res.Records))
		}
	}
	for _, id := range []string{"", "a/b", "x:1", strings.Repeat("x", 200), "a b"} {
		if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: id}); err == nil {
			t.Errorf("tool call id %q accepted", id)
		}
	}
	if _, err := f.eng.Reject(f.ctx, s.ID, "nosuch"); err == nil {
		t.Errorf("unknown record rejected")
	}
}

func TestTwoSessionsSameFile(t *testing.T) {
	f := newFixture(t)
	a, b := f.start(""), f.start("")
	base := read(t, f.ws, "f.txt")
	f.tool(a, "a1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 2, "session a")) })
	f.tool(b, "b1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 17, "session b")) })
	both := replaceLine(replaceLine(base, 2, "session a"), 17, "session b")
	if got := read(t, f.ws, "f.txt"); got != both {
		t.Fatalf("both sessions not merged:\n%s", got)
	}
	if _, err := f.eng.Reject(f.ctx, a.ID, "a1"); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, f.ws, "f.txt"), replaceLine(base, 17, "session b"); got != want {
		t.Errorf("reject of a dropped b's edit:\n%s", got)
	}
	// Global accept-all accepts b's change.
	res, err := f.eng.BulkAll(f.ctx, true)
	if err != nil || summary(res.Records) != "b1 modify f.txt accepted/synced" {
		t.Errorf("accept everywhere: %v %s", err, summary(res.Records))
	}
}

// TestConcurrentCompletesAndRejects runs many goroutines against one file:
// no update is lost and the final workspace agrees with the records.
func TestConcurrentCompletesAndRejects(t *testing.T) {
	f := newFixture(t)
	sessions := []*prsm.Session{f.start(""), f.start(""), f.start(""), f.start("")}
	var wg stdsync.WaitGroup
	const per = 6
	for si, s := range sessions {
		for w := 0; w < 1; w++ {
			wg.Add(1)
			go func(si, w int, s *prsm.Session) {
				defer wg.Done()
				for i := 0; i < per; i++ {
					id := fmt.Sprintf("s%dw%di%d", si, w, i)
					file := fmt.Sprintf("w%d-%d.txt", w, i)
					if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Write"}); err != nil {
						t.Error(err)
						return
					}
					// Each session edits its own line of the shared file, and its own new files.
					line := 1 + si*5 + i%4
					p := filepath.Join(s.WorktreePath, "f.txt")
					cur, _ := os.ReadFile(p)
					os.WriteFile(p, []byte(replaceLine(string(cur), line, id)), 0o644)
					os.WriteFile(filepath.Join(s.WorktreePath, fmt.Sprintf("s%d-%s", si, file)), []byte(id), 0o644)
					res, err := f.eng.CompleteToolCall(f.ctx, s.ID, id, api.CompleteRequest{})
					if err != nil {
						t.Error(err)
						continue
					}
					if i%3 == 2 && len(res.Records) > 0 {
						if _, err := f.eng.Reject(f.ctx, s.ID, res.Records[0].ID); err != nil {
							t.Error(err)
						}
					}
				}
			}(si, w, s)
		}
	}
	wg.Wait()
	// Every session's worktree state must be reflected in the workspace for
	// the files it created and for its lines of the shared file, and no
	// record may be lost or duplicated.
	ws := strings.SplitAfter(read(t, f.ws, "f.txt"), "\n")
	for si, s := range sessions {
		wt := strings.SplitAfter(read(t, s.WorktreePath, "f.txt"), "\n")
		for l := 1 + si*5; l <= 4+si*5; l++ {
			if ws[l-1] != wt[l-1] {
				t.Errorf("session %d line %d: workspace %q, worktree %q", si, l, ws[l-1], wt[l-1])
			}
		}
		recs, err := f.eng.Records(f.ctx, s.ID, "", "")
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, r := range recs {
			if seen[r.ID] {
				t.Errorf("duplicate record %s", r.ID)
			}
			seen[r.ID] = true
		}
		entries, _ := os.ReadDir(s.WorktreePath)
		for _, e := range entries {
			name := e.Name()
			if !strings.HasPrefix(name, fmt.Sprintf("s%d-", si)) {
				continue
			}
			if got := read(t, f.ws, name); got != read(t, s.WorktreePath, name) {
				t.Errorf("%s: workspace %q worktree %q", name, got, read(t, s.WorktreePath, name))
			}
		}
	}
}

func TestSymlinksAreNeverWrittenThrough(t *testing.T) {
	f := newFixture(t)
	testgit.Symlink(t, f.ws, "link", "f.txt")
	testgit.Write(t, f.ws, "dir/x.txt", "x\n", 0o644)
	testgit.Git(t, f.ws, "add", "-A")
	testgit.Git(t, f.ws, "commit", "-qm", "link")
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	// The agent replaces the symlink with a file: the workspace link is
	// replaced, its target untouched.
	recs := f.tool(s, "l1", "Bash", "", func(wt string) { sh(t, wt, "rm link && echo data > link") })
	if got := summary(recs); got != "l1:0 modify link pending/synced" || recs[0].ModeBefore != 0o120000 || recs[0].ModeAfter != 0o100644 {
		t.Fatalf("records %s modes %o %o", got, recs[0].ModeBefore, recs[0].ModeAfter)
	}
	if fi, err := os.Lstat(filepath.Join(f.ws, "link")); err != nil || !fi.Mode().IsRegular() || read(t, f.ws, "link") != "data\n" {
		t.Errorf("workspace link not replaced: %v %v", fi.Mode(), err)
	}
	if read(t, f.ws, "f.txt") != base {
		t.Errorf("write went through the link")
	}
	// The user swaps a directory for a symlink pointing outside; the agent's
	// edit of a file in it must not land outside.
	outside := t.TempDir()
	write(t, outside, "x.txt", "outside\n")
	if err := os.RemoveAll(filepath.Join(f.ws, "dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.ws, "dir")); err != nil {
		t.Fatal(err)
	}
	recs = f.tool(s, "l2", "Edit", "dir/x.txt", func(wt string) { write(t, wt, "dir/x.txt", "agent\n") })
	if len(recs) != 1 || recs[0].SyncState != prsm.SyncConflict {
		t.Fatalf("records: %s", summary(recs))
	}
	if read(t, outside, "x.txt") != "outside\n" {
		t.Fatalf("wrote outside the workspace")
	}
	// An agent symlink pointing outside is recorded as a link (its target),
	// never followed.
	recs = f.tool(s, "l3", "Bash", "", func(wt string) { sh(t, wt, "ln -s /etc/passwd pw") })
	if len(recs) != 1 || *recs[0].NewContent != "/etc/passwd" || recs[0].ModeAfter != 0o120000 {
		t.Fatalf("records: %s", summary(recs))
	}
	if target, err := os.Readlink(filepath.Join(f.ws, "pw")); err != nil || target != "/etc/passwd" {
		t.Errorf("workspace link: %q %v", target, err)
	}
}

func TestHugeFile(t *testing.T) {
	if testing.Short() {
		t.Skip("100 MB file")
	}
	f := newFixture(t)
	s := f.start("")
	big := make([]byte, 100<<20)
	for i := range big {
		big[i] = byte(i*7 + i>>13)
	}
	recs := f.tool(s, "h1", "Write", "big.bin", func(wt string) {
		if err := os.WriteFile(filepath.Join(wt, "big.bin"), big, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	if len(recs) != 1 || !recs[0].Binary || recs[0].SizeAfter != int64(len(big)) || recs[0].NewContent != nil {
		t.Fatalf("record: %s", summary(recs))
	}
	got, err := os.ReadFile(filepath.Join(f.ws, "big.bin"))
	if err != nil || len(got) != len(big) || string(got[len(got)-100:]) != string(big[len(big)-100:]) || string(got) != string(big) {
		t.Fatalf("workspace copy differs (%d bytes, %v)", len(got), err)
	}
	if _, err := f.eng.Reject(f.ctx, s.ID, "h1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "big.bin")); !os.IsNotExist(err) {
		t.Errorf("big file not removed on reject")
	}
}

// TestRejectEverywhere: global reject-all takes every pending change of
// every session out of the workspace and the worktrees, by reverse merge
// (a user edit made meanwhile stays), and leaves accepted ones alone.
func TestRejectEverywhere(t *testing.T) {
	f := newFixture(t)
	a, b := f.start(""), f.start("")
	base := read(t, f.ws, "f.txt")
	f.tool(a, "a1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 2, "session a")) })
	f.tool(a, "a2", "Write", "new-a.txt", func(wt string) { write(t, wt, "new-a.txt", "from a\n") })
	f.tool(b, "b1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 17, "session b")) })
	f.tool(b, "b2", "Edit", "keep.txt", func(wt string) { write(t, wt, "keep.txt", "kept by b\n") })
	if _, err := f.eng.Accept(f.ctx, b.ID, "b2"); err != nil {
		t.Fatal(err)
	}
	// The user edits line 10 of the shared file meanwhile.
	user := replaceLine(read(t, f.ws, "f.txt"), 10, "the user's line")
	write(t, f.ws, "f.txt", user)

	res, err := f.eng.BulkAll(f.ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(res.Records); got != "a1 modify f.txt rejected/synced\na2 create new-a.txt rejected/synced\nb1 modify f.txt rejected/synced" {
		t.Fatalf("reject everywhere:\n%s", got)
	}
	if got, want := read(t, f.ws, "f.txt"), replaceLine(base, 10, "the user's line"); got != want {
		t.Errorf("workspace f.txt:\n%s\nwant only the user's edit left:\n%s", got, want)
	}
	if exists(f.ws, "new-a.txt") {
		t.Errorf("a's created file is still in the workspace")
	}
	if got := read(t, f.ws, "keep.txt"); got != "kept by b\n" {
		t.Errorf("the accepted change was undone: %q", got)
	}
	for _, s := range []*prsm.Session{a, b} {
		if got := read(t, s.WorktreePath, "f.txt"); got != base {
			t.Errorf("worktree of %s still has its change:\n%s", s.Name, got)
		}
	}
	if exists(a.WorktreePath, "new-a.txt") {
		t.Errorf("a's created file is still in its worktree")
	}
	// Repeating is a no-op.
	if res, err := f.eng.BulkAll(f.ctx, false); err != nil || len(res.Records) != 0 {
		t.Errorf("second reject everywhere: %v %s", err, summary(res.Records))
	}
}

// TestPathThroughLinkedDirectory: a path through a symlinked directory of
// the worktree (lib -> src) is never read or handed to git (which refuses
// the whole batch); the change is recorded at the file's real path.
func TestPathThroughLinkedDirectory(t *testing.T) {
	f := newFixture(t)
	testgit.Write(t, f.ws, "src/a.txt", "a\n", 0o644)
	testgit.Symlink(t, f.ws, "lib", "src")
	testgit.Git(t, f.ws, "add", "-A")
	testgit.Git(t, f.ws, "commit", "-qm", "linked dir")
	s := f.start("")
	args, _ := json.Marshal(map[string]string{"command": "echo x > lib/new.txt && echo b >> lib/a.txt"})
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "b1", ToolName: "Bash", Args: args}); err != nil {
		t.Fatalf("capture: %v", err)
	}
	sh(t, s.WorktreePath, "echo x > lib/new.txt && echo b >> lib/a.txt")
	res, err := f.eng.CompleteToolCall(f.ctx, s.ID, "b1", api.CompleteRequest{})
	if err != nil {
		t.Fatalf("complete: %v", err)
	}
	if got := summary(res.Records); got != "b1:0 modify src/a.txt pending/synced\nb1:1 create src/new.txt pending/synced" {
		t.Fatalf("records:\n%s", got)
	}
	// An Edit naming the file through the link.
	args, _ = json.Marshal(map[string]string{"file_path": filepath.Join(s.WorktreePath, "lib/a.txt")})
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "e1", ToolName: "Edit", Args: args}); err != nil {
		t.Fatalf("capture: %v", err)
	}
	write(t, s.WorktreePath, "src/a.txt", "edited\n")
	res, err = f.eng.CompleteToolCall(f.ctx, s.ID, "e1", api.CompleteRequest{})
	if err != nil || summary(res.Records) != "e1 modify src/a.txt pending/synced" {
		t.Fatalf("edit through the link: %v\n%s", err, summary(res.Records))
	}
	if got := read(t, f.ws, "src/a.txt"); got != "edited\n" {
		t.Fatalf("workspace: %q", got)
	}
}

// TestDotToolCallIDs: "." and ".." would vanish from the URLs that name a
// record; they are refused.
func TestDotToolCallIDs(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	for _, id := range []string{".", "..", "..."} {
		_, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Edit"})
		if !errors.Is(err, prsm.ErrInvalid) {
			t.Errorf("tool_call_id %q: %v", id, err)
		}
	}
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: ".x.", ToolName: "Edit"}); err != nil {
		t.Errorf("tool_call_id .x.: %v", err)
	}
}

// TestAnswerCarriesPreToolContent: a file changed outside any tool call
// before the call starts is recorded with the call (from what the tracker
// knew), and the answer carries the three contents: the known one, what
// the tool found, and what it left; a read of the record says the same.
func TestAnswerCarriesPreToolContent(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	outside := replaceLine(base, 2, "outside")
	write(t, s.WorktreePath, "f.txt", outside)
	tool := replaceLine(outside, 9, "tool")
	recs := f.tool(s, "t1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", tool) })
	if len(recs) != 1 {
		t.Fatalf("records: %s", summary(recs))
	}
	check := func(what string, r *prsm.Record) {
		t.Helper()
		if r.OldContent == nil || *r.OldContent != base || r.NewContent == nil || *r.NewContent != tool ||
			r.PreToolContent == nil || *r.PreToolContent != outside {
			t.Errorf("%s: contents old/pre-tool/new are not base/outside/tool: %v %v %v", what, r.OldContent != nil, r.PreToolContent != nil, r.NewContent != nil)
		}
	}
	check("complete's answer", recs[0])
	read, err := f.eng.RecordsOf(f.ctx, s.ID, "t1")
	if err != nil || len(read) != 1 {
		t.Fatal(err)
	}
	if err := f.eng.FillContent(f.ctx, read); err != nil {
		t.Fatal(err)
	}
	check("record read back", read[0])
}

// TestRepeatedCaptureIsNoOp: a capture of a tool call the session has
// already (captured, completed without a capture, or from before a
// restart) answers with the stored call and changes nothing.
func TestRepeatedCaptureIsNoOp(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	f.tool(s, "t1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", "one\n") })
	// t2 completes without a capture (its row is inserted by complete),
	// then its capture comes late, naming another tool.
	write(t, s.WorktreePath, "keep.txt", "two\n")
	res, err := f.eng.CompleteToolCall(f.ctx, s.ID, "t2", api.CompleteRequest{ToolName: "Write"})
	if err != nil || summary(res.Records) != "t2 modify keep.txt pending/synced" {
		t.Fatalf("complete t2: %v %s", err, summary(res.Records))
	}
	capture := func(id, tool string) *api.ToolCallAnswer {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"file_path": filepath.Join(s.WorktreePath, "f.txt")})
		ans, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: tool, Args: args})
		if err != nil {
			t.Fatalf("capture %s: %v", id, err)
		}
		return ans
	}
	ckpts := func() int {
		t.Helper()
		list, err := f.eng.Checkpoints(f.ctx, s.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	n := ckpts()
	for round, restart := range []bool{false, true} {
		if restart {
			f.restart()
		}
		if ans := capture("t2", "Edit"); ans.ToolName != "Write" {
			t.Fatalf("round %d: late capture of t2 answered %+v, want the stored call (Write)", round, ans)
		}
		if ans := capture("t1", "Bash"); ans.ToolName != "Edit" {
			t.Fatalf("round %d: repeated capture of t1 answered %+v, want the stored call (Edit)", round, ans)
		}
	}
	if got := ckpts(); got != n {
		t.Errorf("repeated captures took %d checkpoints", got-n)
	}
	// A change now is no tool call's: repeating t2's complete returns its
	// records as they were.
	write(t, s.WorktreePath, "f.txt", "three\n")
	again, err := f.eng.CompleteToolCall(f.ctx, s.ID, "t2", api.CompleteRequest{})
	if err != nil || summary(again.Records) != summary(res.Records) {
		t.Fatalf("repeated complete of t2: %v %s", err, summary(again.Records))
	}
}
