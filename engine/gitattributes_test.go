package engine_test

import (
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/testgit"
)

// userRepo is the workspace's HEAD and index bytes: what no session start
// may change.
func userRepo(t *testing.T, ws string) string {
	t.Helper()
	st := testgit.State(t, ws)
	return st[strings.Index(st, "\nhead="):]
}

// TestAgentGitattributesDoNotBlockSessions: an agent's .gitattributes
// asks for a conversion that fails on a file it wrote (UTF-16 for a
// .txt file that is not UTF-16), and auto mode syncs both into the
// workspace. `git add -A` refuses that file, and every later session
// start failed with it. Such a file now goes into the session's base as
// its bytes, the others as git converts them; the new session's worktree
// holds the file's bytes, the tracker takes them for the base (no
// record, an edit recorded against them, a rewind back to them), the
// user's HEAD and index stay as they were, and later sessions start too.
func TestAgentGitattributesDoNotBlockSessions(t *testing.T) {
	f := newFixture(t)
	log := f.logTo()
	s1 := f.start("")
	const plain = "plain ascii, not UTF-16\n"
	f.tool(s1, "b1", "Bash", "", func(wt string) {
		write(t, wt, ".gitattributes", "*.txt working-tree-encoding=UTF-16\n")
		write(t, wt, "notes.txt", plain)
	})
	if got := read(t, f.ws, "notes.txt"); got != plain {
		t.Fatalf("not synced: %q", got)
	}
	user := userRepo(t, f.ws)
	s2, err := f.eng.StartSession(f.ctx, api.StartRequest{})
	if err != nil {
		t.Fatalf("session start after the agent's .gitattributes: %v", err)
	}
	if got := read(t, s2.WorktreePath, "notes.txt"); got != plain {
		t.Fatalf("worktree notes.txt = %q, want the workspace's bytes %q", got, plain)
	}
	// The user's own .txt files, checked out before the attributes came,
	// are UTF-8 too: git cannot convert them either, and the worktree
	// holds them as the workspace does.
	ws, wt := f.trees(s2)
	f.same("workspace against the new worktree", ws, wt)
	if got := log.String(); !strings.Contains(got, "notes.txt") || !strings.Contains(got, "level=WARN") {
		t.Errorf("no warning about notes.txt:\n%s", got)
	}
	cp := f.turn(s2, 1)
	if recs := f.tool(s2, "n1", "Bash", "", func(string) {}); len(recs) != 0 {
		t.Fatalf("the base's bytes taken for a change: %s", summary(recs))
	}
	edited := plain + "more\n"
	recs := f.tool(s2, "e1", "Write", "notes.txt", func(wt string) { write(t, wt, "notes.txt", edited) })
	if got, want := summary(recs), "e1 modify notes.txt pending/synced"; got != want || recs[0].OldContent == nil || *recs[0].OldContent != plain {
		t.Fatalf("records:\n%s\nwant:\n%s (old content %q)", got, want, plain)
	}
	if got := read(t, f.ws, "notes.txt"); got != edited {
		t.Errorf("workspace notes.txt = %q", got)
	}
	if _, err := f.eng.Rewind(f.ctx, s2.ID, cp.ID, false); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{s2.WorktreePath, f.ws} {
		if got := read(t, root, "notes.txt"); got != plain {
			t.Errorf("%s notes.txt after the rewind = %q", root, got)
		}
	}
	s3, err := f.eng.StartSession(f.ctx, api.StartRequest{})
	if err != nil {
		t.Fatalf("a later session start: %v", err)
	}
	if got := read(t, s3.WorktreePath, "notes.txt"); got != plain {
		t.Errorf("third worktree notes.txt = %q", got)
	}
	if got := userRepo(t, f.ws); got != user {
		t.Errorf("the user's HEAD or index changed:\n%s\nwas:\n%s", got, user)
	}
}

// TestFailingRequiredCleanFilterDoesNotBlockSessions: a required filter
// whose clean command fails on a new file (its smudge works) leaves that
// file's bytes in the base, and the session starts.
func TestFailingRequiredCleanFilterDoesNotBlockSessions(t *testing.T) {
	f := newFixture(t)
	testgit.Git(t, f.ws, "config", "filter.x.clean", "false")
	testgit.Git(t, f.ws, "config", "filter.x.smudge", "cat")
	testgit.Git(t, f.ws, "config", "filter.x.required", "true")
	write(t, f.ws, ".gitattributes", "*.dat filter=x\n")
	write(t, f.ws, "d.dat", "raw\x00data\n")
	write(t, f.ws, "other.txt", "other\n")
	user := userRepo(t, f.ws)
	s, err := f.eng.StartSession(f.ctx, api.StartRequest{Mode: prsm.ModeAuto})
	if err != nil {
		t.Fatalf("session start: %v", err)
	}
	for rel, want := range map[string]string{"d.dat": "raw\x00data\n", "other.txt": "other\n", ".gitattributes": "*.dat filter=x\n"} {
		if got := read(t, s.WorktreePath, rel); got != want {
			t.Errorf("worktree %s = %q, want %q", rel, got, want)
		}
	}
	if recs := f.tool(s, "n1", "Bash", "", func(string) {}); len(recs) != 0 {
		t.Fatalf("the base's bytes taken for a change: %s", summary(recs))
	}
	// git status in the worktree must clean the changed file, and the
	// filter fails: the change is recorded all the same.
	recs := f.tool(s, "e1", "Write", "d.dat", func(wt string) { write(t, wt, "d.dat", "raw\x00data\nmore\n") })
	if got := summary(recs); got != "e1 modify d.dat pending/synced" || !recs[0].Binary {
		t.Fatalf("records:\n%s", got)
	}
	if got := read(t, f.ws, "d.dat"); got != "raw\x00data\nmore\n" {
		t.Errorf("workspace d.dat = %q", got)
	}
	if got := userRepo(t, f.ws); got != user {
		t.Errorf("the user's HEAD or index changed")
	}
	s2, err := f.eng.StartSession(f.ctx, api.StartRequest{})
	if err != nil {
		t.Fatalf("a later session start: %v", err)
	}
	if got := read(t, s2.WorktreePath, "d.dat"); got != "raw\x00data\nmore\n" {
		t.Errorf("second worktree d.dat = %q", got)
	}
}
