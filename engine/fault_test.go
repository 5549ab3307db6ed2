package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/worktree"
)

// tempFiles lists the temporary files of prsm's writes under root.
func tempFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), sync.TempPrefix) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// diskFault fails the sync package's writes under root at step op with
// ENOSPC while armed (and, when once is set, only the first time).
type diskFault struct {
	armed atomic.Bool
	once  bool
	hits  atomic.Int32
}

func injectDiskFault(t *testing.T, root, op string, once bool) *diskFault {
	d := &diskFault{once: once}
	d.armed.Store(true)
	restore := sync.SetFaultHook(func(got, path string) error {
		if got != op || !strings.HasPrefix(path, root+string(filepath.Separator)) || !d.armed.Load() {
			return nil
		}
		if d.once && !d.armed.CompareAndSwap(true, false) {
			return nil
		}
		d.hits.Add(1)
		return &fs.PathError{Op: op, Path: path, Err: syscall.ENOSPC}
	})
	t.Cleanup(restore)
	return d
}

func (f *fixture) record(s *prsm.Session, id string) *prsm.Record {
	f.t.Helper()
	r, err := store.GetRecord(f.ctx, f.q(), s.ID, id)
	if err != nil {
		f.t.Fatalf("record %s: %v", id, err)
	}
	return r
}

