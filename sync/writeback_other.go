//go:build !linux

package sync

import "os"

// startWriteback does nothing here: the early writeback is a Linux (ext4)
// matter (see writeback_linux.go).
func startWriteback(*os.File) {}
