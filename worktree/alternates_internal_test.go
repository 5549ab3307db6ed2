package worktree

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// alternates follows objects/info/alternates as git does: absolute and
// relative (to the object directory) paths, C-quoted ones, comments,
// alternates of alternates, each directory once, no cycles; what is not
// a directory, or not named objects, is left out.
func TestAlternates(t *testing.T) {
	root := t.TempDir()
	dir := func(p string) string {
		d := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Join(d, "info"), 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	alt := func(objDir, content string) {
		if err := os.WriteFile(filepath.Join(objDir, "info", "alternates"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	home, a, b, c, quoted := dir("home/.git/objects"), dir("a/.git/objects"), dir("b/objects"), dir("c/objects"), dir("q r/objects")
	notObjects := dir("store")
	alt(home, "# shared\n"+a+"\n../../../b/objects\n\n"+a+"\n"+notObjects+"\n"+filepath.Join(root, "missing/objects")+"\n\""+filepath.Join(root, "q r", "objects")+"\"\n")
	alt(a, c+"\n"+home+"\n")
	alt(c, a+"\n")
	want := []string{a, b, quoted, c}
	if got := alternates(home); !reflect.DeepEqual(got, want) {
		t.Fatalf("alternates =\n%q\nwant\n%q", got, want)
	}
	if got := alternates(notObjects); got != nil {
		t.Fatalf("no alternates file: %q", got)
	}
}
