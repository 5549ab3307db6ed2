package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testenv"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/store"
)

func newEngine(t *testing.T) (*engine.Engine, string) { return newEngineTB(t) }

func newEngineTB(t testing.TB) (*engine.Engine, string) {
	t.Helper()
	return newEngineFrom(t, "ws")
}

// newEngineFrom is an engine over a copy of the workspace template name
// (template_test.go), its store a copy of the empty one.
func newEngineFrom(t testing.TB, name string) (*engine.Engine, string) {
	t.Helper()
	testgit.Env(t)
	ws := filepath.Join(t.TempDir(), "ws")
	fromTemplate(t, name, ws)
	project := t.TempDir()
	fromTemplate(t, "project", project)
	return testenv.Engine(t, ws, project, nil), ws
}

func TestEndRefusesPendingWork(t *testing.T) {
	eng, ws := newEngine(t)
	ctx := context.Background()
	s, err := eng.StartSession(ctx, api.StartRequest{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if s.AgentID != "unknown" || s.Mode != prsm.ModeAuto {
		t.Errorf("defaults: %+v", s)
	}
	rec := &prsm.Record{ID: "t1", SessionID: s.ID, FilePath: filepath.Join(ws, "a.txt"), RelPath: "a.txt",
		ChangeType: prsm.ChangeModify, ToolCallID: "t1", ToolName: "Edit", Timestamp: time.Now().UTC(),
		Status: prsm.StatusPending, SyncState: prsm.SyncSynced}
	if err := store.InsertRecord(ctx, eng.DB.Q(), rec); err != nil {
		t.Fatal(err)
	}
	_, err = eng.EndSession(ctx, s.ID, false)
	var pe *prsm.Error
	if !errors.As(err, &pe) || pe.Code != "unreviewed_changes" || !errors.Is(err, prsm.ErrConflict) || !strings.Contains(pe.Msg, "1 pending") {
		t.Fatalf("end with pending work: %v", err)
	}
	if _, err := os.Stat(s.WorktreePath); err != nil {
		t.Fatalf("worktree removed despite refusal: %v", err)
	}
	got, err := eng.Session(ctx, s.ID)
	if err != nil || got.Status != prsm.SessionActive || got.PendingCount != 1 {
		t.Fatalf("session after refusal: %+v %v", got, err)
	}
	ended, err := eng.EndSession(ctx, s.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	if ended.Status != prsm.SessionEnded || ended.EndedAt == nil {
		t.Errorf("ended = %+v", ended)
	}
	if _, err := os.Stat(s.WorktreePath); !os.IsNotExist(err) {
		t.Errorf("worktree still there")
	}
	// Records stay readable after the end.
	engine.Settle(eng)
	recs, err := store.ListRecords(ctx, eng.DB.Q(), store.RecordFilter{SessionID: s.ID})
	if err != nil || len(recs) != 1 {
		t.Errorf("records after end: %v %v", recs, err)
	}
}

func TestEndAfterWorktreeDeletedByHand(t *testing.T) {
	eng, ws := newEngine(t)
	ctx := context.Background()
	s, err := eng.StartSession(ctx, api.StartRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "session-1" {
		t.Errorf("default name %q", s.Name)
	}
	if err := os.RemoveAll(s.WorktreePath); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.EndSession(ctx, s.ID, false); err != nil {
		t.Fatal(err)
	}
	if list := testgit.Git(t, ws, "worktree", "list", "--porcelain"); strings.Contains(list, s.ID) {
		t.Errorf("worktree still registered:\n%s", list)
	}
	if b := testgit.Git(t, ws, "branch", "--list", "prsm/*"); b != "" {
		t.Errorf("branch left: %s", b)
	}
}

func TestStartValidation(t *testing.T) {
	eng, ws := newEngine(t)
	ctx := context.Background()
	before := testgit.State(t, ws)
	for _, req := range []api.StartRequest{
		{Name: "bad\nname"},
		{Name: strings.Repeat("n", 101)},
		{Name: "bad\xffutf8"},
		{AgentID: "a\x00b"},
		{Mode: "fast"},
	} {
		if _, err := eng.StartSession(ctx, req); !errors.Is(err, prsm.ErrInvalid) {
			t.Errorf("%+v: err = %v, want ErrInvalid", req, err)
		}
	}
	list, err := eng.Sessions(ctx, "")
	if err != nil || len(list) != 0 {
		t.Fatalf("sessions after bad starts: %v %v", list, err)
	}
	if entries, _ := os.ReadDir(eng.WorktreeDir()); len(entries) != 0 {
		t.Errorf("worktree dir not empty: %v", entries)
	}
	if got := testgit.State(t, ws); got != before {
		t.Errorf("user repository changed")
	}
	if _, err := eng.StartSession(ctx, api.StartRequest{Name: "日本語 name"}); err != nil {
		t.Errorf("non-ASCII name refused: %v", err)
	}
}

// TestEndRefusesUnrecordedWork: a file changed in the worktree that no
// record describes yet is unreviewed work too; ending is refused with its
// name, the file stays, and --discard ends the session.
func TestEndRefusesUnrecordedWork(t *testing.T) {
	eng, _ := newEngine(t)
	ctx := context.Background()
	s, err := eng.StartSession(ctx, api.StartRequest{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	testgit.Write(t, s.WorktreePath, "new.txt", "agent work\n", 0o644)
	_, err = eng.EndSession(ctx, s.ID, false)
	var pe *prsm.Error
	if !errors.As(err, &pe) || pe.Code != "unreviewed_changes" || !strings.Contains(pe.Msg, "has changes prsm has not recorded (new.txt)") {
		t.Fatalf("end with unrecorded work: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(s.WorktreePath, "new.txt")); err != nil || string(b) != "agent work\n" {
		t.Fatalf("unrecorded work touched: %q %v", b, err)
	}
	if _, err := eng.EndSession(ctx, s.ID, true); err != nil {
		t.Fatalf("end --discard: %v", err)
	}
	if _, err := os.Stat(s.WorktreePath); !os.IsNotExist(err) {
		t.Fatalf("worktree left after end --discard: %v", err)
	}
}

// TestStartCutOffLeavesNoBranch: a start a kill cut off inside `git
// worktree add` leaves the session's branch (prsm's base snapshot) and no
// worktree; the next start deletes it. Branches prsm/<id> that hold other
// commits, are checked out somewhere, or belong to a session stay.
func TestStartCutOffLeavesNoBranch(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	snap, err := f.eng.Repo.Snapshot(f.ctx, "prsm: base of session aaaaaaaaaaaa (cut off)")
	if err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, f.ws, "branch", "prsm/aaaaaaaaaaaa", snap)   // the cut-off start's
	testgit.Git(t, f.ws, "branch", "prsm/bbbbbbbbbbbb", "HEAD") // the user's own commit
	testgit.Git(t, f.ws, "branch", "prsm/cccccccccccc", snap)
	other := filepath.Join(t.TempDir(), "other")
	testgit.Git(t, f.ws, "worktree", "add", "--quiet", other, "prsm/cccccccccccc") // checked out
	testgit.Git(t, f.ws, "branch", "prsm/not-a-session", snap)
	f.restart()
	got := testgit.Git(t, f.ws, "for-each-ref", "--format=%(refname:lstrip=2)", "refs/heads/prsm/")
	want := []string{"prsm/bbbbbbbbbbbb", "prsm/cccccccccccc", "prsm/not-a-session", s.Branch}
	sort.Strings(want)
	if got != strings.Join(want, "\n") {
		t.Errorf("session branches after the restart:\n%s\nwant: %v", got, want)
	}
}
