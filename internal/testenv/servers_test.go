package testenv

import (
	"fmt"
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
	root := t.TempDir()
	other := t.TempDir()
	start := func(ws string) *exec.Cmd {
		// sh -c's arguments are in its command line: "serve --workspace WS".
		cmd := exec.Command("sh", "-c", "sleep 600; true", "serve", "--workspace", ws)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	mine := start(filepath.Join(root, "003", "ws"))
	theirs := start(filepath.Join(other, "ws"))
	exited := make(chan struct{})
	go func() { mine.Wait(); close(exited) }()

	if got := ServersUnder(root); len(got) != 1 || got[0].PID != mine.Process.Pid {
		t.Fatalf("ServersUnder = %+v, want pid %d alone", got, mine.Process.Pid)
	}
	tb := &recordingTB{TB: t, dir: root}
	StopsItsServers(tb)
	for _, f := range tb.cleanups {
		f()
	}
	if len(tb.errs) != 1 || !strings.Contains(tb.errs[0], fmt.Sprintf("pid %d", mine.Process.Pid)) {
		t.Fatalf("errors = %q, want one naming pid %d", tb.errs, mine.Process.Pid)
	}
	select {
	case <-exited:
	case <-time.After(time.Minute):
		t.Fatal("the left server was not stopped")
	}
	if err := syscall.Kill(theirs.Process.Pid, 0); err != nil {
		t.Errorf("the other workspace's server was stopped too: %v", err)
	}
}
