package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/store"
)

// trees returns the workspace and worktree as byte-exact descriptions
// (ignored files left out).
func (f *fixture) trees(s *prsm.Session) (ws, wt map[string]string) {
	f.t.Helper()
	return testgit.Tree(f.t, f.ws, testgit.Ignored(f.t, f.ws)), testgit.Tree(f.t, s.WorktreePath, testgit.Ignored(f.t, s.WorktreePath))
}

func (f *fixture) same(what string, a, b map[string]string) {
	f.t.Helper()
	if d := testgit.Diff(a, b); d != "" {
		f.t.Fatalf("%s:\n%s", what, d)
	}
}

func TestRewindThreeTurns(t *testing.T) {
	f := newFixture(t)
	testgit.Symlink(t, f.ws, "link", "f.txt")
	testgit.Write(t, f.ws, "run.sh", "#!/bin/sh\n", 0o644)
	testgit.Git(t, f.ws, "add", "-A")
	testgit.Git(t, f.ws, "commit", "-qm", "more")
	// An untracked file of the user's, from before the session: never deleted.
	testgit.Write(t, f.ws, "notes.txt", "mine\n", 0o644)
	// The user's HEAD and index bytes: no checkpoint or rewind may touch
	// them (the status changes, as rewinds write workspace files).
	headIndex := func() string {
		st := testgit.State(t, f.ws)
		return st[strings.Index(st, "\nhead="):]
	}
	userRepo := headIndex()
	s := f.start("")

	turn := func(n int, prompt string) *prsm.Checkpoint {
		cp, err := f.eng.Turn(f.ctx, s.ID, api.TurnRequest{MessageIndex: n, Prompt: prompt})
		if err != nil {
			t.Fatal(err)
		}
		return cp
	}
	cp1 := turn(1, "fix the login bug")
	ws1, wt1 := f.trees(s)
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 4, "turn one")) })
	f.tool(s, "b1", "Bash", "", func(wt string) {
		sh(t, wt, "rm link && ln -s keep.txt link && chmod +x run.sh && mkdir -p gen && echo made > gen/out.txt")
	})
	cp2 := turn(2, "now\nthe tests")
	ws2, wt2 := f.trees(s)
	f.tool(s, "b2", "Bash", "", func(wt string) { sh(t, wt, "rm -r gen keep.txt && echo new > added.txt && chmod -x run.sh") })
	f.tool(s, "e2", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 12, "turn two")) })
	turn(3, "done")
	// The user edits an untouched line of f.txt in the workspace.
	write(t, f.ws, "f.txt", replaceLine(read(t, f.ws, "f.txt"), 20, "user twenty"))
	wsBefore, wtBefore := f.trees(s)

	if cp1.Name != "turn 1: fix the login bug" || cp2.Name != "turn 2: now the tests" || cp1.Kind != "auto" || cp1.Tree == "" {
		t.Errorf("turn checkpoints: %+v %+v", cp1, cp2)
	}
	list, _ := f.eng.Checkpoints(f.ctx, s.ID, "")
	// 3 turns + one before each of the 4 file-changing tool calls.
	if len(list) != 7 || list[1].Name != "before Edit: f.txt" || list[1].ToolCallID != "e1" || list[2].Name != "before Bash" {
		for _, c := range list {
			t.Logf("%s %s %q %s", c.ID, c.Kind, c.Name, c.ToolCallID)
		}
		t.Fatalf("%d checkpoints", len(list))
	}

	// Preview first: it lists every operation and changes nothing.
	plan, err := f.eng.RewindPlan(f.ctx, s.ID, cp2.ID)
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, op := range plan.Operations {
		ops = append(ops, fmt.Sprintf("%s %s %v", op.Type, op.Path, op.RecordIDs))
	}
	want := "restore f.txt [e2]\ndelete added.txt [b2:0]\ncreate gen/out.txt [b2:1]\ncreate keep.txt [b2:2]\nrestore run.sh [b2:3]"
	if got := strings.Join(ops, "\n"); got != sortLines(want) {
		t.Fatalf("plan:\n%s\nwant\n%s", got, sortLines(want))
	}
	if len(plan.Conflicts) != 0 || plan.SafetyCheckpointID != "" || !plan.DryRun {
		t.Errorf("plan: %+v", plan)
	}
	if ws, wt := f.trees(s); testgit.Diff(ws, wsBefore) != "" || testgit.Diff(wt, wtBefore) != "" {
		t.Fatalf("preview changed files")
	}

	done, err := f.eng.Rewind(f.ctx, s.ID, cp2.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	_, wt := f.trees(s)
	f.same("worktree after rewind to turn 2", wt2, wt)
	ws, _ := f.trees(s)
	wantWS := copyTree(ws2)
	wantWS["f.txt"] = fmt.Sprintf("%o %q", 0, replaceLine(read(t, s.WorktreePath, "f.txt"), 20, "user twenty"))
	f.same("workspace after rewind to turn 2 (user edit kept)", wantWS, ws)
	recs, _ := f.eng.Records(f.ctx, s.ID, "", "")
	for _, r := range recs {
		undone := r.ToolCallID == "b2" || r.ToolCallID == "e2"
		if undone != (r.Status == prsm.StatusRewound) || r.ToolName == "Rollback" {
			t.Errorf("%s (%s) status %s", r.ID, r.ToolName, r.Status)
		}
	}

	// Rolling back to the safety checkpoint undoes the rollback.
	if _, err := f.eng.Rewind(f.ctx, s.ID, done.SafetyCheckpointID, false); err != nil {
		t.Fatal(err)
	}
	ws, wt = f.trees(s)
	f.same("worktree after undoing the rollback", wtBefore, wt)
	f.same("workspace after undoing the rollback", wsBefore, ws)

	// All the way back to turn 1, after git gc pruned everything loose.
	if err := f.eng.FlushObjects(f.ctx); err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, f.ws, "gc", "-q", "--prune=now")
	if _, err := f.eng.Rewind(f.ctx, s.ID, cp1.ID, false); err != nil {
		t.Fatal(err)
	}
	ws, wt = f.trees(s)
	f.same("worktree at turn 1", wt1, wt)
	wantWS = copyTree(ws1)
	wantWS["f.txt"] = fmt.Sprintf("%o %q", 0, replaceLine(read(t, s.WorktreePath, "f.txt"), 20, "user twenty"))
	f.same("workspace at turn 1", wantWS, ws)
	if read(t, f.ws, "notes.txt") != "mine\n" {
		t.Errorf("the user's untracked file is gone")
	}
	if got := headIndex(); got != userRepo {
		t.Errorf("checkpoints and rewinds changed the user's HEAD or index:\n%s\nwas\n%s", got, userRepo)
	}
}

