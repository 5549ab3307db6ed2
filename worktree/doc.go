// Package worktree owns everything prsm does with git: the one runner that every
// git call goes through, discovering the user's repository and its stable
// identity, snapshotting the workspace (HEAD plus uncommitted and untracked
// files) through a temporary index, files over the size limit as stubs
// (bigsnap.go), and adding and removing the session
// worktrees on branches prsm/<session-id>, and the warm worktree a
// session start takes (warm.go). It never moves the user's HEAD,
// never writes the user's index and never runs destructive commands in the
// user's working tree.
//
// A session worktree belongs to the agent, its .git file included, so git is
// never left to find the repository there: every call in one names git's entry
// for it (--git-dir, --work-tree, found from the repository's side: Linked), the
// runner refuses to run there otherwise, and every call switches off what
// configuration could run (fsmonitor, hooks, filter drivers: filters.go).
// RepairDotGit puts a rewritten .git file back for the user's own git.
package worktree
