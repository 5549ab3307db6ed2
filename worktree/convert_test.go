package worktree_test

import (
	"context"
	"testing"

	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/worktree"
)

// CheckoutContent gives a blob as git's checkout writes it: converted
// where .gitattributes in the file's directory or above it (or
// core.autocrlf) asks for it, and untouched elsewhere.
func TestCheckoutContent(t *testing.T) {
	testgit.Env(t)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	ctx := context.Background()
	dir := testgit.Init(t, "r")
	files := map[string]string{
		"sub/.gitattributes": "*.txt text eol=crlf\n",
		// Attributes that convert nothing on checkout here: no git process.
		".gitattributes":       "# eol=crlf in a comment\n* text=auto\n*.png binary\n*.go linguist-generated -crlf !eol\n",
		"plain/.gitattributes": "*.txt diff=plain merge=union\n",
	}
	for _, p := range []string{"top.txt", "sub/a.txt", "sub/deep/b.txt", "other/c.txt", "plain/d.txt"} {
		files[p] = "one\ntwo\n"
	}
	testgit.Commit(t, dir, "one", files)
	commit := testgit.Git(t, dir, "rev-parse", "HEAD")
	repo, err := worktree.Discover(ctx, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	stored := []byte("one\ntwo\n")
	for p, want := range map[string]string{
		"top.txt": "one\ntwo\n", "other/c.txt": "one\ntwo\n",
		"sub/a.txt": "one\r\ntwo\r\n", "sub/deep/b.txt": "one\r\ntwo\r\n",
		"plain/d.txt": "one\ntwo\n",
	} {
		got, err := repo.CheckoutContent(ctx, dir, commit, p, stored)
		if err != nil || string(got) != want {
			t.Errorf("%s: %q %v, want %q", p, got, err, want)
		}
	}
	// No converting attributes on the path: the content given comes back
	// as it is, whatever it holds (nothing was asked of git).
	odd := []byte("not the blob\n")
	for _, p := range []string{"top.txt", "plain/d.txt", "other/c.txt"} {
		if got, err := repo.CheckoutContent(ctx, dir, commit, p, odd); err != nil || string(got) != string(odd) {
			t.Errorf("%s with no converting attributes: %q %v", p, got, err)
		}
	}

	// core.autocrlf=true converts every text file; a new Repo reads it.
	testgit.Git(t, dir, "config", "core.autocrlf", "true")
	repo2, err := worktree.Discover(ctx, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := repo2.CheckoutContent(ctx, dir, commit, "top.txt", stored); err != nil || string(got) != "one\r\ntwo\r\n" {
		t.Errorf("top.txt with core.autocrlf: %q %v", got, err)
	}
	// A path the commit does not have is an error, not a guess.
	if _, err := repo2.CheckoutContent(ctx, dir, commit, "nope.txt", stored); err == nil {
		t.Errorf("missing path: no error")
	}
}
