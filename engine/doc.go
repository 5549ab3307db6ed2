// Package engine ties prsm together: it owns the lifecycle of sessions
// (start, end), and is the one place where the store, the session worktrees,
// change tracking and workspace sync meet. Every front end (the HTTP server,
// and through it the CLI, the hook adapter and the extension) drives an
// Engine; none of them touches git or the database directly.
//
// Engine is a facade: each exported method in facade.go hands the call
// to the part that owns the work (a type of its own, named below), and
// each part owns its state and its locks. A part embeds the *Engine for
// what every part uses (the store, the repository, the log, the events,
// the workspace writer, the sessions' states and locks: sessionStates)
// and reaches another part through its field, never through the
// facade. A tool call goes capturer -> recorder -> workspace.Writer. The
// few methods Engine does itself are short: Close, ReadWorkspaceFile,
// WorktreeDir, QuarantineDir.
//
// Which file owns what:
//
//   - engine.go: the Engine and its parts; facade.go: the exported
//     methods that delegate to a part; close.go: Close, and the work
//     Close waits for (background); events.go: the event hub
//     (server-sent events).
//   - sessions (sessionStates): startend.go: starting, listing and
//     ending sessions; session.go: a session's in-memory state and its
//     locking (lockSession, lockActive, heldLock, work after the answer);
//     gc.go: removing what ended sessions left (GC); stats.go: saving the
//     stat caches (SaveStats; the timer that calls it is the engine's).
//   - capture (capturer): toolcalls.go: a tool call's capture and
//     complete; toolargs.go: the paths its arguments name; claim.go:
//     which changes a call may claim, and the patch calls closed without
//     their PostToolUse; early.go: the
//     workspace write started before complete; wsshell.go: what a tool
//     call wrote to the workspace's own path; dangling.go: calls left
//     open; turns.go: turn hooks.
//   - records (recorder): record.go: making and storing a tool call's
//     records and placing them through the workspace writer; records.go:
//     reading records and their contents.
//   - the workspace (package workspace): the one writer of the user's
//     workspace, its per-file locks, the batched writes of a tool call,
//     the order of writes on nested paths and the disk syncs; wsread.go:
//     ReadWorkspaceFile.
//   - review (reviewer): review.go: accept, reject, diffs; hunks.go: a
//     record's hunks and the decisions on them; resolve.go: conflicts
//     left in the workspace and their resolution; states.go: storing and
//     announcing many records' states at once; prefix.go: a change's or a
//     checkpoint's id from a prefix of it, in one session or the one
//     active session that has it (the server's one-request lookups).
//   - bulk decisions (bulker): bulkstart.go: the entry points (one
//     session's pending records, or every session's); bulk.go: a reject
//     of many records, planned from their paths and worked a chunk at a
//     time (one intent, one transaction a chunk, stored beside the next
//     chunk's file work, created files removed a directory at a time into
//     a bin), and an accept of many.
//   - bins (trashCan): trash.go: the bins under ProjectDir/trash that
//     bulk removals rename files into, emptied after the answer, while
//     no bulk job runs, and at the next start when a stop left them.
//   - jobs (jobRunner): jobs.go: the jobs long operations run as
//     (progress events, GET /jobs/{id}, apart from their request).
//   - rewind (rewinder): rewind.go: a rewind to a checkpoint, which
//     restores its worktree, review state (from the records' review
//     history) and workspace, and makes no records; rewindplan.go: its
//     entry point and the checkpoint's files as git checked them out;
//     selectors.go and selectorplan.go: a selector rewind (the records a
//     selector picks, and its worktree writes); rewindrun.go: running
//     either (intent, writes, recovery); rewindstate.go: the files and
//     deltas both read.
//   - checkpoints (checkpointer): checkpoints.go: checkpoints and their
//     diffs; lazyckpt.go and flush.go: building them and writing their
//     objects; checkout.go: a checkpoint's files as git's checkout
//     writes them.
//   - the watcher (watcher): watch.go: watcher records and Reconcile;
//     scan.go: the periodic scan of the sessions the watcher cannot
//     cover (tracker's Limits, or no watcher at all).
//   - warm worktrees (warmer): warm.go: the warm worktree a session start
//     takes; warmwatch.go: the watch that tells it is still clean.
//   - hook health (hookMonitor): hookhealth.go: which agent's hooks
//     reported and when, in memory.
//   - intents (intentLog): intents.go: write-ahead intents and recovery.
//   - guard: gitguard.go: a worktree's .git checked and repaired around
//     the tracker's filter; unseen.go: what the tracker found and could
//     not record, and the notices that say so.
package engine
