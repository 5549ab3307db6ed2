//go:build unix

package testgit

import (
	"io/fs"
	"syscall"
)

// diskUse is the space fi's file takes on disk: its allocated blocks.
func diskUse(fi fs.FileInfo) int64 { return fi.Sys().(*syscall.Stat_t).Blocks * 512 }
