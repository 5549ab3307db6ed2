// Package tracker owns change detection in session worktrees: pre/post
// snapshots, deciding which files a tool call changed, and building the records
// (content, ranges, modes) that describe each change.
package tracker
