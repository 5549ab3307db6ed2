//go:build !linux && !darwin

package tracker

// remoteFS is not known here: no worktree counts as remote.
func remoteFS(string) string { return "" }