// TestDiskFaultOnSync: a full disk while a change is applied to the
// workspace gives a clear error and writes nothing (no torn file, no temp
// file); the record is kept, unsynced, and applying it again works once the
// disk has room: by accepting it, or at the next start.
func TestDiskFaultOnSync(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	want := replaceLine(base, 4, "agent four")

	fault := injectDiskFault(t, f.ws, "write", false)
	args, _ := json.Marshal(map[string]string{"file_path": filepath.Join(s.WorktreePath, "f.txt")})
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "e1", ToolName: "Edit", Args: args}); err != nil {
		t.Fatal(err)
	}
	write(t, s.WorktreePath, "f.txt", want)
	_, err := f.eng.CompleteToolCall(f.ctx, s.ID, "e1", api.CompleteRequest{})
	if err == nil || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "no space left on device") ||
		!strings.Contains(err.Error(), "accept it to try again") {
		t.Fatalf("complete on a full disk: %v", err)
	}
	if fault.hits.Load() == 0 {
		t.Fatal("fault never hit")
	}
	if pe := (*prsm.Error)(nil); !errors.As(err, &pe) || pe.Code != "sync_failed" {
		t.Errorf("complete's error carries no sync_failed code: %#v", err)
	}
	if got := read(t, f.ws, "f.txt"); got != base {
		t.Errorf("workspace file changed by a failed write:\n%s", got)
	}
	if left := tempFiles(t, f.ws); len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}
	if r := f.record(s, "e1"); r.Status != prsm.StatusPending || r.SyncState != prsm.SyncPendingReview {
		t.Errorf("e1 after failed sync: %s/%s, want pending/pending_review", r.Status, r.SyncState)
	}
	// Retry 1: the disk has room again, the user accepts the change.
	fault.armed.Store(false)
	if _, err := f.eng.Accept(f.ctx, s.ID, "e1"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, f.ws, "f.txt"); got != want {
		t.Errorf("workspace after accept:\n%s", got)
	}
	if r := f.record(s, "e1"); r.Status != prsm.StatusAccepted || r.SyncState != prsm.SyncSynced {
		t.Errorf("e1 after accept: %s/%s", r.Status, r.SyncState)
	}

	// Retry 2: a Bash call changes two files, one write fails; the next
	// start applies it.
	fault.armed.Store(true)
	fault2 := fault
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "b1", ToolName: "Bash", Args: json.RawMessage(`{"command":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	write(t, s.WorktreePath, "keep.txt", "agent keep\n")
	write(t, s.WorktreePath, "new.txt", "new\n")
	if _, err := f.eng.CompleteToolCall(f.ctx, s.ID, "b1", api.CompleteRequest{}); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("bash complete on a full disk: %v", err)
	}
	if read(t, f.ws, "keep.txt") != "keep\n" || exists(f.ws, "new.txt") || len(tempFiles(t, f.ws)) > 0 {
		t.Errorf("workspace changed by failed writes")
	}
	fault2.armed.Store(false)
	f.restart()
	if read(t, f.ws, "keep.txt") != "agent keep\n" || read(t, f.ws, "new.txt") != "new\n" {
		t.Errorf("restart did not apply the unsynced records")
	}
	if got := f.records(s); got != "e1 modify f.txt accepted/synced\nb1:0 modify keep.txt pending/synced\nb1:1 create new.txt pending/synced" {
		t.Errorf("records:\n%s", got)
	}
}

// TestDiskFaultOnRejectAndRollback: a reject or a rollback whose write
// fails reports it, leaves every file whole, and works when repeated.
func TestDiskFaultOnRejectAndRollback(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 7, "seven")) })
	edited := read(t, f.ws, "f.txt")

	fault := injectDiskFault(t, f.ws, "rename", false)
	_, err := f.eng.Reject(f.ctx, s.ID, "e1")
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("reject on a full disk: %v", err)
	}
	if got := read(t, f.ws, "f.txt"); got != edited || len(tempFiles(t, f.ws)) > 0 {
		t.Errorf("workspace after failed reject:\n%s", got)
	}
	if r := f.record(s, "e1"); r.Status != prsm.StatusPending {
		t.Errorf("e1 after failed reject: %s", r.Status)
	}
	fault.armed.Store(false)
	if _, err := f.eng.Reject(f.ctx, s.ID, "e1"); err != nil {
		t.Fatal(err)
	}
	if read(t, f.ws, "f.txt") != base || read(t, s.WorktreePath, "f.txt") != base {
		t.Errorf("repeated reject did not finish")
	}
	if r := f.record(s, "e1"); r.Status != prsm.StatusRejected || r.SyncState != prsm.SyncSynced {
		t.Errorf("e1 after repeated reject: %s/%s", r.Status, r.SyncState)
	}

	// A rollback whose second worktree write fails puts the worktree back
	// and changes nothing else.
	f.tool(s, "e2", "Write", "keep.txt", func(wt string) { write(t, wt, "keep.txt", "agent keep\n") })
	f.tool(s, "e3", "Write", "new.txt", func(wt string) { write(t, wt, "new.txt", "new\n") })
	wsBefore, wtBefore := testgit.Tree(t, f.ws, nil), testgit.Tree(t, s.WorktreePath, nil)
	injectDiskFault(t, s.WorktreePath, "remove", true)
	_, err = f.eng.SelectRewind(f.ctx, s.ID, api.RollbackRequest{Last: 2})
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "put back") {
		t.Fatalf("rollback on a full disk: %v", err)
	}
	if d := testgit.Diff(wsBefore, testgit.Tree(t, f.ws, nil)); d != "" {
		t.Errorf("workspace changed by a failed rollback:\n%s", d)
	}
	if d := testgit.Diff(wtBefore, testgit.Tree(t, s.WorktreePath, nil)); d != "" {
		t.Errorf("worktree not put back:\n%s", d)
	}
	if got := f.records(s); got != "e1 modify f.txt rejected/synced\ne2 modify keep.txt pending/synced\ne3 create new.txt pending/synced" {
		t.Errorf("records after failed rollback:\n%s", got)
	}
	if open, _ := store.OpenIntents(f.ctx, f.q()); len(open) != 0 {
		for _, in := range open {
			if in.Kind == "rollback" {
				t.Errorf("failed rollback left its intent open")
			}
		}
	}
	if _, err := f.eng.SelectRewind(f.ctx, s.ID, api.RollbackRequest{Last: 2}); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{f.ws, s.WorktreePath} {
		if read(t, root, "keep.txt") != "keep\n" || exists(root, "new.txt") {
			t.Errorf("%s: repeated rollback did not finish", root)
		}
	}
	f.restart()
}

// fakeGit is a git wrapper for fault injection: it runs the real git unless
// a file in ctl names the subcommand: fail-<sub> makes it exit 128 with a
// message (as git does on fatal errors), hang-<sub> makes it hang.
func fakeGit(t *testing.T) (bin, ctl string) {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctl = filepath.Join(dir, "ctl")
	if err := os.Mkdir(ctl, 0o755); err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(dir, "git")
	script := `#!/bin/sh
for a in "$@"; do
	if [ -e '` + ctl + `/fail-'"$a" ]; then echo "fatal: injected failure of git $a" >&2; exit 128; fi
	if [ -e '` + ctl + `/hang-'"$a" ]; then exec sleep 60; fi
done
exec '` + real + `' "$@"
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, ctl
}

