package sync

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/prsm-dev/prsm/internal/safepath"
)

// TestOpenDirsReadsAsReadVersion: through its open directories, OpenDirs
// reads every kind of path as ReadVersionMax does: a file, an executable,
// a symlink, nothing, a missing directory, a stub past max, a directory
// (ErrNotFile), a symlinked parent (ErrOutside, nothing read), and ".."
// (refused); and past maxOpenDirs directories it still reads right.
func TestOpenDirsReadsAsReadVersion(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write := func(rel, content string, mode os.FileMode) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("a/f.txt", "one\n", 0o644)
	write("a/run.sh", "#!/bin/sh\n", 0o755)
	write("a/b/big.bin", "0123456789abcdef", 0o644)
	write("a/b/dir/inner", "x", 0o644)
	if err := os.Symlink("f.txt", filepath.Join(root, "a", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	var rels []string
	for i := range maxOpenDirs + 10 {
		rel := fmt.Sprintf("many/d%03d/f", i)
		write(rel, rel+"\n", 0o644)
		rels = append(rels, rel)
	}
	o := NewOpenDirs(root)
	defer o.Close()
	// Each twice: the second read goes through the directory the first
	// opened (or found missing).
	for pass := range 2 {
		for _, c := range []struct {
			rel string
			max int64
		}{
			{"a/f.txt", 1 << 20}, {"a/run.sh", 1 << 20}, {"a/link", 1 << 20}, {"a/none", 1 << 20},
			{"nodir/sub/f", 1 << 20}, {"a/b/big.bin", 4}, {"a/b/dir", 1 << 20},
		} {
			want, werr := ReadVersionMax(root, c.rel, c.max)
			got, fi, err := o.ReadVersionMax(c.rel, c.max)
			if !errors.Is(err, werr) && (err == nil) != (werr == nil) {
				t.Errorf("pass %d, %s: error %v, ReadVersionMax's %v", pass, c.rel, err, werr)
			}
			if !Same(got, want) || string(got.Content) != string(want.Content) {
				t.Errorf("pass %d, %s: %+v, ReadVersionMax read %+v", pass, c.rel, got, want)
			}
			if (fi != nil) != (want.Present && werr == nil) {
				t.Errorf("pass %d, %s: lstat %v for a version present=%v", pass, c.rel, fi, want.Present)
			}
		}
		if v, _, _ := o.ReadVersionMax("a/b/big.bin", 4); !isBig(v) {
			t.Errorf("pass %d: a file past max was read whole", pass)
		}
		if v, _, err := o.ReadVersionMax("out/secret", 1<<20); !errors.Is(err, safepath.ErrOutside) || len(v.Content) != 0 {
			t.Errorf("pass %d: through a symlinked parent: %q, %v; want ErrOutside and nothing read", pass, v.Content, err)
		}
		if _, _, err := o.ReadVersionMax("../x", 1<<20); err == nil {
			t.Errorf("pass %d: ../x was read", pass)
		}
		for _, rel := range rels {
			v, _, err := o.ReadVersionMax(rel, 1<<20)
			if err != nil || string(v.Content) != rel+"\n" {
				t.Fatalf("pass %d, %s: %q, %v", pass, rel, v.Content, err)
			}
		}
		if len(o.dirs) > maxOpenDirs {
			t.Errorf("pass %d: %d directories held open, more than %d", pass, len(o.dirs), maxOpenDirs)
		}
	}
}

func isBig(v Version) bool {
	_, big := v.Big()
	return big
}

// TestOpenDirsForget: a directory replaced after OpenDirs opened it is
// still read through the one opened (what the caller's lstat of the path
// catches); Forget makes the next read open the new one.
func TestOpenDirsForget(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := NewOpenDirs(root)
	defer o.Close()
	if v, _, err := o.ReadVersionMax("d/f", 1<<20); err != nil || string(v.Content) != "old\n" {
		t.Fatalf("first read: %q, %v", v.Content, err)
	}
	if err := os.Rename(dir, filepath.Join(root, "gone")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v, fi, err := o.ReadVersionMax("d/f", 1<<20)
	now, lerr := os.Lstat(filepath.Join(dir, "f"))
	if err != nil || lerr != nil || string(v.Content) != "old\n" || os.SameFile(fi, now) {
		t.Fatalf("through the directory opened before: %q (same file as the path's: %v), %v, %v", v.Content, os.SameFile(fi, now), err, lerr)
	}
	o.Forget("d/f")
	if v, fi, err := o.ReadVersionMax("d/f", 1<<20); err != nil || string(v.Content) != "new\n" || !os.SameFile(fi, now) {
		t.Fatalf("after Forget: %q, %v", v.Content, err)
	}
}
