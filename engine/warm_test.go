package engine_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	stdsync "sync"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testenv"
	"github.com/prsm-dev/prsm/internal/testgit"
)

// warmWorkspace is a workspace with a text, a binary, an executable, a
// symlink, a nested file and an ignore file committed.
func warmWorkspace(t *testing.T) string {
	t.Helper()
	testgit.Env(t)
	return warmRepo(t)
}

// warmRepo is warmWorkspace's repository, made in the git environment
// that the caller set with testgit.Env.
func warmRepo(t *testing.T) string {
	t.Helper()
	ws := testgit.Init(t, "ws")
	testgit.Write(t, ws, "a.txt", "a\n", 0o644)
	testgit.Write(t, ws, "b.txt", "b\n", 0o644)
	testgit.Write(t, ws, "del.txt", "gone soon\n", 0o644)
	testgit.Write(t, ws, "mode.sh", "echo hi\n", 0o644)
	testgit.Write(t, ws, "run.sh", "echo run\n", 0o755)
	testgit.Write(t, ws, "bin.dat", "\x00\x01\x02binary\xff", 0o644)
	testgit.Write(t, ws, "dir/x.txt", "x\n", 0o644)
	testgit.Write(t, ws, "dir/sub/y.txt", "y\n", 0o644)
	testgit.Write(t, ws, ".gitignore", "*.log\n", 0o644)
	testgit.Symlink(t, ws, "link", "a.txt")
	testgit.Git(t, ws, "add", "-A")
	testgit.Git(t, ws, "commit", "-qm", "init")
	return ws
}