func setFault(t *testing.T, ctl, name string, on bool) {
	t.Helper()
	p := filepath.Join(ctl, name)
	if on {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	} else if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
}

// TestGitFailsOrHangs: with a git that fails or hangs (the runner's
// timeout ends it), session start and complete fail with a clear error and
// leave nothing behind; the same call works once git does.
func TestGitFailsOrHangs(t *testing.T) {
	f := newFixture(t)
	bin, ctl := fakeGit(t)
	runner := &worktree.Runner{Git: bin}
	repo, err := worktree.Discover(f.ctx, runner, f.ws)
	if err != nil {
		t.Fatal(err)
	}
	f.eng = engine.New(repo, f.eng.DB, f.eng.ProjectDir, slog.New(slog.DiscardHandler))
	t.Cleanup(f.eng.Close)
	runner = repo.Git() // the engine confined a copy of it
	branches := func() string { return testgit.Git(t, f.ws, "branch", "--list", "prsm/*") }
	worktrees := func() string { return testgit.Git(t, f.ws, "worktree", "list", "--porcelain") }
	wsState := testgit.State(t, f.ws)

	// Session start: snapshot (git add) fails, then hangs, then git
	// worktree add fails.
	for _, fault := range []string{"fail-add", "hang-add", "fail-worktree", "fail-commit-tree"} {
		setFault(t, ctl, fault, true)
		if strings.HasPrefix(fault, "hang") {
			runner.Timeout = time.Second
		}
		_, err := f.eng.StartSession(f.ctx, api.StartRequest{Name: fault})
		runner.Timeout = 0
		setFault(t, ctl, fault, false)
		want := "injected failure of git"
		if strings.HasPrefix(fault, "hang") {
			want = "git timed out"
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: start: %v, want %q", fault, err, want)
		}
		if list, _ := f.eng.Sessions(f.ctx, ""); len(list) != 0 {
			t.Errorf("%s: a session was stored", fault)
		}
		if entries, _ := os.ReadDir(f.eng.WorktreeDir()); len(entries) != 0 {
			t.Errorf("%s: worktree dir left: %v", fault, entries)
		}
		if b := branches(); b != "" {
			t.Errorf("%s: branch left: %s", fault, b)
		}
		if w := worktrees(); strings.Count(w, "worktree ") != 1 {
			t.Errorf("%s: git worktrees:\n%s", fault, w)
		}
		if got := testgit.State(t, f.ws); got != wsState {
			t.Errorf("%s: user repository changed", fault)
		}
	}
	s := f.start("")

	// Complete: git status, then check-ignore, fail or hang.
	base := read(t, f.ws, "f.txt")
	for i, fault := range []string{"fail-status", "hang-status", "fail-check-ignore", "hang-check-ignore"} {
		id := "g" + string(rune('1'+i))
		// An edit of a tracked file needs no ignore check (git never
		// ignores tracked files); a file a shell command creates does.
		rel, change, tool, recID := "f.txt", "modify", "Edit", id
		want := ""
		args, _ := json.Marshal(map[string]string{"file_path": filepath.Join(s.WorktreePath, rel)})
		if strings.HasSuffix(fault, "check-ignore") {
			rel, change, tool, recID, want = "new-"+id+".txt", "create", "Bash", id+":0", "agent "+id+"\n"
			// A command whose targets the shell parser cannot name, so
			// the new file is first seen (and checked) at complete.
			args, _ = json.Marshal(map[string]string{"command": "./generate.sh"})
		} else {
			want = replaceLine(read(t, s.WorktreePath, rel), i+1, "agent "+id)
		}
		if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: tool, Args: args}); err != nil {
			t.Fatal(err)
		}
		write(t, s.WorktreePath, rel, want)
		wsBefore, _ := os.ReadFile(filepath.Join(f.ws, rel))
		setFault(t, ctl, fault, true)
		if strings.HasPrefix(fault, "hang") {
			runner.Timeout = time.Second
		}
		_, err := f.eng.CompleteToolCall(f.ctx, s.ID, id, api.CompleteRequest{})
		runner.Timeout = 0
		setFault(t, ctl, fault, false)
		msg := "injected failure of git"
		if strings.HasPrefix(fault, "hang") {
			msg = "git timed out"
		}
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Fatalf("%s: complete: %v, want %q", fault, err, msg)
		}
		if recs, _ := f.eng.RecordsOf(f.ctx, s.ID, id); len(recs) != 0 {
			t.Errorf("%s: records stored by a failed complete", fault)
		}
		if tc, err := store.GetToolCall(f.ctx, f.q(), s.ID, id); err != nil || tc.CompletedAt != nil {
			t.Errorf("%s: tool call completed by a failed complete (%v)", fault, err)
		}
		if got, _ := os.ReadFile(filepath.Join(f.ws, rel)); string(got) != string(wsBefore) {
			t.Errorf("%s: workspace changed", fault)
		}
		// git works again: the retry records and applies the change.
		res, err := f.eng.CompleteToolCall(f.ctx, s.ID, id, api.CompleteRequest{})
		if err != nil {
			t.Fatalf("%s: retry: %v", fault, err)
		}
		if got := summary(res.Records); got != recID+" "+change+" "+rel+" pending/synced" {
			t.Errorf("%s: retry records: %s", fault, got)
		}
		if got := read(t, f.ws, rel); got != want {
			t.Errorf("%s: workspace after retry:\n%s", fault, got)
		}
	}
	if read(t, f.ws, "f.txt") == base {
		t.Errorf("no change reached the workspace")
	}
	if open, _ := store.OpenIntents(f.ctx, f.q()); len(open) != 0 {
		t.Errorf("open intents: %v", open)
	}
}

