//go:build unix

package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// recordingTB is a testing.TB whose errors and cleanups are kept, to test
// what a helper reports.
type recordingTB struct {
	testing.TB
	dir      string
	errs     []string
	cleanups []func()
}

func (r *recordingTB) Helper()                   {}
func (r *recordingTB) TempDir() string           { return filepath.Join(r.dir, "001") }
func (r *recordingTB) Cleanup(f func())          { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Errorf(f string, a ...any) { r.errs = append(r.errs, fmt.Sprintf(f, a...)) }

// A process that looks like a server of a workspace under the test's
// directories fails the test that leaves it, and is stopped; one of
// another workspace is left alone.
func TestStopsItsServers(t *testing.T) {
	// As testing lays them out: a test's directories under one named after
	// it, with digits after; a subtest's under one named after both.
	base := t.TempDir()
	root := filepath.Join(base, "TestFake987")
	start := func(ws string) *exec.Cmd {
		if err := os.MkdirAll(ws, 0o755); err != nil {
			t.Fatal(err)
		}
		// sh -c's arguments are in its command line: "serve --workspace WS".
		cmd := exec.Command("sh", "-c", "sleep 600; true", "serve", "--workspace", ws)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	mine := start(filepath.Join(root, "003", "ws"))
	sub := start(filepath.Join(base, "TestFakesub42", "001", "ws"))
	theirs := start(filepath.Join(base, "TestOther555", "ws"))
	var stopped []chan struct{}
	for _, c := range []*exec.Cmd{mine, sub} {
		done := make(chan struct{})
		go func() { c.Wait(); close(done) }()
		stopped = append(stopped, done)
	}

	if got := ServersUnder(root); len(got) != 1 || got[0].PID != mine.Process.Pid {
		t.Fatalf("ServersUnder = %+v, want pid %d alone", got, mine.Process.Pid)
	}
	tb := &recordingTB{TB: t, dir: root}
	StopsItsServers(tb)
	for _, f := range tb.cleanups {
		f()
	}
	joined := strings.Join(tb.errs, "\n")
	if len(tb.errs) != 2 || !strings.Contains(joined, fmt.Sprintf("pid %d,", mine.Process.Pid)) || !strings.Contains(joined, fmt.Sprintf("pid %d,", sub.Process.Pid)) {
		t.Fatalf("errors = %q, want two, naming pids %d and %d", tb.errs, mine.Process.Pid, sub.Process.Pid)
	}
	for _, done := range stopped {
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatal("a left server was not stopped")
		}
	}
	if err := syscall.Kill(theirs.Process.Pid, 0); err != nil {
		t.Errorf("the other test's server was stopped too: %v", err)
	}
}
