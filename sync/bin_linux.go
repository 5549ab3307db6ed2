package sync

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

const canRenameAt = true

// renameAt renames name in the directory from to newname in the directory
// to, never over a file there (RENAME_NOREPLACE); across file systems it
// returns errNoBin.
func renameAt(from *os.File, name string, to *os.File, newname string) error {
	err := unix.Renameat2(int(from.Fd()), name, int(to.Fd()), newname, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EXDEV) {
		return errNoBin
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: name, New: newname, Err: err}
	}
	return nil
}

// deviceOf is the file system f is on.
func deviceOf(f *os.File) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return 0, err
	}
	return uint64(st.Dev), nil
}
