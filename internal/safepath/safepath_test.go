package safepath

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// newRoot makes <tmp>/repo with a sibling <tmp>/repo-evil, so prefix bugs show.
func newRoot(t *testing.T) (parent, root string) {
	t.Helper()
	parent = t.TempDir()
	root = filepath.Join(parent, "repo")
	for _, d := range []string{root, filepath.Join(parent, "repo-evil"), filepath.Join(root, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return parent, root
}

func TestRel(t *testing.T) {
	parent, root := newRoot(t)
	tests := []struct {
		name string
		p    string
		want string
		err  error
	}{
		{"plain", "a.txt", "a.txt", nil},
		{"nested", "sub/b.go", "sub/b.go", nil},
		{"dot slash", "./sub/./b.go", "sub/b.go", nil},
		{"trailing slash", "sub/", "sub", nil},
		{"inner dotdot", "sub/../c", "c", nil},
		{"newline is a valid name", "a\nb", "a\nb", nil},
		{"spaces", "my dir/my file.txt", "my dir/my file.txt", nil},
		{"non-ascii", "données/日本.txt", "données/日本.txt", nil},
		{"backslash is a name byte", `a\b`, `a\b`, nil},
		{"dotdot-prefixed name", "..foo", "..foo", nil},
		{"git-prefixed name", ".gitignore", ".gitignore", nil},
		{"absolute inside", filepath.Join(root, "sub", "x"), "sub/x", nil},
		{"absolute unclean inside", root + "/sub/../x", "x", nil},

		{"empty", "", "", ErrBadPath},
		{"nul", "a\x00b", "", ErrBadPath},
		{"dot", ".", "", ErrBadPath},
		{"climb to root", "sub/..", "", ErrBadPath},
		{"absolute root", root, "", ErrBadPath},
		{"absolute root slash", root + "/", "", ErrBadPath},
		{".git", ".git", "", ErrBadPath},
		{".git inside", ".git/config", "", ErrBadPath},
		{"nested .git", "sub/.git/HEAD", "", ErrBadPath},
		{".GIT case", ".GIT/config", "", ErrBadPath},
		{"absolute .git", filepath.Join(root, ".git", "config"), "", ErrBadPath},

		{"dotdot", "..", "", ErrOutside},
		{"dotdot x", "../x", "", ErrOutside},
		{"escape after cleaning", "a/../../x", "", ErrOutside},
		{"sibling by dotdot", "../repo-evil/x", "", ErrOutside},
		{"absolute outside", "/etc/passwd", "", ErrOutside},
		{"absolute sibling", filepath.Join(parent, "repo-evil", "x"), "", ErrOutside},
		{"absolute sibling itself", filepath.Join(parent, "repo-evil"), "", ErrOutside},
		{"absolute parent", parent, "", ErrOutside},
		{"absolute climbing out", root + "/../repo-evil/x", "", ErrOutside},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Rel(root, tt.p)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Rel(%q) = %q, %v; want error %v", tt.p, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Rel(%q) = %q, %v; want %q", tt.p, got, err, tt.want)
			}
		})
	}
}

// TestRelSymlinkedRoot covers a root reached through a symlink (as /tmp is on
// macOS): given the link, absolute paths under either spelling are inside.
// Given the resolved root, the link spelling is not recognized: Rel does not
// resolve p, so callers should pass root as they got it.
func TestRelSymlinkedRoot(t *testing.T) {
	parent, real := newRoot(t)
	link := filepath.Join(parent, "link")
	mustSymlink(t, real, link)
	for _, p := range []string{filepath.Join(link, "sub", "f"), filepath.Join(real, "sub", "f"), "sub/f"} {
		if got, err := Rel(link, p); err != nil || got != "sub/f" {
			t.Errorf("Rel(link, %q) = %q, %v; want sub/f", p, got, err)
		}
	}
	for _, p := range []string{link, real} {
		if _, err := Rel(link, p); !errors.Is(err, ErrBadPath) {
			t.Errorf("Rel(link, %q) = %v; want ErrBadPath (the root)", p, err)
		}
	}
	if _, err := Rel(link, filepath.Join(parent, "repo-evil", "f")); !errors.Is(err, ErrOutside) {
		t.Errorf("Rel(link, sibling) = %v; want ErrOutside", err)
	}
	if _, err := Rel(link, filepath.Join(parent, "link-evil", "f")); !errors.Is(err, ErrOutside) {
		t.Errorf("Rel(link, link sibling) = %v; want ErrOutside", err)
	}
	if _, err := Rel(real, filepath.Join(link, "sub", "f")); !errors.Is(err, ErrOutside) {
		t.Errorf("Rel(real, link spelling) = %v; want ErrOutside", err)
	}
}

