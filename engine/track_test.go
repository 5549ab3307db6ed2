package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/testgit"
)

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
