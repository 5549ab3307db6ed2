//go:build unix

package worktree

import "syscall"

// driverCacheable: cachedDrivers knows every config file git reads here.
const driverCacheable = true

// errNotDir is a path through a file (git reads no config there).
var errNotDir = syscall.ENOTDIR

// canEnter reports whether git may enter the directory (access X_OK,
// as is_git_directory asks).
func canEnter(dir string) bool {
	return syscall.Access(dir, 1) == nil
}

// openNoWait opens a FIFO without waiting for a writer.
const openNoWait = syscall.O_NONBLOCK
