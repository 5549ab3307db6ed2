package worktree

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/prsm-dev/prsm/internal/testgit"
)

// TestReadLoose: a loose object is read straight from its file, and only
// if its bytes are the object its name says; a packed object is not
// there, and go-git reads it.
func TestReadLoose(t *testing.T) {
	testgit.Env(t)
	dir := testgit.Init(t, "r")
	testgit.Write(t, dir, "packed.txt", "packed\n", 0o644)
	testgit.Git(t, dir, "add", "packed.txt")
	testgit.Git(t, dir, "commit", "-qm", "one")
	testgit.Git(t, dir, "gc", "-q", "--prune=now")
	testgit.Write(t, dir, "loose.txt", "loose\n", 0o644)
	testgit.Write(t, dir, "bad.txt", "bad\n", 0o644)
	testgit.Git(t, dir, "add", "loose.txt", "bad.txt")
	testgit.Git(t, dir, "commit", "-qm", "two")
	commit := testgit.Git(t, dir, "rev-parse", "HEAD")
	o := openIn(t, dir)
	id := func(p string) plumbing.Hash { return plumbing.NewHash(testgit.Git(t, dir, "rev-parse", "HEAD:"+p)) }

	ob, err := o.readLoose(id("loose.txt"))
	if err != nil || ob.Type != plumbing.BlobObject || string(ob.Body) != "loose\n" {
		t.Fatalf("readLoose(loose.txt) = %v %q, %v", ob.Type, ob.Body, err)
	}
	if _, err := o.readLoose(id("packed.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("readLoose of a packed object: %v, want not exist", err)
	}
	// Other bytes under bad.txt's name (valid zlib, a valid header).
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte("blob 4\x00BAD\n"))
	zw.Close()
	p := filepath.Join(dir, ".git", "objects", id("bad.txt").String()[:2], id("bad.txt").String()[2:])
	os.Chmod(p, 0o644)
	if err := os.WriteFile(p, z.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
	if ob, err := o.readLoose(id("bad.txt")); !errors.Is(err, ErrBadObject) {
		t.Fatalf("readLoose of damaged bytes = %q, %v; want ErrBadObject", ob.Body, err)
	}
	// Through the reader: both kinds, and a type that does not match.
	for p, want := range map[string]string{"loose.txt": "loose\n", "packed.txt": "packed\n"} {
		f, err := o.ReadFile(commit, p)
		if err != nil || string(f.Content) != want {
			t.Fatalf("ReadFile(%s) = %q, %v; want %q", p, f.Content, err, want)
		}
	}
	if _, err := o.reader().EncodedObject(plumbing.TreeObject, id("loose.txt")); !errors.Is(err, plumbing.ErrObjectNotFound) {
		t.Fatalf("a blob read as a tree: %v, want ErrObjectNotFound", err)
	}
}
