//go:build unix

package tracker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/prsm-dev/prsm/internal/testgit"
)

// TestIgnoreProcAnswersAsGit: the running check-ignore decides as git
// does (patterns, negations, nested .gitignore files, info/exclude, odd
// names), one process answers many looks, a changed .gitignore starts one
// that reads the new rules, and when the process dies the answers still
// come (each batch then asks a check-ignore of its own).
func TestIgnoreProcAnswersAsGit(t *testing.T) {
	s, log := newTrackedSession(t)
	defer s.Close()
	ctx := context.Background()
	ws := s.Worktree
	testgit.Write(t, ws, ".gitignore", "*.log\n!keep.log\nbuild/\n", 0o644)
	testgit.Write(t, ws, "sub/.gitignore", "*.tmp2\n", 0o644)
	if err := os.WriteFile(filepath.Join(ws, ".git", "info", "exclude"), []byte("secret.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := []string{"a.log", "keep.log", "build/x.o", "sub/y.tmp2", "sub/y.txt", "secret.txt", "src/new.txt", "dir/ü é.txt", "new\nline.txt"}
	for _, f := range files {
		testgit.Write(t, ws, f, "x\n", 0o644)
	}
	filter := func(paths ...string) []string {
		t.Helper()
		got, err := s.Filter(ctx, paths)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	checkIgnores := func() int {
		n := 0
		for _, c := range gitCalls(t, log) {
			if strings.Contains(c, "check-ignore") {
				n++
			}
		}
		return n
	}
	want := []string{"dir/ü é.txt", "keep.log", "new\nline.txt", "src/new.txt", "sub/y.txt"}
	if got := filter(files[:5]...); !slices.Equal(got, []string{"keep.log", "sub/y.txt"}) {
		t.Errorf("first look kept %q", got)
	}
	if got := filter(files...); !slices.Equal(sorted(got), want) {
		t.Errorf("second look kept %q, want %q", got, want)
	}
	if n := checkIgnores(); n != 1 {
		t.Errorf("%d check-ignore processes for two looks, want 1:\n%s", n, strings.Join(gitCalls(t, log), "\n"))
	}
	// New rules: the process that read the old ones is replaced.
	testgit.Write(t, ws, ".gitignore", "*.log\n!keep.log\nbuild/\nsrc/new2.txt\n", 0o644)
	testgit.Write(t, ws, "src/new2.txt", "x\n", 0o644)
	testgit.Write(t, ws, "src/new3.txt", "x\n", 0o644)
	if got := filter(".gitignore", "src/new2.txt", "src/new3.txt"); !slices.Equal(got, []string{".gitignore", "src/new3.txt"}) {
		t.Errorf("after the rules changed, kept %q", got)
	}
	if n := checkIgnores(); n != 2 {
		t.Errorf("%d check-ignore processes after the rules changed, want 2", n)
	}
	// The process dies: the answers still come, from a process per batch.
	s.ignoreMu.Lock()
	if err := syscall.Kill(s.ignoreProc.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.ignoreMu.Unlock()
	testgit.Write(t, ws, "b.log", "x\n", 0o644)
	testgit.Write(t, ws, "src/new4.txt", "x\n", 0o644)
	if got := filter("b.log", "src/new4.txt"); !slices.Equal(got, []string{"src/new4.txt"}) {
		t.Errorf("after the process died, kept %q", got)
	}
	if !s.ignoreOff || s.ignoreProc != nil {
		t.Errorf("the dead process is still in use")
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// TestIgnoreCacheKeepsItsBound: a look of more new files than the ignore
// cache keeps (an npm install's 200k) decides each as git does, and the
// cache holds no more than its bound.
func TestIgnoreCacheKeepsItsBound(t *testing.T) {
	defer func(n int) { maxIgnoreCache = n }(maxIgnoreCache)
	maxIgnoreCache = 10
	s, _ := newTrackedSession(t)
	defer s.Close()
	testgit.Write(t, s.Worktree, ".gitignore", "*.log\n", 0o644)
	var paths, want []string
	for i := range 40 {
		p := fmt.Sprintf("gen/f%02d.js", i)
		if i%3 == 0 {
			p = fmt.Sprintf("gen/f%02d.log", i)
		} else {
			want = append(want, p)
		}
		testgit.Write(t, s.Worktree, p, "x\n", 0o644)
		paths = append(paths, p)
	}
	for look := range 2 {
		got, err := s.Filter(context.Background(), paths)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(sorted(got), want) {
			t.Errorf("look %d kept %q, want %q", look, got, want)
		}
		if len(s.ignored) > maxIgnoreCache {
			t.Errorf("look %d: the ignore cache holds %d decisions, over its bound %d", look, len(s.ignored), maxIgnoreCache)
		}
	}
}
