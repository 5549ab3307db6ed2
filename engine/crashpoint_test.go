package engine_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/store"
)

// crash is what the crash hook panics with: an operation stopped at a
// crash point, as kill -9 would stop it.
type crash struct{ point string }

// crashing runs fn and stops it at the nth time it reaches crash point
// point. It reports whether fn was stopped there.
func crashing(t *testing.T, point string, nth int, fn func()) (hit bool) {
	t.Helper()
	n := 0
	restore := engine.SetCrashHook(func(p string) {
		if p == point {
			n++
			if n == nth {
				panic(crash{p})
			}
		}
	})
	defer restore()
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crash); !ok {
				panic(r)
			}
			hit = true
		}
	}()
	fn()
	return false
}

// restart plays the next start after a crash: a new engine (no memory of
// the old one) over the same database, repository and project dir, which
// reconciles.
func (f *fixture) restart() {
	f.t.Helper()
	f.eng = engine.New(f.eng.Repo, f.eng.DB, f.eng.ProjectDir, slog.New(slog.DiscardHandler))
	f.t.Cleanup(f.eng.Close)
	if _, err := f.eng.Reconcile(f.ctx); err != nil {
		f.t.Fatalf("reconcile after crash: %v", err)
	}
	if open, err := store.OpenIntents(f.ctx, f.q()); err != nil || len(open) != 0 {
		f.t.Errorf("intents left open after restart: %v %v", open, err)
	}
}

// records is a summary of every record of s.
func (f *fixture) records(s *prsm.Session) string {
	f.t.Helper()
	all, err := f.eng.Records(f.ctx, s.ID, "", "")
	if err != nil {
		f.t.Fatal(err)
	}
	return summary(all)
}

func exists(root, rel string) bool {
	_, err := os.Lstat(filepath.Join(root, rel))
	return err == nil
}

// TestCrashAfterRecordStored: a kill between storing a tool call's records
// and syncing them loses nothing: the next start applies them.
func TestCrashAfterRecordStored(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	want := replaceLine(base, 2, "agent two")
	if !crashing(t, "record:stored", 1, func() {
		f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", want) })
	}) {
		t.Fatal("crash point record:stored not reached")
	}
	if got := read(t, f.ws, "f.txt"); got != base {
		t.Fatalf("workspace changed before the crash point")
	}
	f.restart()
	if got := read(t, f.ws, "f.txt"); got != want {
		t.Errorf("record stored before the crash never reached the workspace:\n%s", got)
	}
	if got := f.records(s); got != "e1 modify f.txt pending/synced" {
		t.Errorf("records after restart:\n%s", got)
	}

	// Reconcile is a multi-step operation too: changes made while the
	// server was down, recorded, then a crash before they were synced.
	sh(t, s.WorktreePath, "echo down > down.txt && printf 'x\\n' >> keep.txt")
	if !crashing(t, "record:stored", 1, func() { f.restart() }) {
		t.Fatal("reconcile did not reach record:stored")
	}
	f.restart()
	if got := read(t, f.ws, "down.txt"); got != "down\n" {
		t.Errorf("reconciled create not synced: %q", got)
	}
	if got := read(t, f.ws, "keep.txt"); got != "keep\nx\n" {
		t.Errorf("reconciled edit not synced: %q", got)
	}
	recs := f.records(s)
	if strings.Count(recs, "pending/synced") != 3 || strings.Contains(recs, "pending_review") {
		t.Errorf("records after reconcile crash:\n%s", recs)
	}
}

// TestCrashMidRejectCascade: a kill after the first record of a cascade was
// reverted finishes the whole cascade at the next start.
func TestCrashMidRejectCascade(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 3, "one")) })
	f.tool(s, "e2", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 9, "two")) })
	f.tool(s, "e3", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 15, "three")) })
	if !crashing(t, "reject:reverted", 1, func() {
		f.eng.Reject(f.ctx, s.ID, "e1")
	}) {
		t.Fatal("crash point reject:reverted not reached")
	}
	f.restart()
	if got := f.records(s); got != "e1 modify f.txt rejected/synced\ne2 modify f.txt rejected/synced\ne3 modify f.txt rejected/synced" {
		t.Errorf("records after restart:\n%s", got)
	}
	if got := read(t, f.ws, "f.txt"); got != base {
		t.Errorf("workspace after restart:\n%s", got)
	}
	if got := read(t, s.WorktreePath, "f.txt"); got != base {
		t.Errorf("worktree after restart:\n%s", got)
	}
}

