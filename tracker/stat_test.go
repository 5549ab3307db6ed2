package tracker

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/worktree"
)

// loggingGit is a git binary that notes each call's arguments in a log
// file, then runs the real git.
func loggingGit(t *testing.T) (bin, log string) {
	t.Helper()
	dir := t.TempDir()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	log = filepath.Join(dir, "calls.log")
	bin = filepath.Join(dir, "git")
	script := "#!/bin/sh\necho \"$*\" >> '" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, log
}

// newTrackedSession is a repository with a committed file and a
// .gitignore, and a tracker Session whose worktree is the repository
// itself (the tracker only needs a checkout of Base), with the git calls
// it makes logged.
func newTrackedSession(t *testing.T) (*Session, string) {
	t.Helper()
	testgit.Env(t)
	ws := testgit.Init(t, "ws")
	testgit.Write(t, ws, "src/a.txt", "one\ntwo\n", 0o644)
	testgit.Write(t, ws, ".gitignore", "*.log\n", 0o644)
	testgit.Git(t, ws, "add", "-A")
	testgit.Git(t, ws, "commit", "-qm", "base")
	base := testgit.Git(t, ws, "rev-parse", "HEAD")
	bin, log := loggingGit(t)
	repo, err := worktree.Discover(context.Background(), &worktree.Runner{Git: bin}, ws)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(log) // discovery's own calls
	return &Session{ID: "s", Worktree: ws, Base: base, Repo: repo, Known: map[string]store.FileState{},
		Stats: NewStatCache(nil)}, log
}