func TestRelMissingRoot(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	if _, err := Rel(missing, filepath.Join(missing, "a")); err == nil {
		t.Fatal("Rel with a missing root and an absolute path: want an error")
	}
	// The failure is not remembered: once the root exists (a session's
	// worktree is created after its path is known), it is resolved.
	real := filepath.Join(filepath.Dir(missing), "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, real, missing)
	if got, err := Rel(missing, filepath.Join(real, "a")); err != nil || got != "a" {
		t.Fatalf("Rel once the root exists = %q, %v; want a", got, err)
	}
}

// TestRelRemembersResolvedRoot: the resolution of a root is reused, and
// paths outside are refused the same from the cache.
func TestRelRemembersResolvedRoot(t *testing.T) {
	parent, real := newRoot(t)
	link := filepath.Join(parent, "link")
	mustSymlink(t, real, link)
	for i := 0; i < 2; i++ {
		if got, err := Rel(link, filepath.Join(real, "f")); err != nil || got != "f" {
			t.Fatalf("try %d: Rel(link, real spelling) = %q, %v; want f", i, got, err)
		}
		if _, err := Rel(link, filepath.Join(parent, "f")); !errors.Is(err, ErrOutside) {
			t.Fatalf("try %d: Rel(link, parent/f) = %v; want ErrOutside", i, err)
		}
	}
	if forms, ok := resolved.Load(link); !ok || len(forms.([]string)) != 2 {
		t.Fatalf("resolved[%s] = %v, %v; want both forms remembered", link, forms, ok)
	}
}

func TestJoin(t *testing.T) {
	parent, root := newRoot(t)
	outside := filepath.Join(parent, "repo-evil")
	mustSymlink(t, outside, filepath.Join(root, "out"))      // dir link pointing out
	mustSymlink(t, "sub", filepath.Join(root, "in"))         // dir link pointing in
	mustSymlink(t, "/etc/passwd", filepath.Join(root, "pw")) // file link pointing out
	if err := os.WriteFile(filepath.Join(root, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		rel  string
		want string // relative to root
		err  error
	}{
		{"plain", "a.txt", "a.txt", nil},
		{"existing dir", "sub/a.txt", "sub/a.txt", nil},
		{"new dirs", "new/deeper/a.txt", "new/deeper/a.txt", nil},
		{"final link out is the link itself", "pw", "pw", nil},
		{"final dir link is the link itself", "out", "out", nil},
		{"below a file", "file/x", "file/x", nil},
		{"odd bytes", "sub/a\nb c é", "sub/a\nb c é", nil},
		{"absolute inside", filepath.Join(root, "sub", "z"), "sub/z", nil},

		{"through link out", "out/x", "", ErrOutside},
		{"deep through link out", "out/a/b", "", ErrOutside},
		{"through link in", "in/x", "", ErrOutside},
		{"dotdot", "../repo-evil/x", "", ErrOutside},
		{"absolute sibling", filepath.Join(outside, "x"), "", ErrOutside},
		{"nul", "a\x00", "", ErrBadPath},
		{"git", ".git/config", "", ErrBadPath},
		{"root", ".", "", ErrBadPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Join(root, tt.rel)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Join(%q) = %q, %v; want error %v", tt.rel, got, err, tt.err)
				}
				return
			}
			want := filepath.Join(root, filepath.FromSlash(tt.want))
			if err != nil || got != want {
				t.Fatalf("Join(%q) = %q, %v; want %q", tt.rel, got, err, want)
			}
		})
	}
}

// TestJoinSymlinkedRoot checks that a root that is itself a symlink is fine:
// only links below the root count.
func TestJoinSymlinkedRoot(t *testing.T) {
	parent, real := newRoot(t)
	link := filepath.Join(parent, "link")
	mustSymlink(t, real, link)
	got, err := Join(link, "sub/f")
	if want := filepath.Join(link, "sub", "f"); err != nil || got != want {
		t.Fatalf("Join = %q, %v; want %q", got, err, want)
	}
	got, err = Join(link, filepath.Join(real, "sub", "f"))
	if want := filepath.Join(link, "sub", "f"); err != nil || got != want {
		t.Fatalf("Join(real spelling) = %q, %v; want %q", got, err, want)
	}
}

