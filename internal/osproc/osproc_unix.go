//go:build unix

package osproc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// NoFollow are the open flags of a read that must not follow a symbolic
// link in its last element, nor block on a FIFO.
const NoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// Alive reports whether process pid still runs (or runs as another user).
func Alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Stop asks process pid to end (SIGTERM), or ends it (SIGKILL) when kill
// is set.
func Stop(pid int, kill bool) error {
	return gone(syscall.Kill(pid, sig(kill)))
}

// StopGroup is Stop for the process group that pid leads (see Group).
func StopGroup(pid int, kill bool) error {
	return gone(syscall.Kill(-pid, sig(kill)))
}

func sig(kill bool) syscall.Signal {
	if kill {
		return syscall.SIGKILL
	}
	return syscall.SIGTERM
}

func gone(err error) error {
	if errors.Is(err, syscall.ESRCH) {
		return ErrGone
	}
	return err
}

// Group has cmd start as the leader of a process group of its own, so
// that StopGroup reaches what it starts in turn.
func Group(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// Detach has cmd start in a session of its own, apart from the
// terminal's signals, to outlive the command that started it.
func Detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// TryLock takes an exclusive lock on f, or reports false at once when
// another open file holds it. The lock goes with f's close, or a crash.
func TryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// Unlock lets TryLock's lock go.
func Unlock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}

// Umask is the process's umask, set back as it was.
func Umask() uint32 {
	old := syscall.Umask(0)
	syscall.Umask(old)
	return uint32(old) & 0o777
}

// Mine reports whether the file fi describes is owned by this process's
// user, and its device (a file system's id); ok is false where the
// platform does not say.
func Mine(fi os.FileInfo) (mine bool, dev uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false, 0, false
	}
	return int(st.Uid) == os.Geteuid(), uint64(st.Dev), true
}
