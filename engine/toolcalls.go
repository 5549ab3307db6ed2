package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine/workspace"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/tracker"
)

// capturer follows the agent's hooks: a tool call's capture and complete
// (toolcalls.go), the paths its arguments name (toolargs.go), its early
// workspace write (early.go), what it wrote to the workspace's own path
// (wsshell.go), the calls left open (dangling.go) and the turns
// (turns.go). The records of what a call changed are its recorder's to
// make, and their workspace writes the workspace writer's.
type capturer struct {
	*Engine
	rec *recorder
	ws  *workspace.Writer // for the early write, and the workspace's own path
	// earlyWatched counts the early workspace writes (earlyWrite) the
	// watcher started, earlyRedone those complete started anew
	// (takeEarly); the workspace writer counts those that served.
	earlyWatched, earlyRedone atomic.Int64
}

func checkToolCallID(id string) error {
	if !prsm.ValidToolCallID(id) {
		return prsm.Errorf(prsm.ErrInvalid, "invalid_tool_call_id", "use 1-128 letters, digits, '_', '-' or '.'",
			"invalid tool_call_id %q", id)
	}
	return nil
}

// snapshot is what a pre-tool capture stores: the state of every candidate.
type snapshot map[string]store.FileState

// mayHaveCall reports whether the session may have a tool call id: false
// means it surely does not. The caller holds the session's lock.
func (cr *capturer) mayHaveCall(ctx context.Context, s *prsm.Session, st *sessionState, id string) (bool, error) {
	if st.calls == nil {
		ids, err := store.ToolCallIDs(ctx, cr.DB.Q(), s.ID)
		if err != nil {
			return false, err
		}
		st.calls = ids
	}
	return st.calls[id], nil
}

// insertToolCall stores a new tool call of the session, in q; the caller
// holds the session's lock.
func insertToolCall(ctx context.Context, q store.Querier, st *sessionState, tc *prsm.ToolCall) error {
	if st.calls != nil {
		st.calls[tc.ID] = true
	}
	return store.InsertToolCall(ctx, q, tc)
}

func (cr *capturer) blobs(ctx context.Context) tracker.BlobReader {
	return func(hash string) ([]byte, error) { return store.GetBlob(ctx, cr.DB.Q(), hash) }
}

