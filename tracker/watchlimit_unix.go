//go:build unix

package tracker

import "syscall"

// openFilesLimit is the process's open files limit (ulimit -n; 0 when
// unknown).
func openFilesLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return uint64(r.Cur)
}
