// The Engine's methods that hand the call to the part that does the work
// (doc.go), grouped by part.

package engine

import (
	"context"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// Sessions (sessionStates).

// EndSession removes the session's worktree and branch. While the session
// holds unreviewed work it refuses, unless discard is set: prsm never deletes
// unreviewed work silently.
func (e *Engine) EndSession(ctx context.Context, idOrPrefix string, discard bool) (*prsm.Session, error) {
	return e.sessions.EndSession(ctx, idOrPrefix, discard)
}

// GC applies retention: it drops old automatic checkpoints beyond
// KeepAuto per session (named ones stay), the records, checkpoints and refs
// of ended sessions beyond KeepSessions or beyond the disk budget, and the
// content no longer referenced, then compacts the store. Active sessions
// and their pending work are never touched. git objects freed by the
// dropped refs go at the user's own next git gc.
func (e *Engine) GC(ctx context.Context, req api.GCRequest) (*api.GCReport, error) {
	return e.sessions.GC(ctx, req)
}

// SaveStats stores the stat cache news of every session tracked, each
// session's in one transaction. It takes each session's lock in turn, so
// its caller holds none.
func (e *Engine) SaveStats(ctx context.Context) error {
	return e.sessions.SaveStats(ctx)
}

// Session returns the session named by id or a unique prefix of it, once
// the work its latest tool call left for after its answer (afterAnswer)
// is done: whoever looks at the session next sees that work stored.
func (e *Engine) Session(ctx context.Context, idOrPrefix string) (*prsm.Session, error) {
	return e.sessions.Session(ctx, idOrPrefix)
}

// Sessions lists sessions, all of them when status is empty.
func (e *Engine) Sessions(ctx context.Context, status string) ([]*prsm.Session, error) {
	return e.sessions.Sessions(ctx, status)
}

// StartDiscard starts, as a job, the end of a session with discard (its
// pending records rejected first, a chunk at a time, and the job's
// progress announced), and returns once it runs.
func (e *Engine) StartDiscard(ctx context.Context, idOrPrefix string) (*api.Job, error) {
	return e.sessions.StartDiscard(ctx, idOrPrefix)
}

// StartSession snapshots the workspace and gives a new session its own
// worktree on branch prsm/<id>, seeded with that snapshot.
func (e *Engine) StartSession(ctx context.Context, req api.StartRequest) (*prsm.Session, error) {
	return e.sessions.StartSession(ctx, req)
}

// Tool calls and turns (capturer).

// CompleteToolCall detects what the tool call changed, stores a record per
// changed file, applies each to the workspace (auto mode) and only then
// returns the records. A repeated complete returns the same records, after
// trying again the workspace writes that failed (retrySyncs).
func (e *Engine) CompleteToolCall(ctx context.Context, sessionID, toolCallID string, req api.CompleteRequest) (*api.Records, error) {
	return e.capture.CompleteToolCall(ctx, sessionID, toolCallID, req)
}

// CompleteToolCallLater is CompleteToolCall for a caller that does not read
// the records: an agent's PostToolUse hook, which the agent waits for
// before it goes on. It answers once the call is queued behind the
// session's work after an earlier answer (most often the capture's store,
// still under way while the tool ran), or else once the session's lock is
// taken; the detection, the records and the workspace writes are done
// after the answer, holding that lock, as the capture's store is
// (afterAnswer), so whatever comes next for the session (the next
// capture, a read, a rewind, the turn's end) sees them done. The
// agent's wait is then the answer alone, and the work overlaps the
// agent's next step (its model's answer). A failure after the answer is
// logged, as the agent would not read it anyway; a crash before the
// records are stored leaves the call open, and the next start closes it
// with what it changed (closeCrashed). An ended session's complete is
// done in place.
func (e *Engine) CompleteToolCallLater(ctx context.Context, sessionID, toolCallID string, req api.CompleteRequest) error {
	return e.capture.CompleteToolCallLater(ctx, sessionID, toolCallID, req)
}

// EndTurn is the end of an agent's turn (Claude Code's Stop event). No
// tool of the turn runs any more: a call still in flight lost its
// PostToolUse (its tool was denied) and is closed now, not at the next
// prompt, so it no longer holds up a rewind or the watcher's records.
// What changed in the worktree that no tool call claimed is recorded at
// once, as a Watch call: the turn ends settled. The records made are
// returned.
func (e *Engine) EndTurn(ctx context.Context, sessionID string) ([]*prsm.Record, error) {
	return e.capture.EndTurn(ctx, sessionID)
}

// StartToolCall is the pre-tool capture: it records the call and snapshots
// its candidate paths (the file its arguments name and the worktree's dirty
// set), so complete can tell what the tool changed.
func (e *Engine) StartToolCall(ctx context.Context, sessionID string, req api.ToolCallRequest) (*api.ToolCallAnswer, error) {
	return e.capture.StartToolCall(ctx, sessionID, req)
}

// Turn marks the start of a turn: an automatic checkpoint of the worktree as
// it is, described by the prompt. With automatic checkpoints off (for the
// session or by configuration) the turn is only counted, and the answer is
// nil. A turn that starts where the turn before it started, nothing done
// since, is the same moment: it takes over that turn's checkpoint (see
// retakeTurn) instead of making a second one.
func (e *Engine) Turn(ctx context.Context, sessionID string, req api.TurnRequest) (*prsm.Checkpoint, error) {
	return e.capture.Turn(ctx, sessionID, req)
}

// Records (recorder).

// Content returns one side ("before" or "after") of the record id.
func (e *Engine) Content(ctx context.Context, sessionID, id, side string) ([]byte, *prsm.Record, error) {
	return e.rec.Content(ctx, sessionID, id, side)
}

// EachRecord hands what Records lists to fn, a page of at most n records
// at a time with their contents (FillContent), oldest first: a list of
// any length costs the memory of one page. An error before the first
// page is a bad request's, from which nothing was handed.
func (e *Engine) EachRecord(ctx context.Context, sessionID, status, file string, n int, fn func([]*prsm.Record) error) error {
	return e.rec.EachRecord(ctx, sessionID, status, file, n, fn)
}

// FillContent sets the inline contents of text records up to InlineLimit.
func (e *Engine) FillContent(ctx context.Context, recs []*prsm.Record) error {
	return e.rec.FillContent(ctx, recs)
}

// Records lists a session's records, filtered.
func (e *Engine) Records(ctx context.Context, sessionID, status, file string) ([]*prsm.Record, error) {
	return e.rec.Records(ctx, sessionID, status, file)
}

// Conflicts lists a session's pending changes in conflict with the
// user's edits.
func (e *Engine) Conflicts(ctx context.Context, sessionID string) ([]*prsm.Record, error) {
	return e.rec.Conflicts(ctx, sessionID)
}

// RecordsOf returns the records of id: the record with that id, or every
// record of the tool call with that id.
func (e *Engine) RecordsOf(ctx context.Context, sessionID, id string) ([]*prsm.Record, error) {
	return e.rec.RecordsOf(ctx, sessionID, id)
}

// Review (reviewer).

// Accept accepts the record id (or every record of the tool call id) and,
// in review mode, the earlier pending records of its file first: it is
// AcceptChange with WithEarlier, for callers that mean it (the engine's
// own tests); the API's callers say what they mean.
func (e *Engine) Accept(ctx context.Context, sessionID, id string) (*api.Records, error) {
	return e.review.Accept(ctx, sessionID, id)
}

// AcceptChange accepts the record id (or every record of the tool call
// id). In review mode it also applies it to the workspace, after the
// earlier pending records of the same file; it does so only when
// req.WithEarlier says to, and otherwise, when there are such records,
// refuses (needs_earlier) and changes nothing. With req.DryRun it changes
// nothing and answers what it would take: the records named, and in
// Earlier those earlier ones. Accepting twice is a no-op; accepting a
// rejected record is a conflict.
func (e *Engine) AcceptChange(ctx context.Context, sessionID, id string, req api.AcceptRequest) (*api.Records, error) {
	return e.review.AcceptChange(ctx, sessionID, id, req)
}

// DecideHunks accepts and rejects hunks of the record id (its index
// lists), with the rejects' cascade, and answers with every record it
// changed and the hunks that cascaded. A hunk decided the same way again
// is a no-op; the opposite decision is a conflict. A hunk index the
// record does not have is not found. Where a reject's lines were edited
// since in the worktree or the workspace so that the reverse merge
// conflicts, nothing is written and the answer says so.
//
// DecideHunks lets a decision that settles a review-mode record as
// accepted apply the earlier pending records of its file first, as
// Accept does; DecideHunksWith does so only with req.WithEarlier.
func (e *Engine) DecideHunks(ctx context.Context, sessionID, id string, accept, reject []int) (*api.Records, error) {
	return e.review.DecideHunks(ctx, sessionID, id, accept, reject)
}

// DecideHunksWith is DecideHunks as the API asks for it: a decision that
// settles a review-mode record as accepted, and so would apply earlier
// pending records of its file first, is refused (needs_earlier) unless
// req.WithEarlier says to, and then changes nothing.
func (e *Engine) DecideHunksWith(ctx context.Context, sessionID, id string, req api.HunksRequest) (*api.Records, error) {
	return e.review.DecideHunksWith(ctx, sessionID, id, req)
}

// Diff returns the unified diff of the record id (or of every record of the
// tool call id); binary files are named as binary.
func (e *Engine) Diff(ctx context.Context, sessionID, id string) (string, error) {
	return e.review.Diff(ctx, sessionID, id)
}

// Reject removes the record id's delta (or that of every record of the tool
// call id) from the worktree and the workspace, keeping every other edit,
// and rejects every later pending record of the same file too (the cascade),
// so that the worktree and workspace agree. Rejecting twice is a no-op. It
// runs as a job (GET /jobs/{id} follows it): once written down, it goes to
// its end whatever becomes of ctx.
func (e *Engine) Reject(ctx context.Context, sessionID, id string) (*api.Records, error) {
	return e.review.Reject(ctx, sessionID, id)
}

// Resolve settles the changes of id (a record, or a tool call's) that are
// in conflict, the way how says. A change not in conflict is refused.
func (e *Engine) Resolve(ctx context.Context, sessionID, id, how string) (*api.Records, error) {
	return e.review.Resolve(ctx, sessionID, id, how)
}

// ResolveMarkersNow runs the check for conflicts settled in the editor
// at once (tests; the scanner runs it every ScanInterval).
func (e *Engine) ResolveMarkersNow(ctx context.Context) {
	e.review.ResolveMarkersNow(ctx)
}

// Decisions on many records (bulker).

// Bulk accepts or rejects every pending record of a session (of one file
// when file is set), as a job run here (StartBulk runs it in the
// background), to its end whatever becomes of ctx.
func (e *Engine) Bulk(ctx context.Context, sessionID string, accept bool, file string) (*api.Records, error) {
	return e.bulk.Bulk(ctx, sessionID, accept, file)
}

// BulkAll accepts or rejects every pending record of every session, as a
// job run here (StartBulkAll runs it in the background).
func (e *Engine) BulkAll(ctx context.Context, accept bool) (*api.Records, error) {
	return e.bulk.BulkAll(ctx, accept)
}

// StartBulk plans a bulk accept or reject of the pending records of a
// session (of one file when file is set), writes it down, and starts it
// as a job; it returns once the job runs. A bad request (no session, a
// bad path, a reject that cannot be done) changes nothing.
func (e *Engine) StartBulk(ctx context.Context, sessionID string, accept bool, file string) (*api.Job, error) {
	return e.bulk.StartBulk(ctx, sessionID, accept, file)
}

// StartBulkAll starts BulkAll's job and returns it once it runs.
func (e *Engine) StartBulkAll(ctx context.Context, accept bool) (*api.Job, error) {
	return e.bulk.StartBulkAll(ctx, accept)
}

// Jobs (jobRunner).

// Job returns the job id as it stands.
func (e *Engine) Job(id string) (*api.Job, error) {
	return e.jobs.Job(id)
}

// Rewinds (rewinder).

// Rewind rolls the session back to checkpoint id (rewind.go): the worktree
// becomes the checkpoint exactly, every record takes back the review state
// it had then (the later ones become rewound), and the workspace follows
// by 3-way merges (user edits stay). A safety checkpoint is taken first,
// so the rewind can itself be rewound.
func (e *Engine) Rewind(ctx context.Context, sessionID, id string, dryRun bool) (*api.Plan, error) {
	return e.rewind.Rewind(ctx, sessionID, id, dryRun)
}

// RewindPlan previews rolling the session back to checkpoint id.
func (e *Engine) RewindPlan(ctx context.Context, sessionID, id string) (*api.Plan, error) {
	return e.rewind.RewindPlan(ctx, sessionID, id)
}

// SelectRewind previews or runs a rewind of the records a selector
// picks: an agent's, those after a time, a file's, or the last N.
func (e *Engine) SelectRewind(ctx context.Context, sessionID string, req api.RollbackRequest) (*api.Plan, error) {
	return e.rewind.SelectRewind(ctx, sessionID, req)
}

// Checkpoints (checkpointer).

// Annotate replaces a checkpoint's annotation.
func (e *Engine) Annotate(ctx context.Context, sessionID, id, annotation string) (*prsm.Checkpoint, error) {
	return e.ckpt.Annotate(ctx, sessionID, id, annotation)
}

// Checkpoint returns one checkpoint of a session: by id, unique id
// prefix, or else by its name (`prsm checkpoint create --name before`,
// then `prsm rewind before`), when one checkpoint of the session has it.
func (e *Engine) Checkpoint(ctx context.Context, sessionID, id string) (*prsm.Session, *prsm.Checkpoint, error) {
	return e.ckpt.Checkpoint(ctx, sessionID, id)
}

// Checkpoints lists a session's checkpoints, oldest first; grep keeps those
// whose name or annotation contains it (case-insensitive).
func (e *Engine) Checkpoints(ctx context.Context, sessionID, grep string) ([]*prsm.Checkpoint, error) {
	return e.ckpt.Checkpoints(ctx, sessionID, grep)
}

// CreateCheckpoint makes a named (manual) checkpoint.
func (e *Engine) CreateCheckpoint(ctx context.Context, sessionID string, req api.CheckpointRequest) (*prsm.Checkpoint, error) {
	return e.ckpt.CreateCheckpoint(ctx, sessionID, req)
}

// DeleteCheckpoint forgets a checkpoint (its objects stay reachable from the
// session's chain until gc).
func (e *Engine) DeleteCheckpoint(ctx context.Context, sessionID, id string) (*prsm.Checkpoint, error) {
	return e.ckpt.DeleteCheckpoint(ctx, sessionID, id)
}

// DiffCheckpoints compares checkpoint a with b, or with the worktree's
// current state when b is empty.
func (e *Engine) DiffCheckpoints(ctx context.Context, sessionID, a, b string) (*api.CheckpointDiff, error) {
	return e.ckpt.DiffCheckpoints(ctx, sessionID, a, b)
}

// FlushObjects writes the objects of every checkpoint still pending into
// the repository's object store (a pack, kept until the refs are set),
// points their refs at their commits, and forgets them: after it
// returns, git (and git gc) sees every checkpoint.
// The server runs it in the background after each checkpoint, at start
// (what a crash left) and before it stops.
func (e *Engine) FlushObjects(ctx context.Context) error {
	return e.ckpt.FlushObjects(ctx)
}

// The watcher (watcher).

// Reconcile runs at start: tool calls a crash left open (captured, never
// completed) are closed, what changed in their worktree recorded as
// theirs (closeCrashed); other changes made in session worktrees while
// the server was down become records (agent "unknown", ids
// reconcile-<session8>-N); all are synced; sessions whose worktree vanished
// are ended and say so (their records stay readable); prsm's own worktree
// directories that no active session owns and that hold nothing pending are
// removed. Worktrees with pending work are never deleted.
func (e *Engine) Reconcile(ctx context.Context) (*ReconcileReport, error) {
	return e.watch.Reconcile(ctx)
}

// StartWatching starts the file watcher over every active session's
// worktree. Without it, change detection scans with git status.
func (e *Engine) StartWatching(ctx context.Context) error {
	return e.watch.StartWatching(ctx)
}

// StopWatching stops the watcher.
func (e *Engine) StopWatching() {
	e.watch.StopWatching()
}

// WatchNow records what changed in the session's worktree that no tool call
// claimed, as a pseudo tool call with tool name Watch. While a tool call is
// in flight it does nothing: the change belongs to that call.
func (e *Engine) WatchNow(ctx context.Context, sessionID string) ([]*prsm.Record, error) {
	return e.watch.WatchNow(ctx, sessionID)
}

// Warm worktrees (warmer).

// StartWarming prepares a warm worktree in the background, and another
// after each session start takes it, until ctx ends. A warm worktree a
// previous server left is kept when still clean. With
// PRSM_WARM_WORKTREES=0 none is made, and one left from before is
// removed.
func (e *Engine) StartWarming(ctx context.Context) {
	e.warm.StartWarming(ctx)
}

// Hook health (hookMonitor).

// HookHealth says whose hooks reported for the session and when, and warns
// when they seem not to fire in its worktree: the hooks reported a tool
// call before, and in the current turn changes came only as Watch records.
func (e *Engine) HookHealth(sessionID string) api.HookHealth {
	return e.health.HookHealth(sessionID)
}

// Intents (intentLog).

// RecoverIntents finishes every operation a crash cut off (SPEC rule 6). It
// runs at start, before anything else touches the workspace.
func (e *Engine) RecoverIntents(ctx context.Context) (int, error) {
	return e.intents.RecoverIntents(ctx)
}

// Notices (guard).

// Notices lists, oldest first, what the agents did in the last day that
// prsm could not record, one line each, naming the session.
func (e *Engine) Notices() []string {
	return e.guard.Notices()
}
