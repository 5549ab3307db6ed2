package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/store"
)

func (f *fixture) watch() {
	f.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f.t.Cleanup(func() { cancel(); f.eng.StopWatching() })
	if err := f.eng.StartWatching(ctx); err != nil {
		f.t.Fatal(err)
	}
}

// TestWatcherDrivenToolCalls: with the watcher on, a Bash call's changes
// are found from the watcher's dirty set, a new directory filled at once
// included, and nothing is recorded twice.
func TestWatcherDrivenToolCalls(t *testing.T) {
	f := newFixture(t)
	f.watch()
	s := f.start("")
	recs := f.tool(s, "b1", "Bash", "", func(wt string) {
		sh(t, wt, "sed -i 's/line 3 /LINE 3 /' f.txt && mkdir -p a/b && echo c > a/b/c && rm keep.txt && echo x > .tmp_scratch")
	})
	if got := summary(recs); got != "b1:0 create a/b/c pending/synced\nb1:1 modify f.txt pending/synced\nb1:2 delete keep.txt pending/synced" {
		t.Fatalf("records:\n%s", got)
	}
	if read(t, f.ws, "a/b/c") != "c\n" {
		t.Errorf("not synced")
	}
	// A moved directory (reported only as a rename) is still seen in full.
	recs = f.tool(s, "b2", "Bash", "", func(wt string) { sh(t, wt, "mv a z") })
	if got := summary(recs); got != "b2:0 delete a/b/c pending/synced\nb2:1 create z/b/c pending/synced" {
		t.Fatalf("records after mv:\n%s", got)
	}
	if more := f.tool(s, "b3", "Bash", "", func(string) {}); len(more) != 0 {
		t.Errorf("recorded twice: %s", summary(more))
	}
}

// TestWatchRecords: changes with no tool call become Watch records, one
// pseudo tool call per quiet period; none while a tool call is in flight.
func TestWatchRecords(t *testing.T) {
	f := newFixture(t)
	f.watch()
	s := f.start("")
	write(t, s.WorktreePath, "w1.txt", "one\n")
	write(t, s.WorktreePath, "w2.txt", "two\n")
	var recs []*prsm.Record
	for i := 0; i < 200; i++ {
		time.Sleep(25 * time.Millisecond)
		recs, _ = f.eng.Records(f.ctx, s.ID, "", "")
		if len(recs) == 2 && recs[1].SyncState == prsm.SyncSynced {
			break
		}
	}
	if len(recs) != 2 || recs[0].ToolName != "Watch" || !strings.HasPrefix(recs[0].ID, "watch-") || recs[0].ToolCallID != recs[1].ToolCallID {
		t.Fatalf("watch records: %s", summary(recs))
	}
	if read(t, f.ws, "w2.txt") != "two\n" {
		t.Errorf("watch record not synced")
	}
	// While a tool call runs, its changes are its own.
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "t1", ToolName: "Bash"}); err != nil {
		t.Fatal(err)
	}
	write(t, s.WorktreePath, "by-tool.txt", "t\n")
	time.Sleep(3 * engine.WatchQuiet)
	if got, _ := f.eng.WatchNow(f.ctx, s.ID); len(got) != 0 {
		t.Errorf("watch took a tool call's change: %s", summary(got))
	}
	res, err := f.eng.CompleteToolCall(f.ctx, s.ID, "t1", api.CompleteRequest{})
	if err != nil || summary(res.Records) != "t1:0 create by-tool.txt pending/synced" {
		t.Fatalf("tool call records: %v %s", err, summary(res.Records))
	}
}

