//go:build unix

package worktree

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/internal/testgit"
)

// asked is how many git processes cachedDrivers has started.
func asked() int {
	driverCache.mu.Lock()
	defer driverCache.mu.Unlock()
	return driverCache.asked
}

// TestCachedDriversAskGitOnce: the drivers of a config git was asked
// about once come from memory while its bytes stay the same (no git
// process), and from git again when they change; a config that names no
// filter needs no git at all. Where cachedDrivers cannot name every file
// git reads (an include, a .git file, a .git git would not take for a
// repository) it gives up, and the runner asks git, include and all.
func TestCachedDriversAskGitOnce(t *testing.T) {
	testgit.Env(t)
	ctx := context.Background()
	r := &Runner{}
	dir := testgit.Init(t, "ws")
	c := NewCmd("status").Dir(dir)
	drivers := func(want ...string) {
		t.Helper()
		got, ok := r.cachedDrivers(ctx, c)
		if !ok || !slices.Equal(got, want) {
			t.Fatalf("cached drivers = %v %v, want %v", got, ok, want)
		}
	}
	n := asked()
	drivers()
	if asked() != n {
		t.Fatalf("a config with no filter in it: %d git processes, want none", asked()-n)
	}
	testgit.Git(t, dir, "config", "filter.one.clean", "cat")
	drivers("one")
	drivers("one")
	if asked() != n+1 {
		t.Fatalf("the same config twice: %d git processes, want 1", asked()-n)
	}
	testgit.Git(t, dir, "config", "filter.two.smudge", "cat")
	drivers("one", "two")
	if asked() != n+2 {
		t.Fatalf("a changed config: %d git processes, want 2", asked()-n)
	}

	inc := filepath.Join(t.TempDir(), "inc")
	testgit.Write(t, filepath.Dir(inc), "inc", "[filter \"inc\"]\n\tclean = cat\n", 0o644)
	testgit.Git(t, dir, "config", "include.path", inc)
	if got, ok := r.cachedDrivers(ctx, c); ok {
		t.Fatalf("with an include: cached drivers %v", got)
	}
	if got, err := r.drivers(ctx, c); err != nil || !slices.Contains(got, "inc") {
		t.Fatalf("with an include: drivers %v %v, want inc among them", got, err)
	}
	testgit.Git(t, dir, "config", "--unset", "include.path")
	drivers("one", "two")

	head := filepath.Join(dir, ".git", "HEAD")
	b, _ := os.ReadFile(head)
	os.WriteFile(head, []byte("garbage\n"), 0o644)
	if got, ok := r.cachedDrivers(ctx, c); ok {
		t.Fatalf("a .git that git passes over: cached drivers %v", got)
	}
	os.WriteFile(head, b, 0o644)
	drivers("one", "two")

	// A FIFO where git may not even look: given up on, not waited on.
	fifo := filepath.Join(dir, ".git", "config.worktree")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan bool)
	go func() {
		_, ok := r.cachedDrivers(ctx, c)
		done <- ok
	}()
	select {
	case ok := <-done:
		if ok {
			t.Fatal("a FIFO for config.worktree: cached drivers")
		}
	case <-time.After(time.Minute):
		t.Fatal("a FIFO for config.worktree: still reading it after a minute")
	}
	os.Remove(fifo)
	drivers("one", "two")

	other := testgit.Init(t, "other")
	os.Rename(filepath.Join(dir, ".git"), filepath.Join(other, "moved.git"))
	testgit.Write(t, dir, ".git", "gitdir: "+filepath.Join(other, "moved.git")+"\n", 0o644)
	if got, ok := r.cachedDrivers(ctx, c); ok {
		t.Fatalf("a .git file: cached drivers %v", got)
	}
}

// TestCachedDriversSystemConfig: unless GIT_CONFIG_NOSYSTEM surely keeps
// git from it, the system config is read too: $GIT_CONFIG_SYSTEM's, or
// the one git names as its own.
func TestCachedDriversSystemConfig(t *testing.T) {
	testgit.Env(t)
	ctx := context.Background()
	r := &Runner{}
	dir := testgit.Init(t, "ws")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "0")
	t.Setenv("GIT_CONFIG_SYSTEM", "")
	os.Unsetenv("GIT_CONFIG_SYSTEM")
	if p, ok := r.systemConfig(ctx); !ok || !filepath.IsAbs(p) {
		t.Fatalf("git's own system config = %q %v, want a path", p, ok)
	}
	sys := filepath.Join(t.TempDir(), "gitconfig")
	testgit.Write(t, filepath.Dir(sys), "gitconfig", "[filter \"sys\"]\n\tprocess = cat\n", 0o644)
	t.Setenv("GIT_CONFIG_SYSTEM", sys)
	if got, ok := r.cachedDrivers(ctx, NewCmd("status").Dir(dir)); !ok || !slices.Equal(got, []string{"sys"}) {
		t.Fatalf("cached drivers = %v %v, want sys", got, ok)
	}
}
