// Package tracker owns change detection in session worktrees: the file
// watcher and the stat cache, which paths a look reads, what a shell
// command may write, and deciding which files a tool call changed (before
// and after versions). It finds changes and applies none: everything about
// a file's versions (diffs, ranges, hunks, merges, writes) is package
// sync's.
package tracker
