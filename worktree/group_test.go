//go:build unix

package worktree_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/worktree"
)

// running lists the processes whose command line holds tag.
func running(tag string) []string {
	var out []string
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		b, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), tag) {
			out = append(out, p.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// TestTimeoutEndsWhatGitStarted: a git call that runs out of time ends
// with everything it started (here the shell of an alias, and a sleep
// that shell left in the background), not git alone.
func TestTimeoutEndsWhatGitStarted(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc")
	}
	testgit.Env(t)
	dir := testgit.Init(t, "r")
	tag := fmt.Sprintf("1000.%d", time.Now().UnixNano()%1000000)
	r := &worktree.Runner{Timeout: time.Second}
	_, err := r.Run(context.Background(), worktree.NewCmd("-c", "alias.hang=!sleep "+tag+" & sleep "+tag, "hang").Dir(dir))
	if !errors.Is(err, worktree.ErrTimeout) {
		t.Fatalf("run: %v, want a timeout", err)
	}
	// SIGKILL has been sent to the group when Run returns; the kernel
	// takes a moment to reap.
	deadline := time.Now().Add(30 * time.Second)
	for left := running(tag); len(left) > 0; left = running(tag) {
		if time.Now().After(deadline) {
			for _, l := range left { // this test's own, by their ids
				if pid, err := strconv.Atoi(l[:strings.IndexByte(l, ':')]); err == nil {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			t.Fatalf("still running after the call's timeout:\n%s", strings.Join(left, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
