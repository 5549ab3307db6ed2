// Package history owns what becomes of the work a user keeps (issue 47):
// who wrote each line of a workspace file (Blame: exact, from the
// records' contents carried forward through every later change, the
// user's edits included), the commits that prsm commit makes of the
// agents' accepted lines (Commit), and the Agent Trace record it writes
// for each of them to git notes under refs/notes/agent-trace (trace.go,
// notes.go), which explain committed lines where the records are gone or
// the clone is new. It reads the store and the records' contents; it
// never changes the workspace's bytes, and the only git state it writes
// is the user's commit, the index entries of the files committed, and
// the notes ref, which it only ever extends.
package history
