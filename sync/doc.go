// Package sync owns applying deltas to the user's workspace: atomic writes,
// 3-way merges that keep the user's edits, and reverse merges for reject and
// rewind.
//
// The merge reproduces `git merge-file` exactly for every merge it reports as
// clean, so a user who replays a change with git sees the same file prsm
// wrote. The file operations never leave a half-written file behind: content
// goes to a temporary sibling first and is renamed into place, which is what
// lets a killed server restart without repair work beyond CleanTemp.
//
// Its name shadows the standard library's: across prsm this package is
// imported as plain sync, and the standard library's as stdsync, in every
// file, so sync.X always means this package.
package sync