// TestCrashMidRejectCascadeOfOneLine: three edits of the same line, and
// a kill after the cascade reverted two of them. The next start finds
// those two rejected, and finishes the third: run again, a step would
// take its delta out of a line the next step had changed already, a
// conflict where there was none (TestKillNine found it).
func TestCrashMidRejectCascadeOfOneLine(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	for i, word := range []string{"one", "two", "three"} {
		f.tool(s, "e"+string(rune('1'+i)), "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 3, word)) })
	}
	if !crashing(t, "reject:reverted", 2, func() {
		f.eng.Reject(f.ctx, s.ID, "e1")
	}) {
		t.Fatal("crash point reject:reverted not reached twice")
	}
	f.restart()
	if got := f.records(s); got != "e1 modify f.txt rejected/synced\ne2 modify f.txt rejected/synced\ne3 modify f.txt rejected/synced" {
		t.Errorf("records after restart:\n%s", got)
	}
	if got := read(t, f.ws, "f.txt"); got != base {
		t.Errorf("workspace after restart:\n%s", got)
	}
	if got := read(t, s.WorktreePath, "f.txt"); got != base {
		t.Errorf("worktree after restart:\n%s", got)
	}
}

// rollbackSession starts a session of five tool calls (e0 to e4: three
// edits of f.txt, keep.txt rewritten, new.txt created) and returns it,
// f.txt as it was before them, and the checkpoint taken before e1, where
// the rollback tests lead.
func (f *fixture) rollbackSession() (s *prsm.Session, base string, target *prsm.Checkpoint) {
	t := f.t
	t.Helper()
	s = f.start("")
	base = read(t, f.ws, "f.txt")
	f.tool(s, "e0", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 1, "zero")) })
	cps, err := f.eng.Checkpoints(f.ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 5, "one")) })
	f.tool(s, "e2", "Write", "keep.txt", func(wt string) { write(t, wt, "keep.txt", "agent keep\n") })
	f.tool(s, "e3", "Write", "new.txt", func(wt string) { write(t, wt, "new.txt", "new\n") })
	f.tool(s, "e4", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 12, "four")) })
	all, err := f.eng.Checkpoints(f.ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range all[len(cps):] {
		if c.ToolCallID == "e1" {
			target = c
		}
	}
	if target == nil {
		t.Fatalf("no checkpoint before e1")
	}
	return s, base, target
}

// wantRolledBack checks that workspace and worktree are as a rollback of
// rollbackSession to its target leaves them (when says at what moment).
func (f *fixture) wantRolledBack(s *prsm.Session, base, when string) {
	t := f.t
	t.Helper()
	want := replaceLine(base, 1, "zero")
	for _, root := range []string{f.ws, s.WorktreePath} {
		if got := read(t, root, "f.txt"); got != want {
			t.Errorf("%s f.txt %s:\n%s", root, when, got)
		}
		if got := read(t, root, "keep.txt"); got != "keep\n" {
			t.Errorf("%s keep.txt %s: %q", root, when, got)
		}
		if exists(root, "new.txt") {
			t.Errorf("%s new.txt still there %s", root, when)
		}
	}
}