func mustSymlink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// Resolve follows every link on a path, a dangling one and a relative one
// included, and joins on what does not exist; ResolvesInside says whether
// the result stays under the root (itself reached through a link here).
func TestResolve(t *testing.T) {
	parent, root := newRoot(t)
	evil := filepath.Join(parent, "repo-evil")
	mustSymlink(t, evil, filepath.Join(root, "out"))
	mustSymlink(t, filepath.Join(evil, "none-yet"), filepath.Join(root, "dangling"))
	mustSymlink(t, "../repo-evil/x", filepath.Join(root, "climb"))
	mustSymlink(t, "sub", filepath.Join(root, "in"))
	mustSymlink(t, "loop2", filepath.Join(root, "loop1"))
	mustSymlink(t, "loop1", filepath.Join(root, "loop2"))
	rootLink := filepath.Join(parent, "rootlink")
	mustSymlink(t, root, rootLink)
	for _, tc := range []struct {
		p, want string
		inside  bool
	}{
		{filepath.Join(root, "out", "k"), filepath.Join(evil, "k"), false},
		{filepath.Join(root, "dangling"), filepath.Join(evil, "none-yet"), false},
		{filepath.Join(root, "climb"), filepath.Join(evil, "x"), false},
		{filepath.Join(root, "in", "new", "f"), filepath.Join(root, "sub", "new", "f"), true},
		{filepath.Join(root, "sub", "..", "..", "repo-evil", "f"), filepath.Join(evil, "f"), false},
		{filepath.Join(rootLink, "in", "f"), filepath.Join(root, "sub", "f"), true},
		{filepath.Join(root, "plain.txt"), filepath.Join(root, "plain.txt"), true},
	} {
		got, err := Resolve(tc.p)
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%s) = %q, %v; want %q", tc.p, got, err, tc.want)
		}
		if inside, where := ResolvesInside(rootLink, tc.p); inside != tc.inside || where != tc.want {
			t.Errorf("ResolvesInside(%s) = %v %q, want %v %q", tc.p, inside, where, tc.inside, tc.want)
		}
	}
	if _, err := Resolve(filepath.Join(root, "loop1", "f")); !errors.Is(err, ErrOutside) {
		t.Errorf("a link loop: %v, want ErrOutside", err)
	}
	if inside, _ := ResolvesInside(root, filepath.Join(root, "loop1")); inside {
		t.Error("a link loop resolves inside")
	}
	if _, err := Resolve("rel/path"); !errors.Is(err, ErrBadPath) {
		t.Errorf("a relative path: %v, want ErrBadPath", err)
	}
}

// TestDirsRemembersUntilReset: a Dirs looks at a parent once per look.
// Swapped for a symlink during the look, the parent still passes (the
// reads below refuse it, TestReadVersionRefusesSymlinkedParent in sync);
// after Reset, the next look finds the symlink. Plain Join never
// remembers, and Lexical never looks.
func TestDirsRemembersUntilReset(t *testing.T) {
	root := t.TempDir()
	out := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	var d Dirs
	if _, err := d.Join(root, "a/b/f.txt"); err != nil {
		t.Fatalf("first look: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Join(root, "a/b/g.txt"); err != nil {
		t.Errorf("the same look, a parent already seen: %v", err)
	}
	if _, err := Join(root, "a/b/g.txt"); !errors.Is(err, ErrOutside) {
		t.Errorf("Join through the new symlink: %v, want ErrOutside", err)
	}
	d.Reset()
	if _, err := d.Join(root, "a/b/g.txt"); !errors.Is(err, ErrOutside) {
		t.Errorf("after Reset: %v, want ErrOutside", err)
	}
	p, err := Lexical(root, "a/b/g.txt")
	if err != nil || p != filepath.Join(root, "a", "b", "g.txt") {
		t.Errorf("Lexical: %q, %v", p, err)
	}
	if _, err := Lexical(root, "../x"); !errors.Is(err, ErrOutside) {
		t.Errorf("Lexical of ../x: %v, want ErrOutside", err)
	}
}