func gitCalls(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// A tracked file (in the base commit) needs no ignore check: git never
// ignores tracked files. A new file is asked of git once, then cached.
func TestFilterAsksGitOnlyForNewPaths(t *testing.T) {
	s, log := newTrackedSession(t)
	ctx := context.Background()

	got, err := s.Filter(ctx, []string{"src/a.txt"})
	if err != nil || strings.Join(got, ",") != "src/a.txt" {
		t.Fatalf("Filter(tracked) = %v, %v", got, err)
	}
	if calls := gitCalls(t, log); len(calls) != 0 {
		t.Fatalf("a tracked path cost git calls: %q", calls)
	}

	got, err = s.Filter(ctx, []string{"new.txt", "debug.log", "src/a.txt"})
	if err != nil || strings.Join(got, ",") != "new.txt,src/a.txt" {
		t.Fatalf("Filter = %v, %v; want new.txt and src/a.txt (debug.log is ignored)", got, err)
	}
	if calls := gitCalls(t, log); len(calls) != 1 || !strings.Contains(calls[0], "check-ignore") {
		t.Fatalf("want one check-ignore for the two new paths, got %q", calls)
	}
	if _, err := s.Filter(ctx, []string{"new.txt", "debug.log"}); err != nil {
		t.Fatal(err)
	}
	if calls := gitCalls(t, log); len(calls) != 1 {
		t.Fatalf("decided paths were asked again: %q", calls)
	}
}

// A changed .gitignore makes every decision anew: a file that was kept
// becomes ignored in the same look that sees the rule.
func TestFilterGitignoreChangeClearsDecisions(t *testing.T) {
	s, _ := newTrackedSession(t)
	ctx := context.Background()
	if got, _ := s.Filter(ctx, []string{"out/build.txt"}); strings.Join(got, ",") != "out/build.txt" {
		t.Fatalf("Filter = %v before the rule", got)
	}
	testgit.Write(t, s.Worktree, ".gitignore", "*.log\nout/\n", 0o644)
	got, err := s.Filter(ctx, []string{".gitignore", "out/build.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != ".gitignore" {
		t.Fatalf("Filter after the new rule = %v, want only .gitignore", got)
	}
}

// The stat cache is trusted only for files that were quiet when prsm read
// them: a same-size rewrite right after a read is still seen.
func TestStatCacheRacyRewriteIsSeen(t *testing.T) {
	s, _ := newTrackedSession(t)
	rel := "src/a.txt"
	// A change inside the racy window, whatever the scheduler does: the
	// file's time is not before the look minus the window.
	soon := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(s.Worktree, rel), soon, soon); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Current(rel); err != nil {
		t.Fatal(err)
	}
	// Changed within the window when read: kept, but not trusted.
	if s.Stats.Len() != 1 {
		t.Fatalf("the read file is not cached")
	}
	if _, _, ok := s.Stats.Lookup(s.Worktree, rel); ok {
		t.Fatalf("an entry taken within the racy window is trusted")
	}
	// Same size, written within the filesystem's timestamp tick, maybe.
	testgit.Write(t, s.Worktree, rel, "ONE\nTWO\n", 0o644)
	changes, _, err := s.Detect([]string{rel}, noBlobs, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || string(changes[0].After.Content) != "ONE\nTWO\n" {
		t.Fatalf("a same-size rewrite right after a read was missed: %+v", changes)
	}
}

// A file whose facts match a trusted entry is not read: the cache's hash is
// believed. Proven by planting an entry whose hash is the known one while
// the file holds something else.
func TestStatCacheTrustedEntrySkipsRead(t *testing.T) {
	s, _ := newTrackedSession(t)
	rel := "src/a.txt"
	testgit.Write(t, s.Worktree, rel, "changed\n", 0o644)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(s.Worktree, rel), old, old); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * racyWindow) // ctime, which Chtimes set to now, ages too
	if _, err := s.Current(rel); err != nil {
		t.Fatal(err)
	}
	if s.Stats.Len() != 1 {
		t.Fatalf("the read file is not cached")
	}
	if _, _, ok := s.Stats.Lookup(s.Worktree, rel); !ok {
		t.Fatalf("a quiet file's entry is not trusted")
	}
	// Plant: the tracker knows content "K", and the entry claims the file
	// holds exactly that.
	known := Hash([]byte("K"))
	s.Known[rel] = store.FileState{Present: true, Mode: 0o100644, Hash: known, Size: 1}
	e := s.Stats.entries[rel]
	e.Hash = known
	s.Stats.entries[rel] = e
	changes, _, err := s.Detect([]string{rel}, noBlobs, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 0 {
		t.Fatalf("the file was read despite a trusted entry: %+v", changes)
	}
	// Touching the file (new mtime) makes the entry stale: read again.
	testgit.Write(t, s.Worktree, rel, "changed\n", 0o644)
	s.Known[rel] = store.FileState{Present: true, Mode: 0o100644, Hash: known, Size: 1}
	changes, _, err = s.Detect([]string{rel}, func(string) ([]byte, error) { return []byte("K"), nil }, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || string(changes[0].After.Content) != "changed\n" {
		t.Fatalf("a stale entry was trusted: %+v", changes)
	}
}

// Entries to persist are handed out once; a deleted file's entry is
// handed out as a deletion.
func TestStatCacheTakeChanged(t *testing.T) {
	s, _ := newTrackedSession(t)
	if _, err := s.Current("src/a.txt"); err != nil {
		t.Fatal(err)
	}
	ch := s.Stats.TakeChanged()
	if e := ch["src/a.txt"]; e == nil || e.Hash != Hash([]byte("one\ntwo\n")) || e.Size != 8 {
		t.Fatalf("TakeChanged = %+v", ch)
	}
	if again := s.Stats.TakeChanged(); len(again) != 0 {
		t.Fatalf("handed out twice: %+v", again)
	}
	os.Remove(filepath.Join(s.Worktree, "src/a.txt"))
	if _, err := s.Current("src/a.txt"); err != nil {
		t.Fatal(err)
	}
	if ch := s.Stats.TakeChanged(); len(ch) != 1 || ch["src/a.txt"] != nil {
		t.Fatalf("a deleted file's entry is not handed out as a deletion: %+v", ch)
	}
}

func noBlobs(hash string) ([]byte, error) { return nil, os.ErrNotExist }

// TestKnownVersionReadOnce: the known version of a file in the store is
// read once for a capture and its complete, and not at all when it was
// learned (a record's content is at hand); a state that moves on without
// Learn (loaded from the store) is read anew.
func TestKnownVersionReadOnce(t *testing.T) {
	s, _ := newTrackedSession(t)
	contents := map[string][]byte{}
	var reads []string
	blobs := func(hash string) ([]byte, error) {
		reads = append(reads, hash[:8])
		return contents[hash], nil
	}
	want := func(rel, content string, nreads int) {
		t.Helper()
		v, err := s.KnownVersion(rel, blobs)
		if err != nil || !v.Present || string(v.Content) != content {
			t.Fatalf("KnownVersion(%s) = %q, %v; want %q", rel, v.Content, err, content)
		}
		if len(reads) != nreads {
			t.Fatalf("blob reads %v, want %d", reads, nreads)
		}
	}
	want("src/a.txt", "one\ntwo\n", 0) // from the base commit
	want("src/a.txt", "one\ntwo\n", 0)
	for _, c := range []string{"v1\n", "v2\n"} {
		v := sync.Version{Present: true, Mode: 0o100644, Content: []byte(c)}
		contents[Hash(v.Content)] = v.Content
		s.Learn("src/a.txt", v)
		want("src/a.txt", c, 0)
		want("src/a.txt", c, 0)
	}
	v3 := sync.Version{Present: true, Mode: 0o100644, Content: []byte("v3\n")}
	contents[Hash(v3.Content)] = v3.Content
	s.Known["src/a.txt"] = StateOf(v3) // as a start loads it
	want("src/a.txt", "v3\n", 1)
	want("src/a.txt", "v3\n", 1)
	big := sync.Version{Present: true, Mode: 0o100644, Content: bytes.Repeat([]byte("x"), maxLearnedContent+1)}
	contents[Hash(big.Content)] = big.Content
	s.Learn("src/a.txt", big)
	want("src/a.txt", string(big.Content), 2) // too large to keep
	s.Learn("src/a.txt", sync.Absent)
	if v, err := s.KnownVersion("src/a.txt", blobs); err != nil || v.Present {
		t.Fatalf("KnownVersion after a delete = %+v, %v; want absent", v, err)
	}
}