// TestCrashMidRollback: a kill in the middle of a rewind or a selector
// rollback (worktree half written, or workspace half reverted, or the
// records' states half stored) is finished at the next start: every
// undone record rewound (a rewind) or rejected (a selector), worktree and
// workspace as the rollback would have left them, and no record made.
func TestCrashMidRollback(t *testing.T) {
	for _, tc := range []struct {
		name, point string
		nth         int
		rewind      bool
	}{
		{"rewind/worktree", "rollback:worktree", 1, true},
		{"rewind/workspace", "rewind:workspace", 1, true},
		{"rewind/states", "rewind:states", 2, true},
		{"select/worktree", "rollback:worktree", 1, false},
		{"select/worktree2", "rollback:worktree", 2, false},
		{"select/workspace", "rollback:workspace", 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			s, base, target := f.rollbackSession()
			var plan *api.Plan
			run := func() {
				var err error
				if tc.rewind {
					plan, err = f.eng.Rewind(f.ctx, s.ID, target.ID, false)
				} else {
					plan, err = f.eng.SelectRewind(f.ctx, s.ID, api.RollbackRequest{Last: 4})
				}
				if err != nil {
					t.Errorf("rollback: %v", err)
				}
			}
			if !crashing(t, tc.point, tc.nth, run) {
				t.Fatalf("crash point %s #%d not reached", tc.point, tc.nth)
			}
			f.restart()
			f.wantRolledBack(s, base, "after restart")
			recs, _ := f.eng.Records(f.ctx, s.ID, "", "")
			var rolled []string
			for _, r := range recs {
				switch {
				case r.ID == "e0":
					if r.Status != prsm.StatusPending || r.SyncState != prsm.SyncSynced {
						t.Errorf("e0: %s/%s", r.Status, r.SyncState)
					}
				case r.ToolName == "Rollback":
					rolled = append(rolled, r.RelPath)
				default:
					want := map[bool]string{true: prsm.StatusRewound, false: prsm.StatusRejected}[tc.rewind]
					if r.Status != want || r.SyncState != prsm.SyncSynced {
						t.Errorf("%s: %s/%s, want %s/synced", r.ID, r.Status, r.SyncState, want)
					}
				}
			}
			if len(rolled) > 0 {
				t.Errorf("the rollback made records of its own: %q", rolled)
			}
			// The rollback can be undone through its safety checkpoint,
			// workspace included.
			cps, _ := f.eng.Checkpoints(f.ctx, s.ID, "")
			var safety *prsm.Checkpoint
			for _, c := range cps {
				if strings.HasPrefix(c.Name, "before ") && !strings.HasPrefix(c.Name, "before Edit") && !strings.HasPrefix(c.Name, "before Write") {
					safety = c
				}
			}
			if safety == nil {
				t.Fatalf("no safety checkpoint among %d", len(cps))
			}
			if _, err := f.eng.Rewind(f.ctx, s.ID, safety.ID, false); err != nil {
				t.Fatalf("undo the rollback: %v", err)
			}
			want4 := replaceLine(replaceLine(replaceLine(base, 1, "zero"), 5, "one"), 12, "four")
			for _, root := range []string{f.ws, s.WorktreePath} {
				if got := read(t, root, "f.txt"); got != want4 {
					t.Errorf("%s f.txt after undo:\n%s", root, got)
				}
				if got := read(t, root, "new.txt"); got != "new\n" {
					t.Errorf("%s new.txt after undo: %q", root, got)
				}
			}
			_ = plan
		})
	}
}

// TestRewindPastRollback: rewinding to a checkpoint taken before a
// rollback undoes it with every record after the checkpoint: the
// workspace ends as the checkpoint, like the worktree, and the records
// are rewound (no rollback makes records of its own).
func TestRewindPastRollback(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 1, "one")) })
	var target *prsm.Checkpoint
	cps, _ := f.eng.Checkpoints(f.ctx, s.ID, "")
	for _, c := range cps {
		if c.ToolCallID == "e1" {
			target = c
		}
	}
	f.tool(s, "e2", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 5, "five")) })
	f.tool(s, "e3", "Write", "new.txt", func(wt string) { write(t, wt, "new.txt", "new\n") })
	if _, err := f.eng.SelectRewind(f.ctx, s.ID, api.RollbackRequest{Last: 2}); err != nil {
		t.Fatal(err)
	}
	if read(t, f.ws, "f.txt") != replaceLine(base, 1, "one") || exists(f.ws, "new.txt") {
		t.Fatalf("rollback did not undo e2 and e3")
	}
	if _, err := f.eng.Rewind(f.ctx, s.ID, target.ID, false); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{s.WorktreePath, f.ws} {
		if got := read(t, root, "f.txt"); got != base {
			t.Errorf("%s f.txt after rewind:\n%s", root, got)
		}
		if exists(root, "new.txt") {
			t.Errorf("%s: new.txt came back", root)
		}
	}
	recs, _ := f.eng.Records(f.ctx, s.ID, "", "")
	for _, r := range recs {
		if r.SyncState != prsm.SyncSynced || r.ToolName == "Rollback" || r.Status != prsm.StatusRewound {
			t.Errorf("%s (%s): %s/%s", r.ID, r.ToolName, r.Status, r.SyncState)
		}
	}
}

