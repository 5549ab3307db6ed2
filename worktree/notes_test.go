package worktree_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/worktree"
)

// TestAddNoteAsGitNotes: AddNote's notes are what git notes shows, on top
// of the notes someone else added (kept, the ref extended), with no ref
// at first too; a commit with a note already, a fanned-out notes tree
// and a ref git holds locked are left to git notes, with nothing written.
func TestAddNoteAsGitNotes(t *testing.T) {
	testgit.Env(t)
	dir := testgit.Init(t, "ws")
	testgit.Commit(t, dir, "one", map[string]string{"a.txt": "a\n"})
	c1 := testgit.Git(t, dir, "rev-parse", "HEAD")
	testgit.Commit(t, dir, "two", map[string]string{"a.txt": "b\n"})
	c2 := testgit.Git(t, dir, "rev-parse", "HEAD")
	objs := openObjects(t, dir)
	const ref = "refs/notes/agent-trace"
	when := time.Unix(1700000000, 0)

	// No ref yet.
	if err := objs.AddNote(ref, c1, []byte("first\n"), when); err != nil {
		t.Fatal(err)
	}
	if got := testgit.Git(t, dir, "notes", "--ref=agent-trace", "show", c1); got != "first" {
		t.Fatalf("note of c1 = %q", got)
	}
	// On top of someone else's note.
	testgit.Git(t, dir, "notes", "--ref=other", "add", "-m", "theirs", c2)
	testgit.Git(t, dir, "update-ref", ref, "refs/notes/other")
	tip := testgit.Git(t, dir, "rev-parse", ref)
	if err := objs.AddNote(ref, c1, []byte("{\"x\": 1}\n"), when); err != nil {
		t.Fatal(err)
	}
	if got := testgit.Git(t, dir, "notes", "--ref=agent-trace", "show", c1); got != `{"x": 1}` {
		t.Errorf("note of c1 = %q", got)
	}
	if got := testgit.Git(t, dir, "notes", "--ref=agent-trace", "show", c2); got != "theirs" {
		t.Errorf("someone else's note of c2 = %q, want it kept", got)
	}
	if got := testgit.Git(t, dir, "rev-parse", ref+"^"); got != tip {
		t.Errorf("the notes commit's parent is %s, want the tip it was made on %s", got, tip)
	}
	testgit.Git(t, dir, "fsck", "--no-dangling")

	unchanged := func(why string) {
		t.Helper()
		before := testgit.Git(t, dir, "rev-parse", ref)
		err := objs.AddNote(ref, c2, []byte("mine\n"), when)
		if !errors.Is(err, worktree.ErrNoteNotPlain) {
			t.Errorf("%s: AddNote = %v, want ErrNoteNotPlain", why, err)
		}
		if after := testgit.Git(t, dir, "rev-parse", ref); after != before {
			t.Errorf("%s: the ref moved from %s to %s", why, before, after)
		}
	}
	unchanged("c2 has a note")
	testgit.Git(t, dir, "notes", "--ref=agent-trace", "remove", c2)
	lock := filepath.Join(dir, ".git", filepath.FromSlash(ref)+".lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	unchanged("the ref is locked")
	if _, err := os.Stat(lock); err != nil {
		t.Errorf("git's lock was taken away: %v", err)
	}
	os.Remove(lock)
	// A fanned-out tree: c1's note under a directory of its first two
	// hex digits, as git lays out many notes.
	blob := testgit.Git(t, dir, "rev-parse", ref+":"+c1)
	sub := gitInStdin(t, dir, "", "100644 blob "+blob+"\t"+c1[2:]+"\n", "mktree")
	root := gitInStdin(t, dir, "", "040000 tree "+sub+"\t"+c1[:2]+"\n", "mktree")
	fanned := testgit.Git(t, dir, "commit-tree", "-m", "fanned", root)
	testgit.Git(t, dir, "update-ref", ref, fanned)
	if got := testgit.Git(t, dir, "notes", "--ref=agent-trace", "show", c1); !strings.Contains(got, `"x"`) {
		t.Fatalf("the fanned-out tree's note of c1 = %q", got)
	}
	unchanged("a fanned-out tree")
}