func copyTree(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortLines(s string) string {
	ls := strings.Split(s, "\n")
	for i := range ls {
		for j := i + 1; j < len(ls); j++ {
			if strings.Fields(ls[j])[1] < strings.Fields(ls[i])[1] {
				ls[i], ls[j] = ls[j], ls[i]
			}
		}
	}
	return strings.Join(ls, "\n")
}

func TestNamedCheckpoints(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	other := f.start("")
	cp, err := f.eng.CreateCheckpoint(f.ctx, s.ID, api.CheckpointRequest{Name: "before refactor", Annotation: "Login works here"})
	if err != nil {
		t.Fatal(err)
	}
	if cp.Kind != prsm.CheckpointManual || cp.Annotation != "Login works here" {
		t.Errorf("checkpoint %+v", cp)
	}
	if _, err := f.eng.Annotate(f.ctx, s.ID, cp.ID[:6], "login AND signup work"); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.eng.Checkpoints(f.ctx, s.ID, "SIGNUP"); len(got) != 1 || got[0].Annotation != "login AND signup work" {
		t.Errorf("grep: %+v", got)
	}
	if got, _ := f.eng.Checkpoints(f.ctx, s.ID, "nothing like it"); len(got) != 0 {
		t.Errorf("grep matched %d", len(got))
	}
	// Another session's checkpoint is not found here.
	if _, _, err := f.eng.Checkpoint(f.ctx, other.ID, cp.ID); !errors.Is(err, prsm.ErrNotFound) {
		t.Errorf("other session: %v", err)
	}
	for _, bad := range []api.CheckpointRequest{{Name: ""}, {Name: "x\x1b"}, {Name: "ok", Annotation: strings.Repeat("a", 5000)}, {Name: "ok", Annotation: "bad\x00"}} {
		if _, err := f.eng.CreateCheckpoint(f.ctx, s.ID, bad); !errors.Is(err, prsm.ErrInvalid) {
			t.Errorf("%q: %v", bad.Name, err)
		}
	}
	for i := 1; i < engine.MaxNamedCheckpoints; i++ {
		if _, err := f.eng.CreateCheckpoint(f.ctx, s.ID, api.CheckpointRequest{Name: fmt.Sprint("n", i)}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = f.eng.CreateCheckpoint(f.ctx, s.ID, api.CheckpointRequest{Name: "51st"})
	var pe *prsm.Error
	if !errors.As(err, &pe) || pe.Code != "too_many_checkpoints" {
		t.Fatalf("51st: %v", err)
	}
	if _, err := f.eng.DeleteCheckpoint(f.ctx, s.ID, cp.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.CreateCheckpoint(f.ctx, s.ID, api.CheckpointRequest{Name: "after delete"}); err != nil {
		t.Errorf("after delete: %v", err)
	}
	if _, _, err := f.eng.Checkpoint(f.ctx, s.ID, cp.ID); !errors.Is(err, prsm.ErrNotFound) {
		t.Errorf("deleted checkpoint: %v", err)
	}
	if err := f.eng.FlushObjects(f.ctx); err != nil {
		t.Fatal(err)
	}
	refs := testgit.Git(t, f.ws, "for-each-ref", "refs/prsm/"+s.ID)
	if strings.Contains(refs, cp.ID) || !strings.Contains(refs, "/head") {
		t.Errorf("refs:\n%s", refs)
	}
}

func TestRollbackPreviewWarnsAndBlocks(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	cp, _ := f.eng.Turn(f.ctx, s.ID, api.TurnRequest{MessageIndex: 1})
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 5, "agent five")) })
	if _, err := f.eng.Accept(f.ctx, s.ID, "e1"); err != nil {
		t.Fatal(err)
	}
	// The user edits the same line in the workspace.
	userVersion := replaceLine(read(t, f.ws, "f.txt"), 5, "user five")
	write(t, f.ws, "f.txt", userVersion)
	plan, err := f.eng.RewindPlan(f.ctx, s.ID, cp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Warnings) != 1 || !strings.Contains(plan.Warnings[0], "accepted change e1") {
		t.Errorf("warnings %v", plan.Warnings)
	}
	if len(plan.Conflicts) != 1 || plan.Conflicts[0].Path != "f.txt" {
		t.Errorf("conflicts %v", plan.Conflicts)
	}
	// A tool call in flight blocks the rollback with a conflict.
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "busy", ToolName: "Bash"}); err != nil {
		t.Fatal(err)
	}
	_, err = f.eng.Rewind(f.ctx, s.ID, cp.ID, false)
	var pe *prsm.Error
	if !errors.As(err, &pe) || pe.Code != "tool_call_in_flight" {
		t.Fatalf("in flight: %v", err)
	}
	f.eng.CompleteToolCall(f.ctx, s.ID, "busy", api.CompleteRequest{})
	if _, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false); err != nil {
		t.Fatal(err)
	}
	if read(t, f.ws, "f.txt") != userVersion {
		t.Errorf("conflicting workspace file was changed")
	}
	if read(t, s.WorktreePath, "f.txt") != base {
		t.Errorf("worktree not rewound")
	}
	if _, err := f.eng.Rewind(f.ctx, s.ID, "nosuch", true); !errors.Is(err, prsm.ErrNotFound) {
		t.Errorf("unknown checkpoint: %v", err)
	}
}

