//go:build !unix

package tracker

// openFilesLimit is not known here.
func openFilesLimit() uint64 { return 0 }