// TestSQLiteBusy: while another connection holds the database's write lock
// longer than the busy timeout, complete and reject fail with sqlite's
// "database is locked" and change nothing; both work once it is released.
func TestSQLiteBusy(t *testing.T) {
	f := newFixture(t)
	// Two sessions, so that the two calls wait for the database side by
	// side rather than one after the other on a session lock.
	s, s2 := f.start(""), f.start("")
	base := read(t, f.ws, "f.txt")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 2, "two")) })
	edited := read(t, f.ws, "f.txt")
	if _, err := f.eng.StartToolCall(f.ctx, s2.ID, api.ToolCallRequest{ToolCallID: "e2", ToolName: "Write",
		Args: json.RawMessage(`{"file_path":"new.txt"}`)}); err != nil {
		t.Fatal(err)
	}
	write(t, s2.WorktreePath, "new.txt", "new\n")

	other, err := store.Open(f.eng.DB.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	held, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- other.Tx(context.Background(), func(q store.Querier) error {
			if _, err := q.ExecContext(context.Background(), "DELETE FROM intents WHERE id < 0"); err != nil {
				return err
			}
			close(held)
			<-release
			return nil
		})
	}()
	select {
	case <-held:
	case err := <-done:
		t.Fatalf("hold the write lock: %v", err)
	}
	var wg stdsync.WaitGroup
	var completeErr, rejectErr error
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, completeErr = f.eng.CompleteToolCall(f.ctx, s2.ID, "e2", api.CompleteRequest{})
	}()
	go func() {
		defer wg.Done()
		_, rejectErr = f.eng.Reject(f.ctx, s.ID, "e1")
	}()
	wg.Wait()
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{"complete": completeErr, "reject": rejectErr} {
		if err == nil || !strings.Contains(err.Error(), "database is locked") {
			t.Errorf("%s while the database is locked: %v", what, err)
		}
	}
	if exists(f.ws, "new.txt") || read(t, f.ws, "f.txt") != edited || read(t, s.WorktreePath, "f.txt") != edited {
		t.Errorf("files changed while the database was locked")
	}
	// The write prepared beside new.txt while the records were being
	// stored is gone with them.
	if left, _ := filepath.Glob(filepath.Join(f.ws, sync.TempPrefix+"*")); len(left) != 0 {
		t.Errorf("temporary files left in the workspace: %v", left)
	}
	if got := f.records(s); got != "e1 modify f.txt pending/synced" {
		t.Errorf("records while locked:\n%s", got)
	}
	if got := f.records(s2); got != "" {
		t.Errorf("records of the failed complete:\n%s", got)
	}
	if open, _ := store.OpenIntents(f.ctx, f.q()); len(open) != 0 {
		t.Errorf("open intents: %v", open)
	}
	// Released: both work.
	if _, err := f.eng.CompleteToolCall(f.ctx, s2.ID, "e2", api.CompleteRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.Reject(f.ctx, s.ID, "e1"); err != nil {
		t.Fatal(err)
	}
	if read(t, f.ws, "new.txt") != "new\n" || read(t, f.ws, "f.txt") != base {
		t.Errorf("retries did not reach the workspace")
	}
	if got := f.records(s) + "\n" + f.records(s2); got != "e1 modify f.txt rejected/synced\ne2 create new.txt pending/synced" {
		t.Errorf("records after retry:\n%s", got)
	}
}

