//go:build windows

package testgit

import "io/fs"

// diskUse is fi's size: Windows' file info has no allocated blocks.
func diskUse(fi fs.FileInfo) int64 { return fi.Size() }