func TestSelectorRollback(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	f.tool(s, "a1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 1, "a one")) })
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "x1", ToolName: "Edit", AgentID: "other"}); err != nil {
		t.Fatal(err)
	}
	write(t, s.WorktreePath, "f.txt", replaceLine(read(t, s.WorktreePath, "f.txt"), 10, "other ten"))
	f.eng.CompleteToolCall(f.ctx, s.ID, "x1", api.CompleteRequest{})
	f.tool(s, "a2", "Write", "new.txt", func(wt string) { write(t, wt, "new.txt", "n\n") })

	// Roll back the other agent's change only: its line goes, the rest stays.
	plan, err := f.eng.SelectRewind(f.ctx, s.ID, api.RollbackRequest{AgentID: "other"})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Operations) != 1 || plan.Operations[0].Path != "f.txt" || plan.SafetyCheckpointID == "" {
		t.Fatalf("plan %+v", plan)
	}
	if got, want := read(t, f.ws, "f.txt"), replaceLine(base, 1, "a one"); got != want {
		t.Errorf("workspace:\n%s", got)
	}
	// --last 1 removes the created file.
	if _, err := f.eng.SelectRewind(f.ctx, s.ID, api.RollbackRequest{Last: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("new.txt still there")
	}
	// --file with dry run changes nothing.
	plan, err = f.eng.SelectRewind(f.ctx, s.ID, api.RollbackRequest{File: "f.txt", DryRun: true})
	if err != nil || !plan.DryRun || len(plan.Operations) != 1 {
		t.Fatalf("dry run: %+v %v", plan, err)
	}
	if read(t, f.ws, "f.txt") != replaceLine(base, 1, "a one") {
		t.Errorf("dry run changed the workspace")
	}
	for _, bad := range []api.RollbackRequest{{}, {Last: 1, AgentID: "x"}, {After: "yesterday"}, {File: "../x"}} {
		if _, err := f.eng.SelectRewind(f.ctx, s.ID, bad); !errors.Is(err, prsm.ErrInvalid) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// refuseInserts makes the store refuse every row inserted into table
// (a trigger), until allow is called.
func (f *fixture) refuseInserts(table string) (allow func()) {
	f.t.Helper()
	if _, err := f.eng.DB.ExecContext(f.ctx, `CREATE TRIGGER refuse_`+table+` BEFORE INSERT ON `+table+`
		BEGIN SELECT RAISE(ABORT, 'inserts refused'); END`); err != nil {
		f.t.Fatal(err)
	}
	return func() {
		f.t.Helper()
		if _, err := f.eng.DB.ExecContext(f.ctx, "DROP TRIGGER refuse_"+table); err != nil {
			f.t.Fatal(err)
		}
	}
}

// TestFailedAutoCheckpointDoesNotStopTheCall: the checkpoint before a tool
// call commits with the call; when storing it fails, the call is stored
// without it and goes on.
func TestFailedAutoCheckpointDoesNotStopTheCall(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	allow := f.refuseInserts("checkpoints")
	want := replaceLine(read(t, f.ws, "f.txt"), 4, "four")
	recs := f.tool(s, "e1", "Edit", "f.txt", func(wt string) {
		// The call itself was stored at its capture, before the tool ran.
		if _, err := store.GetToolCall(f.ctx, f.q(), s.ID, "e1"); err != nil {
			t.Errorf("the call was not stored without its checkpoint: %v", err)
		}
		write(t, wt, "f.txt", want)
	})
	if got := summary(recs); got != "e1 modify f.txt pending/synced" {
		t.Fatalf("records: %s", got)
	}
	if got := read(t, f.ws, "f.txt"); got != want {
		t.Errorf("workspace: %q", got)
	}
	list, err := f.eng.Checkpoints(f.ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list {
		if c.ToolCallID == "e1" {
			t.Errorf("a checkpoint of e1 was stored: %+v", c)
		}
	}
	if rows, _ := store.ListPending(f.ctx, f.q()); len(rows) != 0 {
		t.Errorf("%d pending object rows of a checkpoint never stored", len(rows))
	}
	// Once checkpoints can be stored again, the next call has one.
	allow()
	f.tool(s, "e2", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(want, 5, "five")) })
	list, _ = f.eng.Checkpoints(f.ctx, s.ID, "")
	if len(list) == 0 || list[len(list)-1].ToolCallID != "e2" || list[len(list)-1].FilesChanged != 1 {
		t.Errorf("no checkpoint before e2 with e1's change: %+v", list)
	}
}

// TestCaptureStoredBeforeReads: a pre-tool capture answers before its row
// and checkpoint are stored, and complete before its records' sync states
// are; whatever reads the session next sees them stored.
func TestCaptureStoredBeforeReads(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	content := read(t, f.ws, "f.txt")
	for i := 0; i < 20; i++ {
		id := fmt.Sprintf("e%d", i)
		args, _ := json.Marshal(map[string]string{"file_path": filepath.Join(s.WorktreePath, "f.txt")})
		if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Edit", Args: args}); err != nil {
			t.Fatal(err)
		}
		list, err := f.eng.Checkpoints(f.ctx, s.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != i+1 || list[i].ToolCallID != id {
			t.Fatalf("right after the capture of %s: %d checkpoints, want %d", id, len(list), i+1)
		}
		content = replaceLine(content, 1+i%5, id)
		write(t, s.WorktreePath, "f.txt", content)
		res, err := f.eng.CompleteToolCall(f.ctx, s.ID, id, api.CompleteRequest{})
		if err != nil || summary(res.Records) != id+" modify f.txt pending/synced" {
			t.Fatalf("complete %s: %s %v", id, summary(res.Records), err)
		}
		// The sync state is stored after the answer, and before any read.
		recs, err := f.eng.RecordsOf(f.ctx, s.ID, id)
		if err != nil || summary(recs) != id+" modify f.txt pending/synced" {
			t.Fatalf("read right after complete %s: %s %v", id, summary(recs), err)
		}
	}
}

// TestRefusedCaptureDoesNotStopTheCall: when the store refuses a pre-tool
// capture, which commits after the answer, the agent is not stopped and
// complete records the change against the known state.
func TestRefusedCaptureDoesNotStopTheCall(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	allow := f.refuseInserts("tool_calls")
	args, _ := json.Marshal(map[string]string{"file_path": filepath.Join(s.WorktreePath, "f.txt")})
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "e1", ToolName: "Edit", Args: args}); err != nil {
		t.Fatalf("start answered %v; want the agent to go on", err)
	}
	if _, err := store.GetToolCall(f.ctx, f.q(), s.ID, "e1"); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("refused capture stored: %v", err)
	}
	if list, _ := f.eng.Checkpoints(f.ctx, s.ID, ""); len(list) != 0 {
		t.Errorf("checkpoint of a refused capture: %+v", list)
	}
	if rows, _ := store.ListPending(f.ctx, f.q()); len(rows) != 0 {
		t.Errorf("%d pending object rows of a checkpoint never stored", len(rows))
	}
	allow()
	want := replaceLine(read(t, f.ws, "f.txt"), 2, "two")
	write(t, s.WorktreePath, "f.txt", want)
	res, err := f.eng.CompleteToolCall(f.ctx, s.ID, "e1", api.CompleteRequest{ToolName: "Edit", Args: args})
	if err != nil || summary(res.Records) != "e1 modify f.txt pending/synced" {
		t.Fatalf("complete: %s %v", summary(res.Records), err)
	}
	if got := read(t, f.ws, "f.txt"); got != want {
		t.Errorf("workspace: %q", got)
	}
	// The next call is captured as usual.
	f.tool(s, "e2", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(want, 3, "three")) })
	if list, _ := f.eng.Checkpoints(f.ctx, s.ID, ""); len(list) != 1 || list[0].ToolCallID != "e2" {
		t.Errorf("checkpoints after e2: %+v", list)
	}
}