// TestRewindPastReject: rewinding to a checkpoint taken before a record
// (made before the checkpoint) was rejected brings the record's files back
// in the workspace too: it equals the checkpoint for every file the session
// touched (SPEC rule 5), not only the worktree.
func TestRewindPastReject(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	f.tool(s, "b1", "Bash", "", func(wt string) {
		write(t, wt, "f.txt", replaceLine(base, 3, "three"))
		write(t, wt, "n.txt", "n\n")
	})
	f.tool(s, "e2", "Write", "keep.txt", func(wt string) { write(t, wt, "keep.txt", "agent keep\n") })
	var target *prsm.Checkpoint
	cps, _ := f.eng.Checkpoints(f.ctx, s.ID, "")
	for _, c := range cps {
		if c.ToolCallID == "e2" {
			target = c
		}
	}
	if _, err := f.eng.Reject(f.ctx, s.ID, "b1"); err != nil {
		t.Fatal(err)
	}
	if exists(f.ws, "n.txt") || read(t, f.ws, "f.txt") != base {
		t.Fatalf("reject did not take b1 out")
	}
	plan, err := f.eng.Rewind(f.ctx, s.ID, target.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{s.WorktreePath, f.ws} {
		if got := read(t, root, "f.txt"); got != replaceLine(base, 3, "three") {
			t.Errorf("%s f.txt after rewind:\n%s", root, got)
		}
		if !exists(root, "n.txt") || read(t, root, "n.txt") != "n\n" {
			t.Errorf("%s: n.txt not back", root)
		}
		if got := read(t, root, "keep.txt"); got != "keep\n" {
			t.Errorf("%s keep.txt: %q", root, got)
		}
	}
	// b1's reject is undone: its records are pending again.
	if got := f.records(s); got != "b1:0 modify f.txt pending/synced\nb1:1 create n.txt pending/synced\ne2 modify keep.txt rewound/synced" {
		t.Errorf("records:\n%s", got)
	}
	if sum := strings.Join(plan.Summary, "\n"); !strings.Contains(sum, "2 changes rejected since the checkpoint become pending again") ||
		!strings.Contains(sum, "1 change made after this checkpoint is set aside as rewound") {
		t.Errorf("summary:\n%s", sum)
	}
	if len(plan.Decisions) != 3 {
		t.Errorf("decisions: %+v", plan.Decisions)
	}
}

// TestCrashMidAcceptChain: in review mode, accepting a record applies the
// earlier pending records of its file first; a kill after the first of
// them finishes the whole chain at the next start.
func TestCrashMidAcceptChain(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeReview)
	base := read(t, f.ws, "f.txt")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 3, "one")) })
	f.tool(s, "e2", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 9, "two")) })
	f.tool(s, "e3", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 15, "three")) })
	want := read(t, s.WorktreePath, "f.txt")
	if read(t, f.ws, "f.txt") != base {
		t.Fatal("review mode wrote the workspace before an accept")
	}
	if !crashing(t, "accept:applied", 1, func() { f.eng.Accept(f.ctx, s.ID, "e3") }) {
		t.Fatal("crash point accept:applied not reached")
	}
	f.restart()
	if got := f.records(s); got != "e1 modify f.txt accepted/synced\ne2 modify f.txt accepted/synced\ne3 modify f.txt accepted/synced" {
		t.Errorf("records after restart:\n%s", got)
	}
	if got := read(t, f.ws, "f.txt"); got != want {
		t.Errorf("workspace after restart:\n%s", got)
	}
}

