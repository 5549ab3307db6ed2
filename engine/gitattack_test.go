package engine_test

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/testgit"
)

// plantFakeGitDir plays the attack of issue 31 in the worktree wt, as an
// agent can from inside it: it copies the workspace's git directory
// (.git) and the worktree's own admin entry (.git/worktrees/<id>) into
// the worktree, points the copied entry's commondir at the copied .git,
// sets core.fsmonitor in the copy's config to a script that appends to
// marker, and writes "gitdir: <the copied entry>" into the worktree's
// .git file. Any git that reads that .git file runs the script.
func plantFakeGitDir(t *testing.T, ws, wt, marker string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(wt, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	admin := strings.TrimSpace(strings.TrimPrefix(string(b), "gitdir:"))
	for _, cp := range [][2]string{{filepath.Join(ws, ".git"), "fake-common"}, {admin, "fake-admin"}} {
		if _, err := os.Lstat(filepath.Join(wt, cp[1])); err == nil {
			continue // planted by an earlier call
		}
		if out, err := exec.Command("cp", "-r", cp[0], filepath.Join(wt, cp[1])).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
	}
	common := filepath.Join(wt, "fake-common")
	if err := os.WriteFile(filepath.Join(wt, "fake-admin", "commondir"), []byte(common+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(common, "fsmonitor.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"ran $*\" >> '"+marker+"'\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.OpenFile(filepath.Join(common, "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(cfg, "[core]\n\tfsmonitor = %s\n", script)
	cfg.Close()
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+filepath.Join(wt, "fake-admin")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAgentNeverControlsGit is the attack of issue 31, item 1: an agent
// rewrites its worktree's .git file to name a git directory it built in
// its worktree, whose config runs a command (core.fsmonitor). Over
// several tool calls, with the git status scan and with the watcher, and
// across a restart: the command never runs (prsm names the git directory
// itself), the worktree's .git is put back as git wrote it (what the
// agent wrote is kept in the project's quarantine, and the session's note
// says so), the file the agent touched is recorded and synced, and
// nothing of the fake git directories is recorded or reaches the
// workspace.
func TestAgentNeverControlsGit(t *testing.T) {
	scannedAndWatched(t, func(t *testing.T, f *fixture) {
		s := f.start("")
		wt := s.WorktreePath
		dotgit := filepath.Join(wt, ".git")
		orig, err := os.ReadFile(dotgit)
		if err != nil {
			t.Fatal(err)
		}
		marker := filepath.Join(t.TempDir(), "marker")
		ran := func(when string) {
			t.Helper()
			if b, err := os.ReadFile(marker); err == nil {
				t.Fatalf("%s: the agent's core.fsmonitor ran:\n%s", when, b)
			}
		}
		for i := 1; i <= 3; i++ {
			id := fmt.Sprintf("attack%d", i)
			touched := fmt.Sprintf("touched%d.txt", i)
			recs := f.tool(s, id, "Bash", "", func(wt string) {
				plantFakeGitDir(t, f.ws, wt, marker)
				write(t, wt, touched, "agent's work\n")
			})
			ran(id)
			if got, want := summary(recs), id+":0 create "+touched+" pending/synced"; got != want {
				t.Errorf("%s records:\n%s\nwant %s", id, got, want)
			}
			if got := read(t, f.ws, touched); got != "agent's work\n" {
				t.Errorf("%s: workspace %s = %q", id, touched, got)
			}
			if b, err := os.ReadFile(dotgit); err != nil || string(b) != string(orig) {
				t.Errorf("%s: worktree .git holds %q %v, want it repaired to %q", id, b, err, orig)
			}
		}
		// The user's git in the worktree sees prsm's git directory again.
		if got := testgit.Git(t, wt, "rev-parse", "--git-dir"); !strings.HasSuffix(got, filepath.Join(".git", "worktrees", filepath.Base(wt))) {
			t.Errorf("git in the worktree uses %s", got)
		}
		ran("the user's git in the worktree")
		f.restart()
		ran("restart")

		all, err := f.eng.Records(f.ctx, s.ID, "", "")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range all {
			if !strings.HasPrefix(r.RelPath, "touched") {
				t.Errorf("recorded %s (%s)", r.RelPath, r.ID)
			}
		}
		if len(all) != 3 {
			t.Errorf("%d records:\n%s", len(all), summary(all))
		}
		for _, p := range []string{"fake-common", "fake-admin"} {
			if _, err := os.Lstat(filepath.Join(f.ws, p)); !os.IsNotExist(err) {
				t.Errorf("workspace holds %s: %v", p, err)
			}
		}
		if cfg := read(t, f.ws, ".git/config"); strings.Contains(cfg, "fsmonitor") {
			t.Errorf("workspace config changed:\n%s", cfg)
		}
		// What the agent wrote at .git is kept, not deleted.
		kept, _ := filepath.Glob(filepath.Join(f.eng.ProjectDir, "quarantine", "*"))
		var found bool
		for _, k := range kept {
			if b, err := os.ReadFile(k); err == nil && strings.Contains(string(b), "fake-admin") {
				found = true
			}
		}
		if !found {
			t.Errorf("the agent's .git file is not kept in the quarantine: %q", kept)
		}
		// The user is told: the session's note names both.
		got, err := f.eng.Session(f.ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"worktree's .git was changed", "fake-common", "fake-admin"} {
			if !strings.Contains(got.Note, want) {
				t.Errorf("session note %q does not mention %s", got.Note, want)
			}
		}
	})
}

// syncBuffer is a log the engine writes from several goroutines.
type syncBuffer struct {
	mu stdsync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestGitPathsNeverRecorded: what an agent puts at a path through a .git
// segment, at any depth (a copied .git directory, a .git file, a
// repository it clones or inits), is never recorded nor synced; the
// attempt is logged, noted on the session and announced (session_updated),
// once. Its ordinary files next to them are recorded as ever.
func TestGitPathsNeverRecorded(t *testing.T) {
	scannedAndWatched(t, func(t *testing.T, f *fixture) {
		var logs syncBuffer
		f.eng.Log = slog.New(slog.NewTextHandler(&logs, nil))
		events, stop := f.eng.Events.Subscribe()
		defer stop()
		s := f.start("")
		recs := f.tool(s, "g1", "Bash", "", func(wt string) {
			sh(t, wt, "cp -r '"+filepath.Join(f.ws, ".git")+"' sub-git && mkdir -p sub && mv sub-git sub/.git && "+
				"mkdir -p a && printf 'gitdir: ../sub/.git\\n' > a/.git && echo mine > a/mine.txt && "+
				"mkdir cloned && cd cloned && git init -q && echo src > src.txt")
		})
		if got, want := summary(recs), "g1:0 create a/mine.txt pending/synced\ng1:1 create cloned/src.txt pending/synced"; got != want {
			t.Errorf("records:\n%s\nwant\n%s", got, want)
		}
		for _, p := range []string{"sub", "a/.git", "cloned/.git"} {
			if _, err := os.Lstat(filepath.Join(f.ws, p)); !os.IsNotExist(err) {
				t.Errorf("workspace holds %s: %v", p, err)
			}
		}
		got, err := f.eng.Session(f.ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"sub/.git", "a/.git", "cloned/.git"} {
			if !strings.Contains(got.Note, want) {
				t.Errorf("session note %q does not name %s", got.Note, want)
			}
			if !strings.Contains(logs.String(), want) {
				t.Errorf("log does not name %s:\n%s", want, logs.String())
			}
		}
		// The announcement may follow the tool call's answer.
		deadline := time.After(time.Minute)
	announce:
		for {
			select {
			case ev := <-events:
				if ss, ok := ev.Data.(*prsm.Session); ok && ev.Type == api.EventSessionUpdated && strings.Contains(ss.Note, "sub/.git") {
					break announce
				}
			case <-deadline:
				t.Errorf("no session_updated event carried the note")
				break announce
			}
		}
		// Once: a later call that changes them again adds nothing.
		note := got.Note
		f.tool(s, "g2", "Bash", "", func(wt string) { sh(t, wt, "echo more >> sub/.git/config && echo 2 >> a/mine.txt") })
		if again, _ := f.eng.Session(f.ctx, s.ID); again.Note != note {
			t.Errorf("note grew: %q", again.Note)
		}
	})
}

// TestAgentFiltersNeverRun is issue 42, item 9: from its worktree an
// agent sets filter drivers in the repository's shared config (a clean
// and a smudge command, a required one, and a long-running process
// filter), each of which leaves a marker, and names them in
// .gitattributes. Neither recording that tool call, nor the next
// session's start (its snapshot and checkout), nor recording an edit of
// such a file there (git status in the worktree), nor a rewind runs one:
// the files are taken, compared, synced and rewound as their bytes.
func TestAgentFiltersNeverRun(t *testing.T) {
	f := newFixture(t)
	marks := t.TempDir()
	ran := func(when string) {
		t.Helper()
		if names := testgit.Names(marks); len(names) > 0 {
			t.Fatalf("%s: the agent's filters ran: %v", when, names)
		}
	}
	s1 := f.start("")
	f.tool(s1, "a1", "Bash", "", func(wt string) {
		sh(t, wt, fmt.Sprintf(`git config filter.evil.clean "touch %[1]s/clean; tr a-z A-Z" &&
			git config filter.evil.smudge "touch %[1]s/smudge; tr A-Z a-z" &&
			git config filter.evil.required true &&
			git config filter.Proc.process "touch %[1]s/process" &&
			printf '*.dat filter=evil\n*.p filter=Proc\n' > .gitattributes &&
			echo data > a.dat && echo p > b.p`, marks))
	})
	ran("recording the agent's call")
	if got := read(t, f.ws, "a.dat"); got != "data\n" {
		t.Fatalf("workspace a.dat = %q", got)
	}
	s2, err := f.eng.StartSession(f.ctx, api.StartRequest{})
	ran("the next session start")
	if err != nil {
		t.Fatalf("the next session start: %v", err)
	}
	for rel, want := range map[string]string{"a.dat": "data\n", "b.p": "p\n"} {
		if got := read(t, s2.WorktreePath, rel); got != want {
			t.Errorf("new worktree %s = %q, want %q", rel, got, want)
		}
	}
	cp := f.turn(s2, 1)
	recs := f.tool(s2, "e1", "Bash", "", func(wt string) { sh(t, wt, "echo more >> a.dat && echo q > b.p") })
	ran("recording an edit of the filtered files")
	if got := summary(recs); got != "e1:0 modify a.dat pending/synced\ne1:1 modify b.p pending/synced" {
		t.Errorf("records:\n%s", got)
	}
	if r := recs[0]; derefS(r.OldContent) != "data\n" || derefS(r.NewContent) != "data\nmore\n" {
		t.Errorf("a.dat record: %q -> %q", derefS(r.OldContent), derefS(r.NewContent))
	}
	if _, err := f.eng.Rewind(f.ctx, s2.ID, cp.ID, false); err != nil {
		t.Fatalf("rewind: %v", err)
	}
	ran("the rewind")
	f.bothHold(s2, "a.dat", "data\n", "after the rewind")
	f.bothHold(s2, "b.p", "p\n", "after the rewind")
}
