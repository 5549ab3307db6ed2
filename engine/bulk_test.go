package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
)

// genRel is the i-th file of a generator's tree: 50 to a directory, two
// levels deep, as an npm install or a code generator lays them out.
func genRel(i int) string {
	return fmt.Sprintf("gen/p%02d/l%d/f%05d.js", i/500, (i/50)%10, i)
}

func genContent(i int) string { return fmt.Sprintf("module.exports = %d;\n", i) }

// generate writes n files in root, as an agent's generator would.
func generate(t *testing.T, root string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		p := filepath.Join(root, filepath.FromSlash(genRel(i)))
		if i%50 == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(p, []byte(genContent(i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// awaitJob waits for the job id to end (generously: a loaded host).
func (f *fixture) awaitJob(id string) *api.Job {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		j, err := f.eng.Job(id)
		if err != nil {
			f.t.Fatal(err)
		}
		if j.State != api.JobRunning {
			return j
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("job still running: %+v", j)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// listGen is the generated tree's files.
func listGen(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = genRel(i)
	}
	sort.Strings(out)
	return out
}

// pendingOf counts the pending records of s.
func (f *fixture) pendingOf(s *prsm.Session) int {
	f.t.Helper()
	got, err := store.GetSession(f.ctx, f.q(), s.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	return got.PendingCount
}

// gone checks that nothing of the generated tree is left in root but the
// files keep.
func gone(t *testing.T, root string, keep ...string) {
	t.Helper()
	var left []string
	filepath.WalkDir(filepath.Join(root, "gen"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			left = append(left, filepath.ToSlash(rel))
		}
		return nil
	})
	if got, want := strings.Join(left, " "), strings.Join(keep, " "); got != want {
		t.Errorf("%s: left %.300q, want %q", root, got, want)
	}
}

// TestRejectAllOfManyCreatedFiles: a reject of every pending change of a
// session whose agent generated more files than a chunk takes them all
// out of the worktree and the workspace, directories too, except a file
// the user changed since (left, in conflict); an edit of a file among
// them goes back too. The answer counts them (it lists none past its
// bound), and the page hears the job's progress, not a status per file.
func TestRejectAllOfManyCreatedFiles(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	defer engine.SetBulkChunk(1000)()
	const n = 2100 // three chunks
	recs := f.tool(s, "gen", "Bash", "", func(wt string) { generate(t, wt, n) })
	// The answer lists a bounded part; the store has them all. (Run
	// as a hook's complete, f.tool reads them all from the store.)
	if (len(recs) != 1000 && !completeLater) || f.pendingOf(s) != n {
		t.Fatalf("%d records answered, %d pending; want 1000 of %d", len(recs), f.pendingOf(s), n)
	}
	gone(t, f.ws, listGen(n)...)
	for _, i := range []int{0, 777, n - 1} {
		if got := read(t, f.ws, genRel(i)); got != genContent(i) {
			t.Fatalf("workspace %s: %q", genRel(i), got)
		}
	}
	base := read(t, f.ws, "f.txt")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 3, "agent")) })
	mine := genRel(7)
	write(t, f.ws, mine, "the user's\n")
	events, unsubscribe := f.eng.Events.Subscribe()
	defer unsubscribe()
	release := engine.PauseTrash(f.eng)
	defer release()

	ans, err := f.eng.Bulk(f.ctx, s.ID, false, "")
	if err != nil {
		t.Fatal(err)
	}
	if j := ans.Job; j == nil || j.Kind != api.JobRejectAll || j.State != api.JobDone || j.Total != n+1 || j.Done != n+1 || j.Conflicts != 1 {
		t.Errorf("job: %+v", ans.Job)
	}
	if len(ans.Records) != 0 {
		t.Errorf("the answer lists %d records past its bound", len(ans.Records))
	}
	gone(t, s.WorktreePath)
	gone(t, f.ws, mine)
	if got := read(t, f.ws, mine); got != "the user's\n" {
		t.Errorf("the user's file: %q", got)
	}
	for _, root := range []string{f.ws, s.WorktreePath} {
		if got := read(t, root, "f.txt"); got != base {
			t.Errorf("%s f.txt not back:\n%s", root, got)
		}
		if _, err := os.Lstat(filepath.Join(root, "gen/p01")); !os.IsNotExist(err) {
			t.Errorf("%s: gen/p01 left (%v)", root, err)
		}
	}
	if p := f.pendingOf(s); p != 0 {
		t.Errorf("%d pending", p)
	}
	// The created files went into bins: every one of the worktree's, and
	// the workspace's but the user's. Let go, the emptier deletes them.
	trash := filepath.Join(f.eng.ProjectDir, "trash")
	if got := binned(t, trash); got != 2*n-1 {
		t.Errorf("the bins hold %d files, want %d", got, 2*n-1)
	}
	release()
	awaitEmpty(t, trash)
	all, err := f.eng.Records(f.ctx, s.ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		want := prsm.SyncSynced
		if r.RelPath == mine {
			want = prsm.SyncConflict
		}
		if r.Status != prsm.StatusRejected || r.SyncState != want || r.RejectedAt.IsZero() {
			t.Fatalf("%s %s: %s/%s at %v", r.ID, r.RelPath, r.Status, r.SyncState, r.RejectedAt)
		}
	}
	// What the page heard: the job, running then done, and no status
	// per file.
	var kinds []string
	for len(events) > 0 {
		ev := <-events
		switch ev.Type {
		case api.EventJobProgress:
			kinds = append(kinds, ev.Data.(api.Job).State)
		case api.EventFileChangeStatus:
			t.Fatalf("a file_change_status event in a bulk of %d", n)
		}
	}
	if len(kinds) < 2 || kinds[0] != api.JobRunning || kinds[len(kinds)-1] != api.JobDone {
		t.Errorf("job events: %v", kinds)
	}
	if open, _ := store.OpenIntents(f.ctx, f.q()); len(open) != 0 {
		t.Errorf("intents left open: %v", open)
	}
	// The job is readable after its end.
	if j, err := f.eng.Job(ans.Job.ID); err != nil || j.State != api.JobDone || j.Done != n+1 {
		t.Errorf("Job: %+v %v", j, err)
	}
	if _, err := f.eng.Job("nosuch"); err == nil {
		t.Error("a job that never ran was found")
	}
}

// binned counts the files in the bins under trash.
func binned(t *testing.T, trash string) int {
	t.Helper()
	bins, err := os.ReadDir(trash)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range bins {
		files, err := os.ReadDir(filepath.Join(trash, b.Name()))
		if err != nil {
			t.Fatal(err)
		}
		n += len(files)
	}
	return n
}

// awaitEmpty waits (generously: a loaded host) until trash holds nothing.
func awaitEmpty(t *testing.T, trash string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		left, err := os.ReadDir(trash)
		if err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the trash still holds %d bins", len(left))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRejectOfAToolCallOfManyFiles: the reject of one tool call that
// generated many files goes the same way, and a small reject still lists
// what it did and announces each status.
func TestRejectOfAToolCallOfManyFiles(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	const n = 1200
	f.tool(s, "gen", "Bash", "", func(wt string) { generate(t, wt, n) })
	f.tool(s, "w1", "Write", "new.txt", func(wt string) { write(t, wt, "new.txt", "new\n") })
	ans, err := f.eng.Reject(f.ctx, s.ID, "gen")
	if err != nil {
		t.Fatal(err)
	}
	if ans.Job == nil || ans.Job.Done != n || len(ans.Records) != 0 {
		t.Errorf("answer: %d records, job %+v", len(ans.Records), ans.Job)
	}
	gone(t, s.WorktreePath)
	gone(t, f.ws)
	events, unsubscribe := f.eng.Events.Subscribe()
	defer unsubscribe()
	ans, err = f.eng.Reject(f.ctx, s.ID, "w1")
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(ans.Records); got != "w1 create new.txt rejected/synced" {
		t.Errorf("small reject's answer: %s", got)
	}
	if exists(f.ws, "new.txt") || exists(s.WorktreePath, "new.txt") {
		t.Error("new.txt left")
	}
	status := 0
	for len(events) > 0 {
		if ev := <-events; ev.Type == api.EventFileChangeStatus {
			status++
		} else if ev.Type == api.EventJobProgress {
			t.Errorf("a small reject announced its job")
		}
	}
	if status != 1 {
		t.Errorf("%d file_change_status events, want 1", status)
	}
}

// TestCrashMidRejectAllFinishesAtStart: a kill after the first chunk of a
// bulk reject leaves the rest written down; the next start rejects them.
func TestCrashMidRejectAllFinishesAtStart(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	defer engine.SetBulkChunk(1000)()
	const n = 2100
	f.tool(s, "gen", "Bash", "", func(wt string) { generate(t, wt, n) })
	if !crashing(t, "reject:chunk", 1, func() { f.eng.Bulk(f.ctx, s.ID, false, "") }) {
		t.Fatal("crash point reject:chunk not reached")
	}
	if p := f.pendingOf(s); p == 0 || p == n {
		t.Fatalf("%d pending after the first chunk", p)
	}
	f.restart()
	if p := f.pendingOf(s); p != 0 {
		t.Errorf("%d pending after restart", p)
	}
	gone(t, s.WorktreePath)
	gone(t, f.ws)
}

// TestCrashMidDiscardFinishesAtStart: a kill in the middle of a discard's
// rejects leaves the rest, and the end, to the next start.
func TestCrashMidDiscardFinishesAtStart(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	defer engine.SetBulkChunk(1000)()
	const n = 2100
	f.tool(s, "gen", "Bash", "", func(wt string) { generate(t, wt, n) })
	if !crashing(t, "reject:reverted", 1500, func() { f.eng.EndSession(f.ctx, s.ID, true) }) {
		t.Fatal("crash point reject:reverted not reached")
	}
	if got, err := f.eng.Session(f.ctx, s.ID); err != nil || got.Status != prsm.SessionActive {
		t.Fatalf("session after the crash: %+v %v", got, err)
	}
	f.restart()
	got, err := f.eng.Session(f.ctx, s.ID)
	if err != nil || got.Status != prsm.SessionEnded || got.PendingCount != 0 {
		t.Fatalf("session after restart: %+v %v", got, err)
	}
	gone(t, f.ws)
	if _, err := os.Lstat(s.WorktreePath); !os.IsNotExist(err) {
		t.Errorf("worktree left: %v", err)
	}
}

// TestBulkJobGoesOnWithoutItsCaller: a bulk started as a job answers at
// once and goes to its end, its caller gone; it can be followed.
func TestBulkJobGoesOnWithoutItsCaller(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	const n = 1500
	f.tool(s, "gen", "Bash", "", func(wt string) { generate(t, wt, n) })
	ctx, cancel := context.WithCancel(f.ctx)
	job, err := f.eng.StartBulk(ctx, s.ID, false, "")
	cancel() // the client leaves
	if err != nil {
		t.Fatal(err)
	}
	if job.State != api.JobRunning || job.Total != n {
		t.Errorf("started: %+v", job)
	}
	if j := f.awaitJob(job.ID); j.State != api.JobDone || j.Done != n {
		t.Fatalf("ended: %+v", j)
	}
	gone(t, s.WorktreePath)
	gone(t, f.ws)
	// A bad request starts nothing.
	if _, err := f.eng.StartBulk(f.ctx, s.ID, false, "../outside"); err == nil {
		t.Error("a path outside the workspace was taken")
	}
	if _, err := f.eng.StartBulk(f.ctx, "nosuch", false, ""); err == nil {
		t.Error("a session that is not there was taken")
	}
}

// TestStartDiscardEndsTheSession: the discard job rejects, then ends.
func TestStartDiscardEndsTheSession(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	f.tool(s, "gen", "Bash", "", func(wt string) { generate(t, wt, 600) })
	job, err := f.eng.StartDiscard(f.ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if job.Kind != api.JobDiscard || job.Total != 600 {
		t.Errorf("job: %+v", job)
	}
	if j := f.awaitJob(job.ID); j.State != api.JobDone || j.Done != 600 {
		t.Fatalf("job: %+v", j)
	}
	got, err := f.eng.Session(f.ctx, s.ID)
	if err != nil || got.Status != prsm.SessionEnded {
		t.Fatalf("session: %+v %v", got, err)
	}
	gone(t, f.ws)
}

// TestRecordOfManyFilesKeepsAFileTheUserMade: the new files of a large
// call are staged while their records are stored and placed after; a
// file the user made at one of their paths in between is kept, and its
// record is in conflict, as for any change. The answer is bounded, the
// page hears the record's job, and every other file is in place.
func TestRecordOfManyFilesKeepsAFileTheUserMade(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	const n = 700
	mine := genRel(42)
	restore := engine.SetCrashHook(func(p string) {
		if p == "record:stored" {
			testgit.Write(t, f.ws, mine, "the user's\n", 0o644)
		}
	})
	events, unsubscribe := f.eng.Events.Subscribe()
	recs := f.tool(s, "gen", "Bash", "", func(wt string) { generate(t, wt, n) })
	restore()
	engine.AwaitAnswered(f.eng) // the work after the answer, which ends the job
	unsubscribe()
	if len(recs) != n {
		t.Fatalf("%d records answered, want %d", len(recs), n)
	}
	if got := read(t, f.ws, mine); got != "the user's\n" {
		t.Errorf("the user's file: %q", got)
	}
	for _, i := range []int{0, 41, 43, n - 1} {
		if got := read(t, f.ws, genRel(i)); got != genContent(i) {
			t.Errorf("workspace %s: %q", genRel(i), got)
		}
	}
	all, err := f.eng.Records(f.ctx, s.ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	conflicts := 0
	for _, r := range all {
		if r.SyncState == prsm.SyncConflict {
			conflicts++
			if r.RelPath != mine {
				t.Errorf("%s in conflict", r.RelPath)
			}
		} else if r.SyncState != prsm.SyncSynced {
			t.Errorf("%s: %s", r.RelPath, r.SyncState)
		}
	}
	if conflicts != 1 {
		t.Errorf("%d in conflict, want 1", conflicts)
	}
	var states []string
	for ev := range events {
		switch ev.Type {
		case api.EventJobProgress:
			if j := ev.Data.(api.Job); j.Kind == api.JobRecord {
				states = append(states, j.State)
			}
		case api.EventFileChanged:
			t.Fatalf("a file_changed event in a record of %d files", n)
		}
	}
	if len(states) < 2 || states[0] != api.JobRunning || states[len(states)-1] != api.JobDone {
		t.Errorf("record job events: %v", states)
	}
	// No staged file is left behind.
	filepath.WalkDir(f.ws, func(p string, d os.DirEntry, err error) error {
		if err == nil && sync.IsTempName(d.Name()) {
			t.Errorf("left: %s", p)
		}
		return nil
	})
}

// TestAcceptAllOfManyFiles: an accept of every pending change of many
// files stores their statuses a chunk at a time, the workspace as it is;
// a kill after the first chunk leaves the rest to the next start.
func TestAcceptAllOfManyFiles(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	defer engine.SetBulkChunk(1000)()
	const n = 2100
	f.tool(s, "gen", "Bash", "", func(wt string) { generate(t, wt, n) })
	if !crashing(t, "accept:chunk", 1, func() { f.eng.Bulk(f.ctx, s.ID, true, "") }) {
		t.Fatal("crash point accept:chunk not reached")
	}
	if p := f.pendingOf(s); p != n-1000 {
		t.Fatalf("%d pending after the first chunk, want %d", p, n-1000)
	}
	f.restart()
	if p := f.pendingOf(s); p != 0 {
		t.Errorf("%d pending after restart", p)
	}
	all, err := f.eng.Records(f.ctx, s.ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		if r.Status != prsm.StatusAccepted || r.SyncState != prsm.SyncSynced {
			t.Fatalf("%s: %s/%s", r.ID, r.Status, r.SyncState)
		}
	}
	for _, i := range []int{0, 1500, n - 1} {
		if got := read(t, f.ws, genRel(i)); got != genContent(i) {
			t.Errorf("workspace %s: %q", genRel(i), got)
		}
	}
	// Accepting again is a no-op.
	ans, err := f.eng.Bulk(f.ctx, s.ID, true, "")
	if err != nil || len(ans.Records) != 0 {
		t.Errorf("accept again: %v %v", ans, err)
	}
}

// A bulk accept or reject, of one session or of all, leaves a change in
// conflict with the user's edits pending, and the other changes of its
// file; it says how many it left (issue 44, item 1). A conflict is
// resolved, never merely accepted.
func TestBulkLeavesConflictsPending(t *testing.T) {
	for _, all := range []bool{false, true} {
		for _, accept := range []bool{true, false} {
			f := newFixture(t)
			s := f.start("")
			// The user edits line 2 of f.txt; the agent edits the same line.
			write(t, f.ws, "f.txt", strings.Replace(lines(20, ""), "line 2 \n", "mine2\n", 1))
			f.tool(s, "c1", "Edit", "f.txt", func(wt string) {
				write(t, wt, "f.txt", strings.Replace(lines(20, ""), "line 2 \n", "agent2\n", 1))
			})
			f.tool(s, "c2", "Edit", "f.txt", func(wt string) {
				write(t, wt, "f.txt", strings.Replace(lines(20, ""), "line 2 \n", "agent2b\n", 1))
			})
			f.tool(s, "o1", "Write", "other.txt", func(wt string) { write(t, wt, "other.txt", "other\n") })
			recs, err := f.eng.Records(f.ctx, s.ID, "", "")
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if r.ID == "c1:0" && r.SyncState != prsm.SyncConflict {
					t.Fatalf("setup: c1:0 %s, want a conflict", r.SyncState)
				}
			}
			var ans *api.Records
			if all {
				ans, err = f.eng.BulkAll(f.ctx, accept)
			} else {
				ans, err = f.eng.Bulk(f.ctx, s.ID, accept, "")
			}
			if err != nil {
				t.Fatal(err)
			}
			if ans.Job == nil || ans.Job.Left != 2 || ans.Job.Done != 1 {
				t.Fatalf("all %v accept %v: job %+v, want 1 done, 2 left", all, accept, ans.Job)
			}
			recs, err = f.eng.Records(f.ctx, s.ID, "", "")
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				want := prsm.StatusPending
				if r.RelPath == "other.txt" {
					want = prsm.StatusRejected
					if accept {
						want = prsm.StatusAccepted
					}
				}
				if r.Status != want {
					t.Errorf("all %v accept %v: %s %s, want %s", all, accept, r.ID, r.Status, want)
				}
			}
			if got := read(t, f.ws, "f.txt"); !strings.Contains(got, "mine2\n") || strings.Contains(got, "agent2") {
				t.Errorf("all %v accept %v: the user's f.txt changed: %q", all, accept, got)
			}
		}
	}
}
