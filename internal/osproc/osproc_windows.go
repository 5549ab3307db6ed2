//go:build windows

package osproc

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/windows"
)

// NoFollow is 0: Windows has no O_NOFOLLOW. prsm's reads that must not
// follow a link open through os.Root, which refuses a link that leaves
// its directory, and compare the file opened with the one looked at
// (os.SameFile).
const NoFollow = 0

// Alive reports whether process pid still runs: a handle to it opens, and
// it has no exit code yet.
func Alive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_ACCESS_DENIED)
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	return code == 259 // STILL_ACTIVE
}

// Stop ends process pid: Windows has no SIGTERM to ask with, so both ways
// terminate it.
func Stop(pid int, kill bool) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return ErrGone
	}
	defer p.Release()
	if err := p.Kill(); err != nil {
		if errors.Is(err, os.ErrProcessDone) {
			return ErrGone
		}
		return err
	}
	return nil
}

// StopGroup ends the process pid leads, through taskkill's tree kill
// (Windows' groups take no signal).
func StopGroup(pid int, kill bool) error {
	if !Alive(pid) {
		return ErrGone
	}
	args := []string{"/T", "/PID", strconv.Itoa(pid)}
	if kill {
		args = append([]string{"/F"}, args...)
	}
	if err := exec.Command("taskkill", args...).Run(); err != nil {
		return Stop(pid, true)
	}
	return nil
}

// Group starts cmd in a new process group.
func Group(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// Detach starts cmd in a new process group, with no console of its own.
func Detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS}
}

// lockAt is where TryLock's one locked byte lies: far past any content,
// as a byte Windows locks cannot be read through another handle (a
// held lock file's pid must stay readable).
const lockAt = 0x7fffffff

// TryLock takes an exclusive lock on one byte of f, past its content, or
// reports false at once when another open file holds it.
func TryLock(f *os.File) (bool, error) {
	ol := windows.Overlapped{OffsetHigh: lockAt}
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return false, nil
	}
	return err == nil, err
}

// Unlock lets TryLock's lock go.
func Unlock(f *os.File) error {
	ol := windows.Overlapped{OffsetHigh: lockAt}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}

// Umask is 0o022: Windows has none, and prsm's modes there are git's.
func Umask() uint32 { return 0o022 }

// Mine is not known on Windows: ok is false.
func Mine(fi os.FileInfo) (mine bool, dev uint64, ok bool) { return false, 0, false }