// dirtyWorkspace moves HEAD to a new commit and leaves staged, unstaged,
// untracked, deleted, mode-changed, symlink and binary changes, and an
// ignored file.
func dirtyWorkspace(t *testing.T, ws string) {
	t.Helper()
	testgit.Write(t, ws, "dir/x.txt", "x committed later\n", 0o644)
	testgit.Write(t, ws, "later.txt", "a file of the next commit\n", 0o644)
	testgit.Git(t, ws, "add", "-A")
	testgit.Git(t, ws, "commit", "-qm", "second")
	testgit.Write(t, ws, "a.txt", "a staged\n", 0o644)
	testgit.Git(t, ws, "add", "a.txt")
	testgit.Write(t, ws, "b.txt", "b unstaged\n", 0o644)
	testgit.Write(t, ws, "new/untracked.txt", "untracked\n", 0o644)
	if err := os.Remove(filepath.Join(ws, "del.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(ws, "mode.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	testgit.Symlink(t, ws, "link", "b.txt")
	testgit.Symlink(t, ws, "newlink", "dir/x.txt")
	testgit.Write(t, ws, "bin.dat", "\x00\x09changed\xfe\x00", 0o644)
	testgit.Write(t, ws, "noise.log", "ignored\n", 0o644)
}

// sessionTree describes a session's worktree as git and the files show
// it: every file's bytes and mode, its index, HEAD's branch and commit,
// and its status.
func sessionTree(t *testing.T, s *prsm.Session) (files map[string]string, git string) {
	t.Helper()
	files = testgit.Tree(t, s.WorktreePath, nil)
	head := testgit.Git(t, s.WorktreePath, "symbolic-ref", "HEAD")
	if want := "refs/heads/" + s.Branch; head != want {
		t.Errorf("HEAD of %s is %q, want %q", s.WorktreePath, head, want)
	}
	if id := testgit.Git(t, s.WorktreePath, "rev-parse", "HEAD"); id != s.BaseCommit {
		t.Errorf("HEAD of %s is at %s, want the base %s", s.WorktreePath, id, s.BaseCommit)
	}
	status := testgit.Git(t, s.WorktreePath, "status", "--porcelain", "--untracked-files=all", "--ignored")
	if status != "" {
		t.Errorf("worktree %s is not clean:\n%s", s.WorktreePath, status)
	}
	return files, testgit.Git(t, s.WorktreePath, "ls-files", "-s")
}

func startWarmEngine(t *testing.T, ws string) *engine.Engine {
	t.Helper()
	eng := testenv.Engine(t, ws, t.TempDir(), slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	eng.StartWarming(ctx)
	return eng
}

// A start from a warm worktree gives exactly the tree a cold start gives,
// after the workspace moved HEAD and changed every kind of file since the
// warm worktree was made.
func TestWarmStartEqualsColdStart(t *testing.T) {
	ws := warmWorkspace(t)
	ctx := context.Background()
	warm := startWarmEngine(t, ws)
	path := engine.AwaitWarm(t, warm)
	if path == "" {
		t.Fatal("no warm worktree prepared")
	}
	dirtyWorkspace(t, ws)
	before := testgit.State(t, ws)

	ws1, err := warm.StartSession(ctx, api.StartRequest{Name: "warm"})
	if err != nil {
		t.Fatal(err)
	}
	if got := engine.WarmTaken(warm); got != 1 {
		t.Fatalf("warm starts = %d, want 1", got)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("the warm worktree %s is still there after a session took it (%v)", path, err)
	}
	cold := testenv.Engine(t, ws, t.TempDir(), nil) // never warms
	cs, err := cold.StartSession(ctx, api.StartRequest{Name: "cold"})
	if err != nil {
		t.Fatal(err)
	}
	if got := engine.WarmTaken(cold); got != 0 {
		t.Fatalf("cold engine's warm starts = %d", got)
	}
	wFiles, wIndex := sessionTree(t, ws1)
	cFiles, cIndex := sessionTree(t, cs)
	if d := testgit.Diff(wFiles, cFiles); d != "" {
		t.Errorf("warm and cold session trees differ:\n%s", d)
	}
	if wIndex != cIndex {
		t.Errorf("warm index:\n%s\ncold index:\n%s", wIndex, cIndex)
	}
	if d := testgit.Diff(wFiles, testgit.Tree(t, ws, testgit.Ignored(t, ws))); d != "" {
		t.Errorf("warm session tree differs from the workspace:\n%s", d)
	}
	for rel, want := range map[string]string{
		"a.txt": `0 "a staged\n"`, "b.txt": `0 "b unstaged\n"`, "mode.sh": `111 "echo hi\n"`,
		"link": "link b.txt", "newlink": "link dir/x.txt", "new/untracked.txt": `0 "untracked\n"`,
		"dir/x.txt": `0 "x committed later\n"`, "bin.dat": `0 "\x00\tchanged\xfe\x00"`,
	} {
		if wFiles[rel] != want {
			t.Errorf("warm session's %s = %s, want %s", rel, wFiles[rel], want)
		}
	}
	for _, rel := range []string{"del.txt", "noise.log"} {
		if _, ok := wFiles[rel]; ok {
			t.Errorf("warm session has %s", rel)
		}
	}
	if after := testgit.State(t, ws); after != before {
		t.Errorf("session start changed the workspace's state:\n%s\nvs\n%s", before, after)
	}
	// Another is prepared for the next start, and that one is warm too.
	next := engine.AwaitWarm(t, warm)
	if next == "" || next == path {
		t.Fatalf("next warm worktree = %q (the taken one %q)", next, path)
	}
	ws2, err := warm.StartSession(ctx, api.StartRequest{Name: "warm2"})
	if err != nil {
		t.Fatal(err)
	}
	if got := engine.WarmTaken(warm); got != 2 {
		t.Fatalf("warm starts = %d, want 2", got)
	}
	w2Files, _ := sessionTree(t, ws2)
	if d := testgit.Diff(w2Files, cFiles); d != "" {
		t.Errorf("second warm session differs from the cold one:\n%s", d)
	}
	if _, err := warm.EndSession(ctx, ws1.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(ws1.WorktreePath); !os.IsNotExist(err) {
		t.Errorf("ended warm session's worktree still there (%v)", err)
	}
}

// A warm worktree that someone changed is never handed to a session: the
// start is cold and right, and the changed one is replaced. Each case has
// its own workspace and engine; most of a case's time is spent waiting
// for its engine to prepare a warm worktree in the background (FillWarm
// waits out git's racy second), twice, so every case's engine of a group
// is started first and the cases then go through their starts, and then
// through their replacements, one by one, while the others' preparations
// go on.
func TestDirtyWarmWorktreeNotUsed(t *testing.T) {
	dirties := map[string]func(t *testing.T, wt string){
		"file edited": func(t *testing.T, wt string) {
			testgit.Write(t, wt, "a.txt", "edited in the warm tree\n", 0o644)
		},
		"file added": func(t *testing.T, wt string) {
			testgit.Write(t, wt, "dir/sub/added.txt", "added\n", 0o644)
		},
		"ignored file added": func(t *testing.T, wt string) {
			testgit.Write(t, wt, "secret.log", "added\n", 0o644)
		},
		"directory deleted": func(t *testing.T, wt string) {
			if err := os.RemoveAll(filepath.Join(wt, "dir")); err != nil {
				t.Fatal(err)
			}
		},
		"mode changed": func(t *testing.T, wt string) {
			if err := os.Chmod(filepath.Join(wt, "a.txt"), 0o755); err != nil {
				t.Fatal(err)
			}
		},
		"unstaged in its index": func(t *testing.T, wt string) {
			testgit.Git(t, wt, "rm", "-q", "--cached", "a.txt")
		},
		"committed": func(t *testing.T, wt string) {
			testgit.Write(t, wt, "a.txt", "committed in the warm tree\n", 0o644)
			testgit.Git(t, wt, "commit", "-qam", "x")
		},
		"whole tree deleted": func(t *testing.T, wt string) {
			if err := os.RemoveAll(wt); err != nil {
				t.Fatal(err)
			}
		},
	}
	for _, watched := range []bool{true, false} {
		t.Run(map[bool]string{true: "watched", false: "git status"}[watched], func(t *testing.T) {
			if !watched {
				engine.NoWarmWatch(t)
			}
			testgit.Env(t)
			cases := map[string]*dirtyWarmCase{}
			for name := range dirties {
				ws := warmRepo(t)
				cases[name] = &dirtyWarmCase{ws: ws, eng: startWarmEngine(t, ws)}
			}
			for name, dirty := range dirties {
				t.Run(name, func(t *testing.T) { cases[name].start(t, dirty) })
			}
			for name := range dirties {
				t.Run(name+" replaced", func(t *testing.T) { cases[name].replaced(t) })
			}
		})
	}
}

// dirtyWarmCase is a case of TestDirtyWarmWorktreeNotUsed: a workspace,
// an engine that prepares warm worktrees, its first warm worktree and the
// session started after that was changed.
type dirtyWarmCase struct {
	ws   string
	eng  *engine.Engine
	path string
	s    *prsm.Session
}

// start changes the engine's prepared warm worktree by dirty and starts a
// session: the start must not take it.
func (c *dirtyWarmCase) start(t *testing.T, dirty func(t *testing.T, wt string)) {
	ctx := context.Background()
	path := engine.AwaitWarm(t, c.eng)
	if path == "" {
		t.Fatal("no warm worktree prepared")
	}
	dirty(t, path)
	s, err := c.eng.StartSession(ctx, api.StartRequest{Name: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if got := engine.WarmTaken(c.eng); got != 0 {
		t.Fatalf("a changed warm worktree was taken (%d)", got)
	}
	files, _ := sessionTree(t, s)
	if d := testgit.Diff(files, testgit.Tree(t, c.ws, testgit.Ignored(t, c.ws))); d != "" {
		t.Errorf("session tree differs from the workspace:\n%s", d)
	}
	c.path, c.s = path, s
}

// replaced checks that the changed warm worktree gave way to a new one.
func (c *dirtyWarmCase) replaced(t *testing.T) {
	if c.s == nil {
		t.Skip("the case's start failed")
	}
	next := engine.AwaitWarm(t, c.eng)
	if next == "" || next == c.path {
		t.Fatalf("changed warm worktree not replaced: %q (was %q)", next, c.path)
	}
	if _, err := os.Lstat(c.path); !os.IsNotExist(err) {
		t.Errorf("changed warm worktree %s still there (%v)", c.path, err)
	}
	if list := testgit.Git(t, c.ws, "worktree", "list", "--porcelain"); strings.Count("\n"+list, "\nworktree ") != 3 {
		t.Errorf("want the workspace, the session's and one warm worktree:\n%s", list)
	}
}

// PRSM_WARM_WORKTREES=0 makes no warm worktree, removes one an earlier
// server left, and sessions start cold.
func TestWarmWorktreesOff(t *testing.T) {
	ws := warmWorkspace(t)
	ctx := context.Background()
	project := t.TempDir()
	on := testenv.Engine(t, ws, project, nil)
	onCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	on.StartWarming(onCtx)
	left := engine.AwaitWarm(t, on)
	if left == "" {
		t.Fatal("no warm worktree prepared")
	}
	on.Close()

	t.Setenv("PRSM_WARM_WORKTREES", "0")
	off := testenv.Engine(t, ws, filepath.Join(t.TempDir(), "p2"), nil)
	off.StartWarming(ctx)
	if p := engine.AwaitWarm(t, off); p != "" {
		t.Fatalf("warm worktree %s with PRSM_WARM_WORKTREES=0", p)
	}
	ents, _ := os.ReadDir(filepath.Join(off.WorktreeDir(), ".warm"))
	if len(ents) != 0 {
		t.Errorf("warm directory holds %d entries", len(ents))
	}
	s, err := off.StartSession(ctx, api.StartRequest{Name: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if got := engine.WarmTaken(off); got != 0 {
		t.Fatalf("warm starts = %d", got)
	}
	sessionTree(t, s)

	// The first project's leftover goes when its next server starts
	// with warm worktrees off.
	again := testenv.Engine(t, ws, project, nil)
	again.StartWarming(ctx)
	if p := engine.AwaitWarm(t, again); p != "" {
		t.Fatalf("warm worktree %s with PRSM_WARM_WORKTREES=0", p)
	}
	if _, err := os.Lstat(left); !os.IsNotExist(err) {
		t.Errorf("left warm worktree %s still there (%v)", left, err)
	}
	if list := testgit.Git(t, ws, "worktree", "list", "--porcelain"); strings.Contains(list, ".warm") {
		t.Errorf("git still lists a warm worktree:\n%s", list)
	}
}

// A warm worktree left by a server that stopped is kept by the next one
// when clean, and reconcile never takes it for a session's.
func TestWarmWorktreeKeptAcrossRestart(t *testing.T) {
	ws := warmWorkspace(t)
	ctx := context.Background()
	project := t.TempDir()
	first := testenv.Engine(t, ws, project, nil)
	fctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first.StartWarming(fctx)
	left := engine.AwaitWarm(t, first)
	if left == "" {
		t.Fatal("no warm worktree prepared")
	}
	first.Close()
	second := testenv.Engine(t, ws, project, nil)
	if _, err := second.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	second.StartWarming(ctx)
	if p := engine.AwaitWarm(t, second); p != left {
		t.Fatalf("warm worktree %q, want the one left %q", p, left)
	}
	if list, err := second.Sessions(ctx, ""); err != nil || len(list) != 0 {
		t.Fatalf("sessions = %v, %v", list, err)
	}
	if list := testgit.Git(t, ws, "worktree", "list", "--porcelain"); !strings.Contains(list, "locked prsm: warm worktree") {
		t.Errorf("warm worktree not locked with its reason:\n%s", list)
	}
}

// Two sessions started at once get two different worktrees, each the
// workspace.
func TestWarmConcurrentStarts(t *testing.T) {
	ws := warmWorkspace(t)
	ctx := context.Background()
	eng := startWarmEngine(t, ws)
	if engine.AwaitWarm(t, eng) == "" {
		t.Fatal("no warm worktree prepared")
	}
	dirtyWorkspace(t, ws)
	var wg stdsync.WaitGroup
	got := make([]*prsm.Session, 2)
	errs := make([]error, 2)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = eng.StartSession(ctx, api.StartRequest{Name: []string{"one", "two"}[i]})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got[0].WorktreePath == got[1].WorktreePath {
		t.Fatalf("both sessions got %s", got[0].WorktreePath)
	}
	if n := engine.WarmTaken(eng); n != 1 {
		t.Errorf("warm starts = %d, want 1", n)
	}
	want := testgit.Tree(t, ws, testgit.Ignored(t, ws))
	for _, s := range got {
		files, _ := sessionTree(t, s)
		if d := testgit.Diff(files, want); d != "" {
			t.Errorf("session %s differs from the workspace:\n%s", s.Name, d)
		}
	}
}

// testWriter sends a log to the test's.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// A .gitattributes change since the warm worktree was made changes how
// files the switch would not write are checked out: the start is cold,
// and its tree what a cold start gives.
func TestWarmStartAttributesChanged(t *testing.T) {
	ws := warmWorkspace(t)
	ctx := context.Background()
	eng := startWarmEngine(t, ws)
	if engine.AwaitWarm(t, eng) == "" {
		t.Fatal("no warm worktree prepared")
	}
	testgit.Write(t, ws, ".gitattributes", "*.txt text eol=crlf\n", 0o644)
	s, err := eng.StartSession(ctx, api.StartRequest{Name: "attrs"})
	if err != nil {
		t.Fatal(err)
	}
	cold := testenv.Engine(t, ws, t.TempDir(), nil)
	cs, err := cold.StartSession(ctx, api.StartRequest{Name: "cold"})
	if err != nil {
		t.Fatal(err)
	}
	wFiles, _ := sessionTree(t, s)
	cFiles, _ := sessionTree(t, cs)
	if d := testgit.Diff(wFiles, cFiles); d != "" {
		t.Errorf("session trees differ:\n%s", d)
	}
	if got := cFiles["dir/x.txt"]; got != `0 "x\r\n"` {
		t.Errorf("cold start's dir/x.txt = %s, want CRLF", got)
	}
}

// A session from a warm worktree records its tool calls as one from a
// cold start does: the edit only, nothing of what the warm start wrote.
func TestWarmSessionRecords(t *testing.T) {
	scannedAndWatched(t, func(t *testing.T, f *fixture) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		f.eng.StartWarming(ctx)
		if engine.AwaitWarm(t, f.eng) == "" {
			t.Fatal("no warm worktree prepared")
		}
		testgit.Write(t, f.ws, "keep.txt", "kept, uncommitted\n", 0o644)
		testgit.Write(t, f.ws, "new.txt", "untracked\n", 0o644)
		s := f.start("")
		if engine.WarmTaken(f.eng) != 1 {
			t.Fatal("start was not warm")
		}
		want := replaceLine(read(t, f.ws, "f.txt"), 3, "three")
		recs := f.tool(s, "t1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", want) })
		if got := summary(recs); got != "t1 modify f.txt pending/synced" {
			t.Fatalf("records:\n%s", got)
		}
		if got := read(t, f.ws, "f.txt"); got != want {
			t.Errorf("workspace not synced:\n%s", got)
		}
		recs = f.tool(s, "t2", "Bash", "", func(string) {})
		if len(recs) != 0 {
			t.Errorf("a call that changed nothing made records:\n%s", summary(recs))
		}
	})
}