// TestReconcileAfterRestart: a second engine on the same store (a restarted
// server) records what changed while it was down, ends sessions whose
// worktree vanished, prunes prsm's orphan worktrees and keeps pending work.
func TestReconcileAfterRestart(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	gone := f.start("")
	committed := f.start("")
	testgit.Git(t, committed.WorktreePath, "commit", "--allow-empty", "-qm", "the agent's own commit")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", "edited\n") })
	// Down time: the agent keeps working, a worktree is deleted by hand,
	// and an orphan prsm worktree dir lies around.
	write(t, s.WorktreePath, "while-down.txt", "down\n")
	os.Remove(filepath.Join(s.WorktreePath, "keep.txt"))
	for _, wt := range []string{gone.WorktreePath, committed.WorktreePath} {
		if err := os.RemoveAll(wt); err != nil {
			t.Fatal(err)
		}
	}
	orphan := filepath.Join(f.eng.WorktreeDir(), "0123456789ab")
	testgit.Git(t, f.ws, "worktree", "add", "-q", "-b", "prsm/0123456789ab", orphan)
	// A directory git does not know as a worktree is not prsm's to delete.
	stranger := filepath.Join(f.eng.WorktreeDir(), "fedcba987654")
	os.MkdirAll(stranger, 0o755)

	eng2 := engine.New(f.eng.Repo, f.eng.DB, f.eng.ProjectDir, slog.New(slog.DiscardHandler))
	t.Cleanup(eng2.Close)
	rep, err := eng2.Reconcile(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rep.Records {
		got = append(got, r.ID+" "+r.ChangeType+" "+r.RelPath+" "+r.AgentID)
	}
	p := "reconcile-" + s.ID[:8]
	if want := p + "-0 delete keep.txt unknown\n" + p + "-1 create while-down.txt unknown"; strings.Join(got, "\n") != want {
		t.Fatalf("reconciled:\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
	if read(t, f.ws, "while-down.txt") != "down\n" {
		t.Errorf("reconciled change not synced")
	}
	if strings.Join(rep.Vanished, ",") != gone.ID+","+committed.ID {
		t.Errorf("vanished: %v", rep.Vanished)
	}
	// Both end and say why; the branch goes unless the agent committed on it.
	if g, _ := eng2.Session(f.ctx, gone.ID); g.Status != prsm.SessionEnded || g.Note != "its worktree was deleted by hand; its records stay readable" {
		t.Errorf("vanished session: status %s, note %q", g.Status, g.Note)
	}
	if b := testgit.Git(t, f.ws, "branch", "--list", gone.Branch); b != "" {
		t.Errorf("branch of the vanished session kept: %s", b)
	}
	if c, _ := eng2.Session(f.ctx, committed.ID); c.Status != prsm.SessionEnded || !strings.HasSuffix(c.Note, "; branch "+committed.Branch+" is kept") {
		t.Errorf("vanished session with a commit: status %s, note %q", c.Status, c.Note)
	}
	if b := testgit.Git(t, f.ws, "branch", "--list", committed.Branch); b == "" {
		t.Errorf("the branch holding the agent's commit was deleted")
	}
	if len(rep.Pruned) != 1 || rep.Pruned[0] != "0123456789ab" {
		t.Errorf("pruned: %v", rep.Pruned)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("orphan kept")
	}
	if _, err := os.Stat(s.WorktreePath); err != nil {
		t.Errorf("active worktree pruned")
	}
	if _, err := os.Stat(stranger); err != nil {
		t.Errorf("unknown directory deleted")
	}
	if b := testgit.Git(t, f.ws, "branch", "--list", "prsm/0123456789ab"); b != "" {
		t.Errorf("orphan branch kept: %s", b)
	}
	// Records survive and a second reconcile finds nothing new.
	if rep2, err := eng2.Reconcile(f.ctx); err != nil || len(rep2.Records) != 0 {
		t.Errorf("second reconcile: %v %d", err, len(rep2.Records))
	}
	all, _ := store.ListRecords(f.ctx, f.q(), store.RecordFilter{SessionID: s.ID})
	if len(all) != 3 {
		t.Errorf("%d records after restart", len(all))
	}
	testgit.Git(t, f.ws, "worktree", "list")
}

// TestCrashRecovery: operations a crash cut off (written down as intents)
// are finished at the next start, and temp files of torn writes are removed.
func TestCrashRecovery(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeReview)
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", "agent\n") })
	f.tool(s, "e2", "Write", "keep.txt", func(wt string) { write(t, wt, "keep.txt", "agent keep\n") })
	// Crash 1: an accept was written down, then the server died before it
	// applied anything. Crash 2: a torn write left a temp file.
	r1, _ := store.GetRecord(f.ctx, f.q(), s.ID, "e1")
	if _, err := store.AddIntent(f.ctx, f.eng.DB.Q(), s.ID, "accept", []byte(`{"record":"e1"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := store.AddIntent(f.ctx, f.eng.DB.Q(), s.ID, "revert", []byte(`{"record":"e2"}`)); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(f.ws, ".prsm-tmp-00000deadbeef")
	write(t, f.ws, ".prsm-tmp-00000deadbeef", "half")

	eng2 := engine.New(f.eng.Repo, f.eng.DB, f.eng.ProjectDir, slog.New(slog.DiscardHandler))
	t.Cleanup(eng2.Close)
	if _, err := eng2.Reconcile(f.ctx); err != nil {
		t.Fatal(err)
	}
	if read(t, f.ws, "f.txt") != "agent\n" {
		t.Errorf("interrupted accept not finished")
	}
	got, _ := store.GetRecord(f.ctx, f.q(), s.ID, "e1")
	if got.Status != prsm.StatusAccepted || got.SyncState != prsm.SyncSynced || r1.Status != prsm.StatusPending {
		t.Errorf("e1 after recovery: %s/%s", got.Status, got.SyncState)
	}
	got, _ = store.GetRecord(f.ctx, f.q(), s.ID, "e2")
	if got.Status != prsm.StatusRejected || read(t, s.WorktreePath, "keep.txt") != "keep\n" || read(t, f.ws, "keep.txt") != "keep\n" {
		t.Errorf("interrupted reject not finished: %s", got.Status)
	}
	if open, _ := store.OpenIntents(f.ctx, f.q()); len(open) != 0 {
		t.Errorf("%d intents left open", len(open))
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("temp file left")
	}
	// Normal operation leaves no intent behind.
	if _, err := eng2.Accept(f.ctx, s.ID, "e1"); err != nil {
		t.Fatal(err)
	}
	if open, _ := store.OpenIntents(f.ctx, f.q()); len(open) != 0 {
		t.Errorf("%d intents left after normal work", len(open))
	}
}

// TestDegradedSessionScannedPeriodically: a worktree larger than the watch
// budget gets no events; a periodic scan still turns a change no tool call
// claimed into a Watch record that reaches the workspace.
func TestDegradedSessionScannedPeriodically(t *testing.T) {
	old := engine.ScanInterval
	engine.ScanInterval = 100 * time.Millisecond
	t.Cleanup(func() { engine.ScanInterval = old })
	f := newFixture(t)
	write(t, f.ws, "sub/dir/x.txt", "x\n") // the worktree has 3 directories
	f.eng.WatchBudget = 2
	f.watch()
	s := f.start("")
	if why := f.eng.Watcher.Degraded()[s.ID]; why == "" {
		t.Fatalf("session over the budget is not degraded")
	}
	write(t, s.WorktreePath, "by-hand.txt", "scanned\n")
	var recs []*prsm.Record
	for i := 0; i < 100 && len(recs) == 0; i++ {
		time.Sleep(50 * time.Millisecond)
		recs, _ = f.eng.Records(f.ctx, s.ID, "", "")
	}
	if len(recs) != 1 || recs[0].ToolName != "Watch" || recs[0].RelPath != "by-hand.txt" {
		t.Fatalf("records: %s", summary(recs))
	}
	if got := read(t, f.ws, "by-hand.txt"); got != "scanned\n" {
		t.Fatalf("workspace: %q", got)
	}
	// A tool call still sees everything it changed.
	recs = f.tool(s, "b1", "Bash", "", func(wt string) { sh(t, wt, "mkdir -p n/m && echo x > n/m/y && sed -i 's/line 2 /LINE 2 /' f.txt") })
	if got := summary(recs); got != "b1:0 modify f.txt pending/synced\nb1:1 create n/m/y pending/synced" {
		t.Fatalf("tool call on a degraded worktree:\n%s", got)
	}
}

// TestWatchedCaptureSeesChangesJustBefore: with the watcher on, a capture
// reads only what the watcher reports (the file the tool names included),
// after catching up with it: a change made outside any tool call right
// before the call is the call's pre-tool content, never part of its delta.
func TestWatchedCaptureSeesChangesJustBefore(t *testing.T) {
	f := newFixture(t)
	f.watch()
	s := f.start("")
	known := read(t, s.WorktreePath, "f.txt")
	for i := 0; i < 10; i++ {
		id := fmt.Sprintf("t%d", i)
		outside := replaceLine(known, 2, "outside "+id)
		write(t, s.WorktreePath, "f.txt", outside)
		tool := replaceLine(outside, 9, "tool "+id)
		recs := f.tool(s, id, "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", tool) })
		if len(recs) != 1 {
			t.Fatalf("%s: records: %s", id, summary(recs))
		}
		r := recs[0]
		if r.OldContent == nil || *r.OldContent != known || r.PreToolContent == nil || *r.PreToolContent != outside ||
			r.NewContent == nil || *r.NewContent != tool {
			t.Fatalf("%s: contents old/pre-tool/new are not known/outside/tool", id)
		}
		known = tool
	}
	// A call on a file nobody touched before it starts from the known content.
	recs := f.tool(s, "clean", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(known, 3, "clean")) })
	if len(recs) != 1 || recs[0].PreToolContent == nil || *recs[0].PreToolContent != known {
		t.Fatalf("clean call: %s", summary(recs))
	}
}

// TestEndedSessionTakesNoToolCalls: a session whose state the engine holds
// (it took tool calls) refuses the next ones once it ends, whether it is
// ended or its worktree vanished (found by Reconcile on the same engine).
func TestEndedSessionTakesNoToolCalls(t *testing.T) {
	for _, how := range []string{"end", "vanish"} {
		t.Run(how, func(t *testing.T) {
			f := newFixture(t)
			s := f.start("")
			f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", "edited\n") })
			if how == "end" {
				if _, err := f.eng.EndSession(f.ctx, s.ID, true); err != nil {
					t.Fatal(err)
				}
			} else {
				if err := os.RemoveAll(s.WorktreePath); err != nil {
					t.Fatal(err)
				}
				if _, err := f.eng.Reconcile(f.ctx); err != nil {
					t.Fatal(err)
				}
			}
			_, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "e2", ToolName: "Edit", Args: json.RawMessage(`{}`)})
			var pe *prsm.Error
			if !errors.As(err, &pe) || pe.Code != "session_ended" {
				t.Fatalf("tool call on an ended session: %v, want session_ended", err)
			}
			_, err = f.eng.CompleteToolCall(f.ctx, s.ID, "e3", api.CompleteRequest{})
			if !errors.As(err, &pe) || pe.Code != "session_ended" {
				t.Fatalf("complete on an ended session: %v, want session_ended", err)
			}
		})
	}
}
