package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/engine"
)

// TestReadWorkspaceFile: the workspace's side of a record, as the review
// page shows it: a file's bytes up to the limit, a link's target (never
// what it points to), nothing for a missing file, and a refusal for a
// path out of the workspace or through a linked directory. It reads and
// changes nothing else.
func TestReadWorkspaceFile(t *testing.T) {
	eng, ws := newEngine(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "big.txt"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "empty.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		rel  string
		want engine.WorkspaceEntry
	}{
		{"a.txt", engine.WorkspaceEntry{Present: true, Regular: true, Read: true, Size: 2, Content: []byte("a\n")}},
		{"empty.txt", engine.WorkspaceEntry{Present: true, Regular: true, Read: true, Size: 0, Content: []byte{}}},
		{"big.txt", engine.WorkspaceEntry{Present: true, Regular: true, Size: 10}},
		{"link", engine.WorkspaceEntry{Present: true, Symlink: true, Read: true, Size: int64(len(filepath.Join(outside, "secret"))),
			Content: []byte(filepath.Join(outside, "secret"))}},
		{"dir", engine.WorkspaceEntry{Present: true, Size: -1}},
		{"none.txt", engine.WorkspaceEntry{}},
	} {
		got, err := eng.ReadWorkspaceFile(c.rel, 4)
		if err != nil {
			t.Fatalf("%s: %v", c.rel, err)
		}
		if c.rel == "dir" {
			got.Size = -1 // a directory's size is the file system's
		}
		if got.Present != c.want.Present || got.Symlink != c.want.Symlink || got.Regular != c.want.Regular ||
			got.Read != c.want.Read || got.Size != c.want.Size || string(got.Content) != string(c.want.Content) {
			t.Errorf("%s: got %+v (content %q), want %+v (content %q)", c.rel, *got, got.Content, c.want, c.want.Content)
		}
	}
	for _, rel := range []string{"../x", "linkdir/secret", filepath.Join(outside, "secret"), ".git/config", ""} {
		got, err := eng.ReadWorkspaceFile(rel, 1<<20)
		var pe *prsm.Error
		if !errors.As(err, &pe) || !errors.Is(err, prsm.ErrInvalid) || pe.Code != "bad_path" {
			t.Errorf("%q: got %+v, %v; want a bad_path refusal", rel, got, err)
		}
	}
}
