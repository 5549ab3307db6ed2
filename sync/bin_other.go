//go:build !linux

package sync

import "os"

// canRenameAt: bins are Linux's alone (renameat2); elsewhere RemoveAll
// unlinks each file.
const canRenameAt = false

func renameAt(from *os.File, name string, to *os.File, newname string) error {
	return errNoBin
}

func deviceOf(f *os.File) (uint64, error) { return 0, nil }
