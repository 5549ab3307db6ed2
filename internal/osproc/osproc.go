// Package osproc owns what processes, locks and file opens do differently
// from one operating system to another: whether a process still runs,
// stopping it or its group, a detached start, an exclusive lock on a
// file that fails at once when held, the flags of an open that never
// follows a symbolic link, and the process's umask. Unix has them as
// signals, flock and O_NOFOLLOW; Windows as process handles, LockFileEx
// and os.Root's own refusal to leave its directory (docs/reference.md,
// "Platforms", names each choice and what is untested). Nothing else in
// prsm calls syscall for these.
package osproc

import "errors"

// ErrGone is what a signal to a process or group that no longer runs
// returns.
var ErrGone = errors.New("no such process")
