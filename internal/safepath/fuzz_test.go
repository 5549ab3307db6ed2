package safepath

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzTree is a workspace root full of traps, built once per fuzz process:
// symlinks out (absolute and relative, to a directory and to a file), links
// in, a link loop, a .git directory, and a sibling whose name extends the
// root's ("repo-evil"). The root is also reachable through a symlink.
type fuzzTree struct {
	parent, root, rootLink, outside string
	realRoot                        string
}

func newFuzzTree(tb testing.TB) *fuzzTree {
	tb.Helper()
	parent := tb.TempDir()
	root := filepath.Join(parent, "repo")
	outside := filepath.Join(parent, "repo-evil")
	for _, d := range []string{outside, "sub/deeper", ".git/objects", "d"} {
		if !filepath.IsAbs(d) {
			d = filepath.Join(root, d)
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	for _, f := range []string{"a.txt", "sub/b.txt", ".git/HEAD"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644); err != nil {
		tb.Fatal(err)
	}
	links := map[string]string{
		"out":            outside,                          // absolute, a dir outside
		"outfile":        filepath.Join(outside, "secret"), // absolute, a file outside
		"sub/up":         "../../repo-evil",                // relative, climbs out
		"sub/deeper/up2": "../../..",                       // relative, to the parent
		"in":             "sub",                            // inside
		"absin":          filepath.Join(root, "sub"),       // inside, absolute
		"loop":           "loop",                           // a loop
		"d/dangling":     "nowhere/at/all",                 // dangling
		"gitlink":        ".git",                           // into .git
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			tb.Fatal(err)
		}
	}
	rootLink := filepath.Join(parent, "rootlink")
	if err := os.Symlink(root, rootLink); err != nil {
		tb.Fatal(err)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		tb.Fatal(err)
	}
	return &fuzzTree{parent: parent, root: root, rootLink: rootLink, outside: outside, realRoot: realRoot}
}

// expand lets the fuzzer spell absolute paths it cannot guess: @ROOT@,
// @LINK@ (the root through a symlink) and @OUT@ (the sibling outside).
func (ft *fuzzTree) expand(p string) string {
	return strings.NewReplacer("@ROOT@", ft.root, "@LINK@", ft.rootLink, "@OUT@", ft.outside).Replace(p)
}

// within reports whether p is root or below it, by filepath.Rel.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && filepath.IsLocal(rel)
}

// FuzzJoin hands Rel and Join any string against a root full of symlinks.
// The result is an error (ErrOutside or ErrBadPath) or a path that:
//   - is absolute, clean, strictly below the root (as given), holds no NUL
//     byte and no .git segment in any case, and agrees with Rel;
//   - has every existing directory on the way, resolved with EvalSymlinks,
//     inside the real root: nothing above the last element leads out. The
//     last element itself may be a symlink pointing anywhere (prsm reads and
//     writes links as links, never through them), so the whole path is not
//     resolved; when that element is a symlink it is one for Lstat, which is
//     how every caller looks at it.
func FuzzJoin(f *testing.F) {
	for _, p := range []string{
		"a.txt", "sub/b.txt", "new/dir/file", "../x", "..", ".", "", "a\x00b",
		"out/secret", "outfile", "sub/up/secret", "sub/deeper/up2/repo-evil/secret",
		"in/b.txt", "absin/b.txt", "loop/x", "d/dangling/x", "gitlink/HEAD", ".Git/HEAD",
		"@ROOT@/sub/b.txt", "@ROOT@/../repo-evil/secret", "@ROOT@-evil/secret", "@OUT@/secret",
		"@LINK@/a.txt", "@LINK@/out/secret", "@ROOT@", "@ROOT@/", "/etc/passwd",
		"sub/../../repo/a.txt", "a.txt/x", "//@ROOT@//sub//x", "sub/./.././a\nb",
	} {
		f.Add(p, false)
		f.Add(p, true)
	}
	ft := newFuzzTree(f)
	f.Fuzz(func(t *testing.T, p string, viaLink bool) {
		p = ft.expand(p)
		root := ft.root
		if viaLink {
			root = ft.rootLink
		}

		rel, relErr := Rel(root, p)
		got, err := Join(root, p)
		if err != nil {
			if !errors.Is(err, ErrOutside) && !errors.Is(err, ErrBadPath) {
				t.Fatalf("Join(%q) error %v is neither ErrOutside nor ErrBadPath", p, err)
			}
			// Join refuses more than Rel: paths beyond a symlink, and names
			// the file system cannot hold.
			if relErr == nil && !errors.Is(err, ErrOutside) && !longSegment(p) {
				t.Fatalf("Rel accepted %q but Join refused it with %v", p, err)
			}
			return
		}
		if relErr != nil {
			t.Fatalf("Join(%q) = %q but Rel refused it: %v", p, got, relErr)
		}
		if want := filepath.Join(root, filepath.FromSlash(rel)); got != want {
			t.Fatalf("Join(%q) = %q, Rel gives %q", p, got, want)
		}
		if !filepath.IsAbs(got) || filepath.Clean(got) != got || strings.IndexByte(got, 0) >= 0 {
			t.Fatalf("Join(%q) = %q: not absolute and clean", p, got)
		}
		if !within(root, got) || got == filepath.Clean(root) {
			t.Fatalf("Join(%q) = %q: not strictly below %s", p, got, root)
		}
		for _, seg := range strings.Split(rel, "/") {
			if strings.EqualFold(seg, ".git") || seg == ".." || seg == "." || seg == "" {
				t.Fatalf("Join(%q) = %q: bad segment %q", p, got, seg)
			}
		}

		// Every existing directory above the last element resolves inside.
		dir := filepath.Dir(got)
		for {
			if _, err := os.Lstat(dir); err == nil {
				break
			}
			dir = filepath.Dir(dir)
		}
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			// A file where a directory would be (a.txt/x): nothing can be
			// made below it, so nothing leads out.
			if fi, serr := os.Stat(dir); serr == nil && !fi.IsDir() {
				return
			}
			t.Fatalf("resolve %s (parent of %q): %v", dir, got, err)
		}
		if !within(ft.realRoot, real) {
			t.Fatalf("Join(%q) = %q, whose parent %s resolves to %s, outside %s", p, got, dir, real, ft.realRoot)
		}
		// The last element, if it is a link, is seen as a link.
		if fi, err := os.Lstat(got); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if target, err := os.Readlink(got); err != nil || target == "" {
				t.Fatalf("link %s unreadable: %q %v", got, target, err)
			}
		}
	})
}

// longSegment reports whether p has a name longer than file systems hold.
func longSegment(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if len(seg) > 255 {
			return true
		}
	}
	return false
}
