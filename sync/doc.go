// Package sync is the one home for a file's versions and for applying a
// change to a file: the line diff (sync/linediff), a change's line ranges
// and hunks, unified diffs and git's quoted names, 3-way merges that keep
// the user's edits, reverse merges for reject and rewind, applying the
// hunks a user keeps (sync/patch), and the one atomic writer (every file
// prsm writes, the workspace's and its own, goes through WriteFileAtomic
// or WriteFileFrom).
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
