package tracker_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/prsm-dev/prsm/tracker"
)

// A watcher that runs out of file descriptors while it walks a worktree
// (inotify needs one to list each directory) says so and scans that
// worktree; its flush, which cannot write a sentinel, falls back to a
// full scan instead of failing the look. It runs in a child process, the
// only one whose descriptors it exhausts.
func TestWatcherOutOfDescriptorsIsScanned(t *testing.T) {
	if os.Getenv("PRSM_TEST_EXHAUST_FDS") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWatcherOutOfDescriptorsIsScanned$", "-test.v")
		cmd.Env = append(os.Environ(), "PRSM_TEST_EXHAUST_FDS=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: 64, Max: 64}); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
	w := quietWatcher(t)
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "a/b"), 0o755); err != nil {
		t.Fatal(err)
	}
	var held []*os.File
	defer func() {
		for _, f := range held {
			f.Close()
		}
	}()
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break
		}
		held = append(held, f)
	}
	if err := w.Add("s", root); err != nil {
		t.Fatalf("Add without descriptors failed: %v", err)
	}
	if err := w.Flush(context.Background(), root); err != nil {
		t.Fatalf("Flush without descriptors failed: %v", err)
	}
	d := w.Peek(root)
	l := w.Limits()["s"]
	for _, f := range held {
		f.Close()
	}
	held = nil
	if l.Cause != tracker.LimitDescriptors || !strings.Contains(l.Reason, "ulimit -n is 64") || !strings.Contains(l.Fix, "ulimit -n") {
		t.Fatalf("limit = %+v, want out of descriptors", l)
	}
	if !d.Full {
		t.Fatalf("look without descriptors is not a full scan: %+v", d)
	}
}
