package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/internal/osproc"
)

// runHold is a live `prsm run`'s hold on its session: an exclusive lock
// (flock) on runs/<session id>.lock in the project's directory, with the
// run's pid in the file. The kernel lets it go when the run's process
// ends, however it ends, so a hold never outlives its run; the agent does
// not inherit it (the file is opened close-on-exec).
type runHold struct{ f *os.File }

// holdRun takes the hold on session id for this process. When another
// live run holds it, it returns nil and that run's pid (0 when it has not
// written it yet).
func holdRun(projectDir, id string) (*runHold, int, error) {
	dir := filepath.Join(projectDir, "runs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, 0, err
	}
	f, err := os.OpenFile(filepath.Join(dir, id+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, 0, err
	}
	if ok, err := osproc.TryLock(f); !ok {
		defer f.Close()
		if err == nil {
			b, _ := os.ReadFile(f.Name())
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return nil, pid, nil
		}
		return nil, 0, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &runHold{f: f}, 0, nil
}

// release lets the session go (the process's end does too).
func (h *runHold) release() {
	if h != nil {
		h.f.Close()
	}
}

// holder names the live run that holds a session: its pid when known.
func holder(run string, pid int) string {
	if pid > 0 {
		return fmt.Sprintf("%s (pid %d)", run, pid)
	}
	return run
}

// heldError is the refusal of a session another live run holds.
func heldError(s *prsm.Session, pid int) error {
	return usagef("wait for that run to end, or start another session with --new (--new --name N names it)",
		"session %s (%s) is held by %s; two runs never share a worktree", s.ID, printable(s.Name), holder("another live `prsm run`", pid))
}