// TestRollbackAnswersBeforeDiskSyncs: a rewind answers once every file is
// in place and every record stored, without waiting for the files' syncs
// to the disk; its intent stays open, and the session's reads wait, until
// those are done.
func TestRollbackAnswersBeforeDiskSyncs(t *testing.T) {
	f := newFixture(t)
	s, base, target := f.rollbackSession()
	if _, err := f.eng.Records(f.ctx, s.ID, "", ""); err != nil { // the tool calls' work done
		t.Fatal(err)
	}

	// Every sync of a file to the disk waits until released.
	var blocked atomic.Int32
	release := make(chan struct{})
	restore := sync.SetFaultHook(func(op, path string) error {
		if op == "sync" {
			blocked.Add(1)
			<-release
		}
		return nil
	})
	defer restore()
	var once stdsync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	defer unblock()

	done := make(chan error, 1)
	go func() {
		_, err := f.eng.Rewind(f.ctx, s.ID, target.ID, false)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("rewind: %v", err)
		}
	case <-time.After(30 * time.Second):
		unblock()
		t.Fatal("the rewind's answer waited for its files' syncs to the disk")
	}
	// The syncs run after the answer: they are tried, and wait.
	for deadline := time.Now().Add(10 * time.Second); blocked.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no file sync after the rewind's answer")
		}
	}
	f.wantRolledBack(s, base, "at the answer")
	// (f.q would wait for the session's work; the store is read as it is.)
	if open, err := store.OpenIntents(f.ctx, f.eng.DB.Q()); err != nil || len(open) != 1 || open[0].Kind != "rewind" {
		t.Errorf("intents while the syncs wait: %d %v, want the rewind's", len(open), err)
	}
	// A read of the session waits for the syncs and the intent's end.
	read := make(chan error, 1)
	go func() {
		_, err := f.eng.Records(f.ctx, s.ID, "", "")
		read <- err
	}()
	select {
	case err := <-read:
		t.Fatalf("a read did not wait for the rollback's syncs (err %v)", err)
	case <-time.After(50 * time.Millisecond):
	}
	unblock()
	if err := <-read; err != nil {
		t.Fatal(err)
	}
	if open, err := store.OpenIntents(f.ctx, f.q()); err != nil || len(open) != 0 {
		t.Errorf("intents after the syncs: %v %v", open, err)
	}
	got := f.records(s)
	for _, want := range []string{"e0 modify f.txt pending/synced", "e1 modify f.txt rewound/synced", "e2 modify keep.txt rewound/synced",
		"e3 create new.txt rewound/synced", "e4 modify f.txt rewound/synced"} {
		if !strings.Contains(got, want) {
			t.Errorf("records after the rewind lack %q:\n%s", want, got)
		}
	}
}
