//go:build linux || darwin || freebsd

package bigfile

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

const canSeekHoles = true

const (
	seekData = unix.SEEK_DATA
	seekHole = unix.SEEK_HOLE
)

// isNoData: SEEK_DATA found no data at or after the offset.
func isNoData(err error) bool { return errors.Is(err, syscall.ENXIO) }

func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

func ctimeOf(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return ctimeNs(st)
	}
	return 0
}