// TestAutoCheckpointsSettingPerSession: a session started with
// auto_checkpoints false takes no automatic checkpoint, at a turn or
// before a tool call, however many come; another session of the same
// engine, interleaved with it, takes one at each. The setting is read
// once per session and kept apart per session.
func TestAutoCheckpointsSettingPerSession(t *testing.T) {
	f := newFixture(t)
	off := false
	quiet, err := f.eng.StartSession(f.ctx, api.StartRequest{AutoCheckpoints: &off})
	if err != nil {
		t.Fatal(err)
	}
	busy := f.start("")
	for i := 0; i < 3; i++ {
		for _, s := range []*prsm.Session{quiet, busy} {
			if _, err := f.eng.Turn(f.ctx, s.ID, api.TurnRequest{}); err != nil {
				t.Fatal(err)
			}
			id := fmt.Sprintf("t%d", i)
			f.tool(s, id, "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", lines(20, s.ID+id)) })
		}
	}
	count := func(s *prsm.Session) int {
		cps, err := f.eng.Checkpoints(f.ctx, s.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, c := range cps {
			if c.Kind == prsm.CheckpointAuto {
				n++
			}
		}
		return n
	}
	if n := count(quiet); n != 0 {
		t.Errorf("session with auto_checkpoints false has %d automatic checkpoints", n)
	}
	if n := count(busy); n != 6 {
		t.Errorf("session with automatic checkpoints has %d, want 6 (3 turns, 3 tool calls)", n)
	}
}