// TestRewindReviewMode: in review mode a rewind gives back the review
// state too: e1, accepted after the checkpoint (with e2, which applies
// the earlier pending records of its file), is pending again, out of the
// workspace, in the worktree; e2 and e3 are rewound.
func TestRewindReviewMode(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeReview)
	base := read(t, f.ws, "f.txt")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 1, "one")) })
	f.tool(s, "e2", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 5, "five")) })
	f.tool(s, "e3", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 6, "six")) })
	if _, err := f.eng.Accept(f.ctx, s.ID, "e2"); err != nil {
		t.Fatal(err)
	}
	var target *prsm.Checkpoint
	cps, _ := f.eng.Checkpoints(f.ctx, s.ID, "")
	for _, c := range cps {
		if c.ToolCallID == "e2" {
			target = c
		}
	}
	plan, err := f.eng.Rewind(f.ctx, s.ID, target.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Conflicts) != 0 {
		t.Errorf("conflicts: %+v", plan.Conflicts)
	}
	if got := read(t, s.WorktreePath, "f.txt"); got != replaceLine(base, 1, "one") {
		t.Errorf("worktree f.txt after rewind:\n%s", got)
	}
	if got := read(t, f.ws, "f.txt"); got != base {
		t.Errorf("workspace f.txt after rewind:\n%s", got)
	}
	if got := f.records(s); got != "e1 modify f.txt pending/pending_review\ne2 modify f.txt rewound/synced\ne3 modify f.txt rewound/synced" {
		t.Errorf("records:\n%s", got)
	}
}

// TestCanceledMidOperation: a caller that goes away (the HTTP request's
// context canceled) after an operation started does not leave it half done
// until the next start: once written down, it runs to the end.
func TestCanceledMidOperation(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	cancelAt := func(point string, fn func(ctx context.Context) error) {
		t.Helper()
		ctx, cancel := context.WithCancel(f.ctx)
		defer cancel()
		restore := engine.SetCrashHook(func(p string) {
			if p == point {
				cancel()
			}
		})
		defer restore()
		// The answer may fail (its caller is gone); the work must not.
		fn(ctx)
	}
	// complete: canceled right after the records are stored.
	want := replaceLine(base, 2, "two")
	args, _ := json.Marshal(map[string]string{"file_path": filepath.Join(s.WorktreePath, "f.txt")})
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "e1", ToolName: "Edit", Args: args}); err != nil {
		t.Fatal(err)
	}
	write(t, s.WorktreePath, "f.txt", want)
	cancelAt("record:stored", func(ctx context.Context) error {
		_, err := f.eng.CompleteToolCall(ctx, s.ID, "e1", api.CompleteRequest{})
		return err
	})
	if got := f.records(s); got != "e1 modify f.txt pending/synced" || read(t, f.ws, "f.txt") != want {
		t.Errorf("complete canceled midway:\n%s", got)
	}
	// reject: canceled after the first record of the cascade.
	f.tool(s, "e2", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 9, "nine")) })
	cancelAt("reject:reverted", func(ctx context.Context) error {
		_, err := f.eng.Reject(ctx, s.ID, "e1")
		return err
	})
	if got := f.records(s); got != "e1 modify f.txt rejected/synced\ne2 modify f.txt rejected/synced" || read(t, f.ws, "f.txt") != base {
		t.Errorf("reject canceled midway:\n%s", got)
	}
	// rollback: canceled after the first worktree file.
	f.tool(s, "e3", "Write", "keep.txt", func(wt string) { write(t, wt, "keep.txt", "agent\n") })
	f.tool(s, "e4", "Write", "new.txt", func(wt string) { write(t, wt, "new.txt", "new\n") })
	cancelAt("rollback:worktree", func(ctx context.Context) error {
		_, err := f.eng.SelectRewind(ctx, s.ID, api.RollbackRequest{Last: 2})
		return err
	})
	for _, root := range []string{f.ws, s.WorktreePath} {
		if read(t, root, "keep.txt") != "keep\n" || exists(root, "new.txt") {
			t.Errorf("%s: rollback canceled midway not finished", root)
		}
	}
	if open, _ := store.OpenIntents(f.ctx, f.q()); len(open) != 0 {
		t.Errorf("intents left open: %v", open)
	}
}
