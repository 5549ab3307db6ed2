package sync

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	stdsync "sync"
	"testing"
)

// assertNoTemp fails if a temporary file of ours is left in dir.
func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	left, err := filepath.Glob(filepath.Join(dir, TempPrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("temp files left behind: %v", left)
	}
}

func assertFile(t *testing.T, path, content string, perm os.FileMode) {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Mode().IsRegular() {
		t.Fatalf("%s is %v, want a regular file", path, info.Mode().Type())
	}
	if got := info.Mode().Perm(); got != perm {
		t.Errorf("%s mode = %v, want %v", path, got, perm)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != content {
		t.Errorf("%s = %q, want %q", path, got, content)
	}
}

func TestWriteFileAtomicContentAndMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.sh")

	if err := WriteFileAtomic(path, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	assertFile(t, path, "#!/bin/sh\necho hi\n", 0o755)

	// Replacing drops the exec bit when asked to.
	if err := WriteFileAtomic(path, []byte("plain\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	assertFile(t, path, "plain\n", 0o644)

	// The mode is exact, not trimmed by the umask.
	if err := WriteFileAtomic(path, nil, 0o777); err != nil {
		t.Fatal(err)
	}
	assertFile(t, path, "", 0o777)
	assertNoTemp(t, dir)
}

func TestWriteFileAtomicCreatesParents(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "a", "b", "new.txt")
	if err := WriteFileAtomic(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	assertFile(t, path, "x", 0o600)
	info, err := os.Stat(filepath.Join(root, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if !info.IsDir() || info.Mode().Perm()&0o700 != 0o700 {
		t.Errorf("parent mode = %v", info.Mode())
	}
}

func TestWriteFileAtomicReplacesSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.txt")
	link := filepath.Join(dir, "link.txt")
	if err := os.WriteFile(target, []byte("target content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(link, []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	assertFile(t, link, "new\n", 0o644)
	assertFile(t, target, "target content\n", 0o644)

	// A link to a directory is replaced too; the directory stays as is.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	dirLink := filepath.Join(dir, "dirlink")
	if err := os.Symlink(sub, dirLink); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(dirLink, []byte("f"), 0o644); err != nil {
		t.Fatal(err)
	}
	assertFile(t, dirLink, "f", 0o644)
	if entries, _ := os.ReadDir(sub); len(entries) != 0 {
		t.Errorf("wrote into the linked directory: %v", entries)
	}
	assertNoTemp(t, dir)
}

func TestWriteFileAtomicFailureLeavesPathAlone(t *testing.T) {
	dir := t.TempDir()

	// A parent that is a regular file cannot hold the new file.
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(filepath.Join(blocker, "child"), []byte("x"), 0o644); err == nil {
		t.Error("write below a regular file succeeded")
	}
	assertFile(t, blocker, "keep", 0o644)

	// A directory at path is not replaced: the rename fails after the
	// temp file was written, which must then be removed again.
	target := filepath.Join(dir, "adir")
	if err := os.MkdirAll(filepath.Join(target, "inner"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(target, []byte("x"), 0o644); err == nil {
		t.Error("write over a directory succeeded")
	}
	if info, err := os.Stat(filepath.Join(target, "inner")); err != nil || !info.IsDir() {
		t.Errorf("directory damaged: %v", err)
	}
	assertNoTemp(t, dir)
}

func TestWriteFileAtomicUnwritableDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(path, []byte("original"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	if err := WriteFileAtomic(path, []byte("new"), 0o644); err == nil {
		t.Fatal("write into a read-only directory succeeded")
	}
	assertFile(t, path, "original", 0o644)
	assertNoTemp(t, dir)
}

func TestWriteFileAtomicConcurrent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "shared.txt")
	var wg stdsync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 10 {
				if err := WriteFileAtomic(path, []byte(fmt.Sprintf("writer %d round %d\n", w, i)), 0o644); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(got), "writer ") || !strings.HasSuffix(string(got), " round 9\n") {
		t.Errorf("final content %q is not one whole write", got)
	}
	assertNoTemp(t, dir)
}

func TestWriteSymlinkAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "deep", "link")

	if err := WriteSymlinkAtomic(path, "../somewhere"); err != nil {
		t.Fatal(err)
	}
	if got, err := os.Readlink(path); err != nil || got != "../somewhere" {
		t.Fatalf("Readlink = %q, %v", got, err)
	}

	// Replace a link by another link.
	if err := WriteSymlinkAtomic(path, "other"); err != nil {
		t.Fatal(err)
	}
	if got, err := os.Readlink(path); err != nil || got != "other" {
		t.Fatalf("Readlink = %q, %v", got, err)
	}

	// Replace a regular file by a link.
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteSymlinkAtomic(file, "target"); err != nil {
		t.Fatal(err)
	}
	if got, err := os.Readlink(file); err != nil || got != "target" {
		t.Fatalf("Readlink = %q, %v", got, err)
	}

	// A directory in the way is an error and leaves no temp link.
	sub := filepath.Join(dir, "sub")
	if err := os.MkdirAll(filepath.Join(sub, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteSymlinkAtomic(sub, "t"); err == nil {
		t.Error("link over a directory succeeded")
	}
	assertNoTemp(t, dir)
	assertNoTemp(t, filepath.Join(dir, "deep"))
}

func TestRemoveFile(t *testing.T) {
	root := t.TempDir()
	mk := func(rel, content string) string {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	exists := func(rel string) bool {
		_, err := os.Lstat(filepath.Join(root, rel))
		return err == nil
	}

	mk("a/keep.txt", "k")
	gone := mk("a/b/c/gone.txt", "g")
	if err := RemoveFile(root, gone); err != nil {
		t.Fatal(err)
	}
	if exists("a/b/c/gone.txt") || exists("a/b/c") || exists("a/b") {
		t.Error("file or its emptied parents remain")
	}
	if !exists("a/keep.txt") {
		t.Error("non-empty parent pruned")
	}

	// Missing is fine, twice.
	if err := RemoveFile(root, gone); err != nil {
		t.Errorf("missing file: %v", err)
	}
	if err := RemoveFile(root, filepath.Join(root, "a", "nothing")); err != nil {
		t.Errorf("missing file: %v", err)
	}

	// The root itself is never pruned.
	only := mk("only.txt", "o")
	if err := RemoveFile(root, only); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(root); err != nil {
		t.Fatalf("root removed: %v", err)
	}

	// Directories are refused.
	if err := RemoveFile(root, filepath.Join(root, "a")); err == nil {
		t.Error("removed a directory")
	}
}

func TestRemoveFileRefusesOutside(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	victim := filepath.Join(outside, "victim.txt")
	if err := os.WriteFile(victim, []byte("v"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A sibling whose name starts with the root's: a string prefix check
	// would let it through.
	sibling := filepath.Join(base, "rootevil")
	if err := os.Mkdir(sibling, 0o755); err != nil {
		t.Fatal(err)
	}
	sibFile := filepath.Join(sibling, "f")
	if err := os.WriteFile(sibFile, []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "esc")); err != nil {
		t.Fatal(err)
	}

	for _, p := range []string{
		victim,
		filepath.Join(root, "..", "outside", "victim.txt"),
		sibFile,
		filepath.Join(root, "esc", "victim.txt"),
		root,
	} {
		if err := RemoveFile(root, p); err == nil {
			t.Errorf("RemoveFile(%s) succeeded", p)
		}
	}
	for _, p := range []string{victim, sibFile} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}

	// A symlink inside root is removed as a link; its target stays.
	link := filepath.Join(root, "link")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if err := RemoveFile(root, link); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Errorf("link still there: %v", err)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("link target removed: %v", err)
	}
}

func TestRemoveFileDoesNotPruneThroughSymlink(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	alias := filepath.Join(root, "alias")
	if err := os.Symlink(real, alias); err != nil {
		t.Fatal(err)
	}
	if err := RemoveFile(root, filepath.Join(alias, "f")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(alias); err != nil {
		t.Errorf("symlinked parent was removed: %v", err)
	}
}

func TestCleanTemp(t *testing.T) {
	root := t.TempDir()
	plant := func(rel string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// .git is not ours to touch: temps[2] stays.
	plant("src/keep.txt")
	plant("src/prsm-tmp-lookalike")
	// The user's own files that happen to start with the prefix are not
	// prsm's: its temp names are the prefix and 13 base-36 digits.
	plant("docs/" + TempPrefix + "notes.md")
	plant(TempPrefix + "scratchpad")
	plant(TempPrefix + "0123456789ABC")
	temps := []string{"", "src/deep/", ".git/", "src/"}
	for i := range temps {
		temps[i] += tempName()
	}
	for _, rel := range temps[:3] {
		plant(rel)
	}
	if err := os.Symlink("nowhere", filepath.Join(root, temps[3])); err != nil {
		t.Fatal(err)
	}

	n, err := CleanTemp(root)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("removed %d, want 3", n)
	}
	for rel, want := range map[string]bool{
		temps[0]:                          false,
		temps[1]:                          false,
		temps[3]:                          false,
		temps[2]:                          true,
		"src/keep.txt":                    true,
		"src/prsm-tmp-lookalike":          true,
		"docs/" + TempPrefix + "notes.md": true,
		TempPrefix + "scratchpad":         true,
		TempPrefix + "0123456789ABC":      true,
	} {
		_, err := os.Lstat(filepath.Join(root, rel))
		if got := err == nil; got != want {
			t.Errorf("%s exists = %v, want %v", rel, got, want)
		}
	}

	// A second run finds nothing.
	if n, err := CleanTemp(root); err != nil || n != 0 {
		t.Errorf("second run: %d, %v", n, err)
	}
	if _, err := CleanTemp(filepath.Join(root, "missing")); err == nil {
		t.Error("missing root is not an error")
	}
}

// A crash between creating the temp file and the rename leaves exactly the
// kind of file CleanTemp removes, and never touches the target.
func TestCrashLeftoverIsCleaned(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	if err := WriteFileAtomic(path, []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The temp file of the next write, as a kill before its rename leaves it.
	if err := os.WriteFile(filepath.Join(dir, tempName()), []byte("v2 half"), 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := CleanTemp(dir); err != nil || n != 1 {
		t.Fatalf("CleanTemp = %d, %v", n, err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, []byte("v1")) {
		t.Errorf("target = %q", got)
	}
}