// StartToolCall is Engine.StartToolCall's work.
func (cr *capturer) StartToolCall(ctx context.Context, sessionID string, req api.ToolCallRequest) (*api.ToolCallAnswer, error) {
	if err := checkToolCallID(req.ToolCallID); err != nil {
		return nil, err
	}
	if err := checkLabel("agent_id", req.AgentID); err != nil {
		return nil, err
	}
	s, st, unlock, err := cr.sessions.lockActive(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	lock := &heldLock{unlock}
	defer lock.release()
	cr.health.hookCall(s.ID, req.AgentID, s.AgentID)
	name := tracker.CanonicalToolName(req.ToolName)
	var old *prsm.ToolCall
	known, err := cr.mayHaveCall(ctx, s, st, req.ToolCallID)
	if err != nil {
		return nil, err
	}
	err = prsm.ErrNotFound
	if known {
		err = cr.DB.ReadWarm(ctx, func(q store.Querier) (err error) {
			old, err = store.GetToolCall(ctx, q, s.ID, req.ToolCallID)
			return err
		})
	}
	if err == nil {
		// A repeated capture is a no-op.
		return &api.ToolCallAnswer{ToolCallID: old.ID, ToolName: old.ToolName}, nil
	} else if !errors.Is(err, prsm.ErrNotFound) {
		return nil, err
	}
	// The pre-tool state of whatever changed since the last look (the
	// watcher's dirty set), and of the files the tool names unless the
	// watcher vouches for them. Only files that differ from what the
	// tracker knows are kept: for the others the pre-tool content is the
	// known one, which the record stores anyway. What else a tool changes
	// is found at complete, so the capture stays cheap: no git process, no
	// read of a file the watcher or the stat cache vouches for.
	paths, exact := st.tracker.Pending(ctx)
	argRel := cr.argPath(s, req.Args, req.Cwd)
	var targets []string
	if name == "Bash" {
		targets = cr.bashPaths(s, req.Args, req.Cwd)
	}
	// A patch (apply_patch, or one sent through the shell) names its
	// files in its text; a Bash patch's files are its targets too.
	patch, patchCall := cr.patchCall(s, name, req.Args, req.Cwd)
	if patchCall && name == "Bash" {
		targets = dedupe(append(targets, patch...))
	}
	if !exact {
		if argRel != "" {
			paths = append(paths, argRel)
		}
		paths = append(paths, targets...)
		paths = append(paths, patch...)
	}
	// What the patches in flight name is looked at whatever the watcher
	// says: a file one wrote before this call is then never this call's
	// (claim), even when the watcher has not reported it yet.
	before, patched := openPatchFiles(st)
	paths = append(paths, patched...)
	paths, err = st.tracker.Filter(ctx, dedupe(paths))
	if err != nil {
		return nil, err
	}
	snap := snapshot{}
	var pre []tracker.Change
	st.tracker.NewLook()
	for _, rel := range paths {
		ch, differs, err := st.tracker.Differs(rel, cr.blobs(ctx))
		if errors.Is(err, tracker.ErrUnsettled) {
			continue // written as it was read: its pre-tool content is unknown
		}
		if err != nil {
			return nil, err
		}
		if differs {
			pre = append(pre, ch)
			snap[rel] = tracker.StateOf(ch.After)
		}
	}
	b, err := json.Marshal(snap)
	if err != nil {
		return nil, err
	}
	agent := req.AgentID
	if agent == "" {
		agent = s.AgentID
	}
	tc := &prsm.ToolCall{
		SessionID: s.ID, ID: req.ToolCallID, ToolName: name, Args: req.Args, AgentID: agent,
		Cwd: req.Cwd, MessageIndex: orTurn(req.MessageIndex, st), Snapshot: b, StartedAt: time.Now().UTC(),
	}
	// The answer does not wait for the store: the call's row and the
	// checkpoint before it are built and committed in the background,
	// while the tool runs, holding the session's lock. Whatever comes next
	// for the session (complete, a rewind, a read through Session)
	// waits for that commit. A capture the store then refuses is logged
	// and complete goes on as if it never arrived: the agent is never
	// stopped by prsm's bookkeeping.
	if st.inflight == nil {
		st.inflight = map[string]*inflightCall{}
	}
	call := &inflightCall{tc: tc, rel: argRel, targets: targets, patchCall: patchCall, patch: patch, before: before}
	if tracker.IsFileChangingTool(name) {
		call.wsPre = cr.workspaceShellPaths(ctx, s, st, name, req.Args, req.Cwd)
	}
	if s.Mode == prsm.ModeAuto && argRel != "" && tracker.IsFileChangingTool(name) {
		call.early = cr.registerEarly(s, st, argRel)
	}
	st.inflight[tc.ID] = call
	target := toolTarget(req.Args, argRel)
	cr.sessions.afterAnswer(s.ID, lock, func() {
		ctx := context.WithoutCancel(ctx)
		// What the tracker knows of the file the tool names: the base of
		// its workspace write, which can then start before complete has
		// found what changed, and while the capture is stored (the write
		// only stages; nothing is placed before complete's record). Its
		// content is stored with the capture, and the record then does
		// not store it again (putBlob) unless a gc sweep ran in between.
		var known *sync.Version
		if call.early != nil {
			if v, err := st.tracker.KnownVersion(argRel, cr.blobs(ctx)); err == nil {
				known = &v
				cr.earlyKnown(st, call.early, v)
			}
		}
		if !cr.storeCapture(ctx, s, st, tc, pre, known, target) && call.early != nil {
			cr.endEarly(st, call.early)
		}
	})
	return &api.ToolCallAnswer{ToolCallID: req.ToolCallID, ToolName: name, Candidates: len(snap)}, nil
}

// storeCapture stores a pre-tool capture: the tool call with the contents
// of pre (and of known, the named file's known version, when given), and
// for a file-changing tool the automatic checkpoint before it, in one
// transaction; target names what the tool works on, for the checkpoint's
// name. The caller holds the session's lock.
func (cr *capturer) storeCapture(ctx context.Context, s *prsm.Session, st *sessionState, tc *prsm.ToolCall, pre []tracker.Change, known *sync.Version, target string) (stored bool) {
	var ckpt *lazyCkpt
	if tracker.IsFileChangingTool(tc.ToolName) {
		var err error
		if ckpt, err = cr.ckpt.lazyCheckpoint(ctx, s, st, tc, target); err != nil {
			// A failed checkpoint must not stop the agent; it is logged.
			cr.Log.Error("auto checkpoint", "session", s.ID, "tool_call", tc.ID, "err", err)
			ckpt = nil
		}
	}
	var knownHash string
	var sweeps uint64
	capture := func(q store.Querier) error {
		for _, ch := range pre {
			if ch.After.Present {
				if _, err := store.PutBlob(ctx, q, ch.After.Content); err != nil {
					return err
				}
			}
		}
		if known != nil && known.Present {
			hash, err := store.PutBlob(ctx, q, known.Content)
			if err != nil {
				return err
			}
			knownHash, sweeps = hash, cr.DB.BlobSweeps()
		}
		return insertToolCall(ctx, q, st, tc)
	}
	err := cr.DB.Tx(ctx, func(q store.Querier) error {
		if err := capture(q); err != nil {
			return err
		}
		if ckpt != nil {
			return ckpt.store(ctx, q)
		}
		return nil
	})
	if err != nil && ckpt != nil {
		cr.Log.Error("auto checkpoint", "session", s.ID, "tool_call", tc.ID, "err", err)
		ckpt = nil
		err = cr.DB.Tx(ctx, capture) // the call without its checkpoint
	}
	if err != nil {
		cr.Log.Error("pre-tool capture not stored: complete will record against the known state", "session", s.ID, "tool_call", tc.ID, "err", err)
		delete(st.inflight, tc.ID)
		return false
	}
	if knownHash != "" {
		st.noteStored(knownHash, sweeps)
	}
	cr.statsChanged(st)
	if ckpt != nil {
		cr.ckpt.lazyStored(ctx, st, ckpt)
	}
	return true
}

func dedupe(paths []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// CompleteToolCall is Engine.CompleteToolCall's work.
func (cr *capturer) CompleteToolCall(ctx context.Context, sessionID, toolCallID string, req api.CompleteRequest) (*api.Records, error) {
	return cr.completeToolCall(ctx, sessionID, toolCallID, req, false)
}

// CompleteToolCallLater is Engine.CompleteToolCallLater's work.
func (cr *capturer) CompleteToolCallLater(ctx context.Context, sessionID, toolCallID string, req api.CompleteRequest) error {
	_, err := cr.completeToolCall(ctx, sessionID, toolCallID, req, true)
	return err
}

func (cr *capturer) completeToolCall(ctx context.Context, sessionID, toolCallID string, req api.CompleteRequest, later bool) (*api.Records, error) {
	if err := checkToolCallID(toolCallID); err != nil {
		return nil, err
	}
	if later && cr.completeQueued(ctx, sessionID, toolCallID, req) {
		return nil, nil
	}
	s, st, unlock, err := cr.sessions.lockSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	lock := &heldLock{unlock}
	defer lock.release()
	if s.Status == prsm.SessionActive && checkLabel("agent_id", req.AgentID) == nil {
		cr.health.hookCall(s.ID, req.AgentID, s.AgentID)
	}
	if later && s.Status == prsm.SessionActive {
		ctx := context.WithoutCancel(ctx)
		cr.sessions.afterAnswer(s.ID, lock, func() { cr.completeAfterAnswer(ctx, s, st, toolCallID, req) })
		return nil, nil
	}
	return cr.completeLocked(ctx, s, st, lock, toolCallID, req, false)
}

// completeQueued queues a later complete behind the work the session runs
// after an answer now (most often its capture's store, still under way
// while the tool ran), so that the complete's answer need not wait for
// the lock that work holds: false when none runs.
func (cr *capturer) completeQueued(ctx context.Context, sessionID, toolCallID string, req api.CompleteRequest) bool {
	st := cr.sessions.loaded(sessionID)
	if st == nil {
		return false
	}
	ctx = context.WithoutCancel(ctx)
	return cr.sessions.thenAfter(sessionID, func() {
		if st.active == nil || st.active.Status != prsm.SessionActive {
			// Ended meanwhile (endState waited for this hold of the lock
			// to end): what the call changed is left to the end's look.
			cr.Log.Warn("complete after the answer: the session ended first", "session", sessionID, "tool_call", toolCallID)
			return
		}
		s := *st.active
		if checkLabel("agent_id", req.AgentID) == nil {
			cr.health.hookCall(s.ID, req.AgentID, s.AgentID)
		}
		cr.completeAfterAnswer(ctx, &s, st, toolCallID, req)
	})
}

// completeAfterAnswer is a later complete's work, in an afterAnswer that
// holds the session's lock: the work gets no lock to release, and runs
// its own end in place. A failure is logged.
func (cr *capturer) completeAfterAnswer(ctx context.Context, s *prsm.Session, st *sessionState, toolCallID string, req api.CompleteRequest) {
	if _, err := cr.completeLocked(ctx, s, st, &heldLock{}, toolCallID, req, true); err != nil {
		cr.Log.Error("complete after the answer", "session", s.ID, "tool_call", toolCallID, "err", err)
	}
}

// completeLocked is the work of a complete, holding the session's lock
// (lock); the sync states and announcements after the records are left to
// afterAnswer, or done in place when inPlace is set (the caller is after
// its answer already).
func (cr *capturer) completeLocked(ctx context.Context, s *prsm.Session, st *sessionState, lock *heldLock, toolCallID string, req api.CompleteRequest, inPlace bool) (*api.Records, error) {
	var err error
	// A call in flight is stored and not completed: its capture's copy
	// serves. Anything else is looked up.
	call := st.inflight[toolCallID]
	var tc *prsm.ToolCall
	if call != nil {
		tc = call.tc
	} else {
		tc, err = store.GetToolCall(ctx, cr.DB.Q(), s.ID, toolCallID)
	}
	switch {
	case call != nil:
		// In flight: go on with it.
	case err == nil && tc.CompletedAt != nil:
		recs, err := store.ListRecords(ctx, cr.DB.Q(), store.RecordFilter{SessionID: s.ID, ToolCallID: toolCallID})
		if err != nil {
			return nil, err
		}
		if err := cr.retrySyncs(ctx, s, recs); err != nil {
			return nil, err
		}
		return cr.rec.answer(ctx, recs)
	case errors.Is(err, prsm.ErrNotFound):
		// The pre-tool capture never arrived: the tracker's known state is
		// the base (path 2).
		if err := requireActive(s); err != nil {
			return nil, err
		}
		if err := checkLabel("agent_id", req.AgentID); err != nil {
			return nil, err
		}
		agent := req.AgentID
		if agent == "" {
			agent = s.AgentID
		}
		tc = &prsm.ToolCall{SessionID: s.ID, ID: toolCallID, ToolName: tracker.CanonicalToolName(req.ToolName),
			Args: req.Args, AgentID: agent, Cwd: req.Cwd, MessageIndex: orTurn(req.MessageIndex, st), StartedAt: time.Now().UTC()}
		if err := insertToolCall(ctx, cr.DB.Q(), st, tc); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	}
	if err := requireActive(s); err != nil {
		return nil, err
	}
	if call != nil && call.early != nil {
		cr.claimEarly(st, call.early)
	}
	if call != nil && len(call.wsPre) > 0 {
		call.moved = cr.workspaceShellWrites(s, st, call.wsPre)
	}
	recs, finish, err := cr.detectAndRecord(ctx, s, st, tc, call, req.Result, false)
	if call != nil && len(call.wsPre) > 0 {
		cr.settleWorkspaceShell(s, st, call.wsPre, call.moved, recs)
	}
	delete(st.inflight, tc.ID)
	if se := (*syncError)(nil); call != nil && len(call.before) > 0 && (err == nil || errors.As(err, &se)) {
		// The patches in flight when it started have ended.
		closed, cerr := cr.closePatches(ctx, s, st, call, decodeSnapshot(tc.Snapshot))
		finish = both(finish, closed)
		if cerr != nil {
			cr.Log.Error("close patch calls", "session", s.ID, "tool_call", tc.ID, "err", cerr)
		}
	}
	if err != nil {
		finish()
		return nil, err
	}
	if inPlace {
		// No answer is read: the warnings are logged (reportUnseen), and
		// the records' contents are not read for it.
		cr.guard.reportUnseen(s, st)
		finish()
		return nil, nil
	}
	ans, err := cr.rec.answer(ctx, recs)
	if ans != nil {
		ans.Warnings = cr.guard.reportUnseen(s, st)
	}
	// The sync states are stored, and the records announced, after the
	// answer, as a capture is: the workspace has the changes already.
	cr.sessions.afterAnswer(s.ID, lock, finish)
	return ans, err
}

// retrySyncs tries again the workspace writes of a completed call's
// records that an auto-mode complete stored and could not apply (a full
// disk: see transient); their sync_state pending_review is then the
// sync's intent, as at a start (recoverSyncs). A repeated complete is the
// caller trying again, so it gets the writes tried again and the records'
// new states, not the failure as it was. recs are updated in place; a
// write that fails again the same way gives a syncError. The caller holds
// the session's lock.
func (cr *capturer) retrySyncs(ctx context.Context, s *prsm.Session, recs []*prsm.Record) error {
	if s.Status != prsm.SessionActive || s.Mode != prsm.ModeAuto {
		return nil
	}
	var done []stateChange
	var failed []error
	for _, r := range recs {
		if r.Status != prsm.StatusPending || r.SyncState != prsm.SyncPendingReview {
			continue
		}
		before, after, err := cr.rec.versions(ctx, r)
		if err != nil {
			return err
		}
		state, err := cr.ws.Sync(s.ID, r.RelPath, before, after)
		if err != nil && transient(err) {
			cr.Log.Error("sync failed again", "session", s.ID, "record", r.ID, "err", err)
			failed = append(failed, fmt.Errorf("%s: %w", r.RelPath, err))
			continue
		}
		if err != nil {
			// As record: a path prsm may never write keeps the workspace
			// file as it is.
			cr.Log.Error("sync refused: workspace file left as it is", "session", s.ID, "record", r.ID, "err", err)
		}
		done = append(done, stateChange{r: r, status: r.Status, syncSt: state})
	}
	if err := cr.review.setStates(ctx, done, ""); err != nil {
		return err
	}
	if len(done) > 0 {
		cr.publishSession(ctx, s.ID)
	}
	if len(failed) > 0 {
		return &syncError{errs: failed}
	}
	return nil
}

// detectAndRecord is the heart of tracking: find the changed files, store
// their records and the new known state in one transaction, then sync.
// finish is record's. full looks at the whole worktree (git status), not
// only at what the watcher saw.
// The early write of the call's slot (the workspace write of the file the
// tool names, started before the changes are known) is taken once they
// are; record uses it if it turns out to be the one change, else drops
// it.
func (cr *capturer) detectAndRecord(ctx context.Context, s *prsm.Session, st *sessionState, tc *prsm.ToolCall, call *inflightCall, result []byte, full bool) (recs []*prsm.Record, finish func(), err error) {
	finish = func() {}
	var early *earlyWrite
	defer func() {
		if err == nil {
			return
		}
		if early != nil {
			early.Drop() // no-op once record settled it
		} else if call != nil && call.early != nil {
			cr.endEarly(st, call.early)
		}
	}()
	var snap snapshot
	if len(tc.Snapshot) > 0 {
		if err := json.Unmarshal(tc.Snapshot, &snap); err != nil {
			return nil, finish, fmt.Errorf("decode snapshot of %s: %w", tc.ID, err)
		}
	}
	extra := make([]string, 0, len(snap)+1)
	for rel := range snap {
		extra = append(extra, rel)
	}
	p := ""
	if call != nil {
		p = call.rel // worked out by the capture
	} else {
		p = cr.argPath(s, tc.Args, tc.Cwd)
	}
	if p != "" {
		extra = append(extra, p)
	}
	if call != nil {
		for rel := range call.moved {
			extra = append(extra, rel)
		}
		extra = append(extra, call.patch...)
	}
	changes, ack, err := cr.detect(ctx, st, extra, full, 0)
	if err != nil {
		return nil, finish, err
	}
	var targets []string
	if call != nil {
		targets = call.targets
	} else if tc.ToolName == "Bash" {
		targets = cr.bashPaths(s, tc.Args, tc.Cwd)
	}
	names := call // what the call names: its capture's, else from its args
	if names == nil {
		names = &inflightCall{tc: tc, targets: targets}
	}
	changes, left, notes := claim(st, tc, p, names, snap, changes)
	if len(notes) > 0 {
		if st.notes == nil {
			st.notes = map[string]string{}
		}
		for rel, n := range notes {
			st.notes[rel] = joinNotes(st.notes[rel], n)
		}
		defer func() {
			for rel := range notes {
				delete(st.notes, rel)
			}
		}()
	}
	if call != nil && call.early != nil {
		early = cr.takeEarly(st, call.early, changes)
	}
	suffix := len(changes) > 1 || tc.ToolName == "Bash" || tc.ToolName == "Watch"
	recs, finish, err = cr.rec.record(ctx, s, st, tc, changes, snap, early, func(i int) string {
		if suffix {
			return fmt.Sprintf("%s:%d", tc.ID, i)
		}
		return tc.ID
	}, result, true)
	if se := (*syncError)(nil); err != nil && !errors.As(err, &se) {
		return nil, finish, err
	}
	// Recorded (a syncError: only the workspace is behind, as the
	// records say).
	ack()
	st.tracker.Unclaimed(left)
	if err == nil && call == nil && len(recs) == 0 && p != "" && !suffix {
		if r, aerr := cr.adoptWatch(ctx, s, tc, p); aerr != nil {
			cr.Log.Warn("adopt the watcher's record", "session", s.ID, "tool_call", tc.ID, "err", aerr)
		} else if r != nil {
			recs = append(recs, r)
		}
	}
	return recs, finish, err
}

// adoptWatch gives tool call tc the watcher's record of rel, the file it
// names, when the watcher got there first. An agent that reports a file
// edit only afterwards (Cursor's afterFileEdit, a complete with no
// capture) may do so after the watcher's quiet time, on a busy machine
// above all; the edit is then already recorded, as a Watch call's, and
// the complete finds nothing of its own. The record becomes tc's when it
// is rel's newest, of the same turn, still pending and never decided:
// its content is what the complete found, since it found no change.
func (cr *capturer) adoptWatch(ctx context.Context, s *prsm.Session, tc *prsm.ToolCall, rel string) (*prsm.Record, error) {
	recs, err := store.ListRecords(ctx, cr.DB.Q(), store.RecordFilter{SessionID: s.ID, RelPath: rel})
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	r := recs[len(recs)-1]
	if r.ToolName != "Watch" || r.MessageIndex != tc.MessageIndex || r.Status != prsm.StatusPending {
		return nil, nil
	}
	var ok bool
	err = cr.DB.Tx(ctx, func(q store.Querier) error {
		ok, err = store.Reattribute(ctx, q, s.ID, r.Seq, tc.ID, tc.ID, tc.ToolName, tc.AgentID)
		return err
	})
	if err != nil || !ok {
		return nil, err
	}
	r, err = store.GetRecord(ctx, cr.DB.Q(), s.ID, tc.ID)
	if err != nil {
		return nil, err
	}
	cr.review.publishStatus(r)
	cr.publishSession(ctx, s.ID)
	return r, nil
}

// detect finds the changed files: the watcher's dirty set (or a git status
// scan when there is no watcher, when events were lost, or when full is
// set) plus extra paths, less scratch and ignored files. Call ack once the
// changes are recorded. A file still being written (written while it was
// read, or less than quiet before) is no change yet: the watcher looks
// at it again (watchAgain).
func (cr *capturer) detect(ctx context.Context, st *sessionState, extra []string, full bool, quiet time.Duration) ([]tracker.Change, func(), error) {
	var paths []string
	ack := func() {}
	var err error
	if full {
		paths, err = st.tracker.Dirty(ctx)
	} else {
		paths, ack, err = st.tracker.Candidates(ctx)
	}
	if err != nil {
		return nil, nil, err
	}
	paths, err = cr.guard.filter(ctx, st, dedupe(append(paths, extra...)))
	if err != nil {
		return nil, nil, err
	}
	changes, unsettled, err := st.tracker.Detect(paths, cr.blobs(ctx), quiet)
	if err != nil {
		return nil, nil, err
	}
	if len(unsettled) > 0 {
		cr.watch.watchAgain(st, unsettled)
	}
	return changes, ack, nil
}
