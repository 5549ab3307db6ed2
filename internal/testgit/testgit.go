// Package testgit builds real git repositories for tests: a clean git
// environment (HOME, global config) in temp dirs, helpers to write files,
// modes and symlinks, and a byte-exact description of a directory tree to
// compare workspaces with worktrees.
package testgit

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Env points HOME, the global git config and PRSM_HOME at fresh temp dirs,
// so tests never see the developer's own settings. It returns PRSM_HOME.
func Env(t testing.TB) string {
	t.Helper()
	home := t.TempDir()
	cfg := filepath.Join(home, ".gitconfig")
	if err := os.WriteFile(cfg, []byte("[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_DIR", "")
	t.Setenv("GIT_WORK_TREE", "")
	os.Unsetenv("GIT_DIR")
	os.Unsetenv("GIT_WORK_TREE")
	prsmHome := filepath.Join(t.TempDir(), "prsm home")
	t.Setenv("PRSM_HOME", prsmHome)
	return prsmHome
}

// Git runs git in dir and returns its trimmed output; failure fails the test.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := Run(dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Run is Git for what no one test owns (a test binary's templates): its
// failure is an error, with git's stderr.
func Run(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return strings.TrimRight(out.String(), "\n"), nil
}

// Init makes a new repository in a temp dir named name and returns its path.
func Init(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	Git(t, dir, "init", "-q")
	return dir
}

// Write writes content to root/rel with mode, creating parent dirs.
func Write(t testing.TB, root, rel, content string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// Commit writes files (relative path to content, mode 0644) into the
// repository at dir and commits all of its changes with message msg.
func Commit(t testing.TB, dir, msg string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		Write(t, dir, rel, content, 0o644)
	}
	Git(t, dir, "add", "-A")
	Git(t, dir, "commit", "-qm", msg)
}

// Symlink makes root/rel a symlink to target.
func Symlink(t testing.TB, root, rel, target string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// Sparse makes root/rel a sparse file of size bytes, as `truncate -s`
// does, holding tag at offset 1 MiB and at its end and nothing else but
// holes.
func Sparse(t testing.TB, root, rel string, size int64, tag string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	for _, off := range []int64{1 << 20, size - int64(len(tag))} {
		if _, err := f.WriteAt([]byte(tag), off); err != nil {
			t.Fatal(err)
		}
	}
}

// Names lists the names in directory dir (none when it is missing): the
// markers a test's commands leave there.
func Names(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// DiskUse is the disk space the file at p takes (its allocated blocks).
func DiskUse(t testing.TB, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return diskUse(fi)
}

// Tree describes every file under root except .git and the skipped paths:
// "rel -> mode content" for files, "rel -> link target" for symlinks. Two
// trees are byte-for-byte equal when their descriptions are.
func Tree(t testing.TB, root string, skip map[string]bool) map[string]string {
	t.Helper()
	m, err := TreeOf(root, skip)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TreeOf is Tree for callers without a testing.TB.
func TreeOf(root string, skip map[string]bool) (map[string]string, error) {
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if d.Name() == ".git" || skip[rel] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			m[rel] = "link " + target
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = fmt.Sprintf("%o %q", fi.Mode().Perm()&0o111, b)
		}
		return nil
	})
	return m, err
}

// Ignored lists the git-ignored files of a working tree, for Tree's skip.
func Ignored(t testing.TB, root string) map[string]bool {
	t.Helper()
	skip, err := IgnoredOf(root)
	if err != nil {
		t.Fatal(err)
	}
	return skip
}

// IgnoredOf is Ignored for callers without a testing.TB.
func IgnoredOf(root string) (map[string]bool, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %w", root, err)
	}
	skip := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			skip[strings.TrimSuffix(p, "/")] = true
		}
	}
	return skip, nil
}

// Diff reports the differences between two tree descriptions, sorted.
func Diff(a, b map[string]string) string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			out = append(out, "only in first: "+k)
		} else if v != w {
			out = append(out, fmt.Sprintf("differs %s: %.80s vs %.80s", k, v, w))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "only in second: "+k)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// State is what the user's repository must keep across prsm operations: the
// porcelain status, the index bytes and HEAD.
func State(t testing.TB, root string) string {
	t.Helper()
	gitDir := Git(t, root, "rev-parse", "--absolute-git-dir")
	index, err := os.ReadFile(filepath.Join(gitDir, "index"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	// GIT_OPTIONAL_LOCKS=0 keeps status from refreshing (rewriting) the
	// index it is asked to describe.
	sc := exec.Command("git", "status", "--porcelain=v1", "-z", "--untracked-files=all")
	sc.Dir = root
	sc.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	statusOut, err := sc.Output()
	if err != nil {
		t.Fatalf("git status: %v", err)
	}
	status := string(statusOut)
	head, _ := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	cmd := exec.Command("git", "rev-parse", "-q", "--verify", "HEAD")
	cmd.Dir = root
	headID, _ := cmd.Output()
	return fmt.Sprintf("status=%q\nhead=%q %q\nindex=%x", status, head, headID, index)
}

// Lines returns n numbered lines, each ending in tag.
func Lines(n int, tag string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d %s\n", i, tag)
	}
	return b.String()
}

// CommitMany writes n files of 40 lines, dNNN/fNNNNN.txt in 100
// directories (file i in directory i%100), into the repository at dir and
// commits them, with no automatic gc left running after: the repository
// of the benchmarks.
func CommitMany(tb testing.TB, dir string, n int) {
	tb.Helper()
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, fmt.Sprintf("d%03d", i%100), fmt.Sprintf("f%05d.txt", i))
		if i < 100 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				tb.Fatal(err)
			}
		}
		if err := os.WriteFile(p, []byte(Lines(40, fmt.Sprint(i))), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	Git(tb, dir, "add", "-A")
	Git(tb, dir, "-c", "gc.auto=0", "commit", "-qm", "many")
}
