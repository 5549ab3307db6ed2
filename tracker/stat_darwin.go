package tracker

import (
	"io/fs"
	"syscall"
)

// inodeCtime is fi's inode number and status-change time (ns).
func inodeCtime(fi fs.FileInfo) (uint64, int64) {
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		return sys.Ino, sys.Ctimespec.Sec*1e9 + sys.Ctimespec.Nsec
	}
	return 0, 0
}
