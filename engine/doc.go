// Package engine ties prsm together: it owns the lifecycle of sessions
// (start, end), and is the one place where the store, the session worktrees,
// change tracking and workspace sync meet. Every front end (the HTTP server,
// and through it the CLI, the hook adapter and the extension) drives an
// Engine; none of them touches git or the database directly.
//
// Which file owns what:
//
//   - engine.go: the Engine, starting, listing and ending sessions;
//     warm.go: the warm worktree a session start takes; warmwatch.go: the
//     watch that tells a warm worktree is still clean.
//   - session.go: a session's in-memory state and its locking (lockSession,
//     lockActive, heldLock, work after the answer).
//   - events.go: the event hub (server-sent events) and what it announces.
//   - toolcalls.go: a tool call's capture and complete; toolargs.go: the
//     paths its arguments name; dangling.go: calls left open.
//   - record.go: building and storing a record; records.go: reading
//     records and their contents; states.go: storing and announcing many
//     records' states at once; stats.go: saving the stat caches.
//   - workspace (package): the one writer of the user's workspace, its
//     per-file locks, the batched writes of a tool call, the reading of a
//     workspace file, the order of writes on nested paths and the disk
//     syncs. early.go: the write started before complete; wsread.go:
//     ReadWorkspaceFile; wsshell.go: what a tool call wrote to the
//     workspace's own path.
//   - review.go: accept, reject, bulk, diffs; hunks.go: a record's hunks
//     and the decisions on them; resolve.go: conflicts left in the
//     workspace and their resolution; bulk.go: a reject of many
//     records, planned from their paths and worked a chunk at a time
//     (one intent, one transaction a chunk, created files removed a
//     directory at a time); jobs.go: the jobs long operations run as
//     (progress events, GET /jobs/{id}, apart from their request).
//   - turns.go: turn hooks; hookhealth.go: which agent's hooks reported
//     and when, in memory; checkpoints.go: checkpoints and their diffs;
//     lazyckpt.go and flush.go: building them and writing their objects;
//     checkout.go: a checkpoint's files as git's checkout writes them.
//   - rewind.go: a rewind, which restores a checkpoint's worktree, review
//     state (from the records' review history) and workspace, and makes
//     no records; rewindplan.go: its entry point and the checkpoint's
//     files as git checked them out; rollback.go, selectors.go,
//     rollbackplan.go, rollbackrun.go: a selector rollback (plan, intent,
//     writes, run).
//   - intents.go: write-ahead intents and recovery; watch.go, scan.go:
//     watcher records and Reconcile; unseen.go: what the tracker found and
//     could not record; gc.go, gitguard.go: upkeep.
package engine
