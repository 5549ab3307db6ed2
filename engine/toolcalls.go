package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	stdsync "sync"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/internal/bigfile"
	"github.com/prsm-dev/prsm/internal/safepath"
	"github.com/prsm-dev/prsm/store"
	prsmsync "github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/tracker"
)

func checkToolCallID(id string) error {
	if !prsm.ValidToolCallID(id) {
		return prsm.Errorf(prsm.ErrInvalid, "invalid_tool_call_id", "use 1-128 letters, digits, '_', '-' or '.'",
			"invalid tool_call_id %q", id)
	}
	return nil
}

// snapshot is what a pre-tool capture stores: the state of every candidate.
type snapshot map[string]store.FileState

// sessionState is the engine's in-memory state of an active session.
type sessionState struct {
	mu      stdsync.Mutex
	tracker *tracker.Session
	// active is the session as it was read when it was active, for
	// lockSession (nil if it was not): what a tool call reads of it
	// (id, mode, worktree) never changes, and a session that ends loses
	// its state. Its PendingCount is not kept.
	active *prsm.Session
	// ckptTree and ckptCommit are the newest built checkpoint's, the
	// start of the next one's incremental tree; lazy are the checkpoints
	// stored after it and not built yet (lazyckpt.go). ckptMu guards the
	// three; whoever builds on ckptTree under the session's lock builds
	// the lazy ones first (materialize), and only captures add to lazy.
	ckptMu               stdsync.Mutex
	ckptTree, ckptCommit string
	lazy                 []*lazyCkpt
	// turn is the newest message index: tool calls that do not say theirs
	// belong to it.
	turn int
	// inflight holds the tool calls captured and not yet completed: while
	// any runs, changes belong to it, not to a Watch record.
	inflight map[string]*inflightCall
	// watchTimer debounces Watch records (one per quiet period).
	timerMu    stdsync.Mutex
	watchTimer *time.Timer
	// early holds the early writes the watcher may start, by file
	// (earlySlot); earlyMu guards them, apart from the session's lock.
	earlyMu stdsync.Mutex
	early   map[string]*earlySlot
	// autoCkpt is the session's auto_checkpoints setting, once read.
	autoCkpt *bool
	// stored are blobs a capture stored for its complete's record (the
	// known content of the file the tool names), by hash, with the store's
	// BlobSweeps then: while no sweep ran since, the record's insert of
	// the blob is skipped. Guarded by mu.
	stored map[string]uint64
	// openChecked: the store's open tool calls (captured before a restart)
	// were closed, at start (closeCrashed) or by a turn (closeDangling).
	// Guarded by mu.
	openChecked bool
	// calls holds the ids of the session's tool calls (nil until a
	// capture needs it): a capture whose id is not there is new, with no
	// query. An id is added before its row is inserted, so the set may
	// hold an id the store refused, never miss one. Guarded by mu.
	calls map[string]bool
}

// mayHaveCall reports whether the session may have a tool call id: false
// means it surely does not. The caller holds the session's lock.
func (e *Engine) mayHaveCall(ctx context.Context, s *prsm.Session, st *sessionState, id string) (bool, error) {
	if st.calls == nil {
		ids, err := store.ToolCallIDs(ctx, e.DB.Q(), s.ID)
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

// storedBlobsMax bounds st.stored: the captures of calls that never
// complete leave theirs behind.
const storedBlobsMax = 64

// noteStored remembers that the blob hash was stored by a committed
// transaction that read sweeps as the store's BlobSweeps; the caller
// holds the session's lock.
func (st *sessionState) noteStored(hash string, sweeps uint64) {
	if st.stored == nil || len(st.stored) >= storedBlobsMax {
		st.stored = map[string]uint64{}
	}
	st.stored[hash] = sweeps
}

// putBlob stores data for a record, in the transaction running now,
// unless a capture stored it and no sweep of unreferenced blobs ran since
// (the insert was a tenth of complete's transaction); it returns the
// blob's hash.
func (e *Engine) putBlob(ctx context.Context, q store.Querier, st *sessionState, data []byte) (string, error) {
	hash := store.HashBlob(data)
	if sweeps, ok := st.stored[hash]; ok {
		delete(st.stored, hash)
		if sweeps == e.DB.BlobSweeps() {
			return hash, nil
		}
	}
	return store.PutBlob(ctx, q, data)
}

// inflightCall is a captured tool call not yet completed.
type inflightCall struct {
	// tc is the call as its capture stored it, and rel the worktree
	// file its arguments name (""): complete reads neither again.
	tc  *prsm.ToolCall
	rel string
	// early is the workspace write of the file the tool names (auto
	// mode; nil otherwise), started before complete knows the change.
	early *earlySlot
}

func (e *Engine) state(ctx context.Context, s *prsm.Session) (*sessionState, error) {
	e.statesMu.Lock()
	defer e.statesMu.Unlock()
	if st, ok := e.states[s.ID]; ok {
		return st, nil
	}
	known, err := store.ListFileStates(ctx, e.DB.Q(), s.ID)
	if err != nil {
		return nil, err
	}
	stats, err := store.ListStats(ctx, e.DB.Q(), s.ID)
	if err != nil {
		return nil, err
	}
	st := &sessionState{tracker: &tracker.Session{
		ID: s.ID, Worktree: s.WorktreePath, Base: s.BaseCommit, Repo: e.Repo, Known: known,
		Stats: tracker.NewStatCache(stats), Log: e.Log, Exclude: e.stateInWorkspace(),
	}, inflight: map[string]*inflightCall{}}
	if s.Status == prsm.SessionActive {
		active := *s
		st.active = &active
	}
	if e.Watcher != nil && s.Status == prsm.SessionActive {
		if err := e.Watcher.Add(s.ID, s.WorktreePath); err != nil {
			return nil, err
		}
		st.tracker.Watcher = e.Watcher
	}
	cps, err := store.ListCheckpoints(ctx, e.DB.Q(), s.ID)
	if err != nil {
		return nil, err
	}
	for _, c := range cps {
		st.turn = max(st.turn, c.MessageIndex)
	}
	// With automatic checkpoints off, the tool calls keep the count.
	n, err := store.MaxMessageIndex(ctx, e.DB.Q(), s.ID)
	if err != nil {
		return nil, err
	}
	st.turn = max(st.turn, n)
	if err := loadLazy(ctx, e.DB.Q(), st); err != nil {
		return nil, err
	}
	e.states[s.ID] = st
	if s.Status == prsm.SessionActive {
		e.warmBase(s.BaseCommit)
	}
	return st, nil
}

// lockSession resolves id and locks the session. The session returned
// may not have its PendingCount: read e.Session for that. An active
// session whose state is loaded is not read from the store again (tool
// calls come often, and the read was a tenth of a capture).
func (e *Engine) lockSession(ctx context.Context, id string) (*prsm.Session, *sessionState, func(), error) {
	e.statesMu.Lock()
	st := e.states[id]
	e.statesMu.Unlock()
	if st != nil && st.active != nil {
		e.awaitAnswered(id)
		st.mu.Lock()
		s := *st.active
		return &s, st, st.mu.Unlock, nil
	}
	s, err := e.Session(ctx, id)
	if err != nil {
		return nil, nil, nil, err
	}
	if st, err = e.state(ctx, s); err != nil {
		return nil, nil, nil, err
	}
	st.mu.Lock()
	return s, st, st.mu.Unlock, nil
}

func requireActive(s *prsm.Session) error {
	if s.Status != prsm.SessionActive {
		return prsm.Errorf(prsm.ErrConflict, "session_ended", "start a new session", "session %s has ended", s.ID)
	}
	return nil
}

func (e *Engine) blobs(ctx context.Context) tracker.BlobReader {
	return func(hash string) ([]byte, error) { return store.GetBlob(ctx, e.DB.Q(), hash) }
}

// argPath finds the file a tool's arguments name and makes it relative to
// the worktree. Paths outside the worktree (and the workspace, which agents
// sometimes name instead) are ignored with a warning: they are never read.
func (e *Engine) argPath(s *prsm.Session, args json.RawMessage, cwd string) string {
	if len(args) == 0 {
		return ""
	}
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return ""
	}
	var p string
	for _, k := range []string{"file_path", "notebook_path", "path", "target_file", "filename", "file"} {
		if v, ok := m[k].(string); ok && v != "" {
			p = v
			break
		}
	}
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		base := s.WorktreePath
		if cwd != "" && filepath.IsAbs(cwd) {
			if _, err := safepath.Rel(s.WorktreePath, cwd); err == nil || filepath.Clean(cwd) == s.WorktreePath {
				base = cwd
			}
		}
		p = filepath.Join(base, p)
	}
	for _, root := range []string{s.WorktreePath, e.Repo.Root} {
		if rel, err := safepath.Rel(root, p); err == nil {
			return rel
		}
	}
	e.Log.Warn("tool argument path outside the session's worktree ignored", "session", s.ID, "path", p)
	return ""
}

// maxBashTargets bounds the paths one shell command adds to a capture.
const maxBashTargets = 1000

// bashPaths are the worktree files a Bash call's command names as targets
// (sed -i, redirects, mv, rm, ...), found by a real shell parser. They are
// only candidates: the watcher and the scan after the call decide what
// changed. Paths outside the worktree are dropped, never read.
func (e *Engine) bashPaths(s *prsm.Session, args json.RawMessage, cwd string) []string {
	var m struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(args, &m) != nil || m.Command == "" {
		return nil
	}
	dir := s.WorktreePath
	if cwd != "" && filepath.IsAbs(cwd) {
		if _, err := safepath.Rel(s.WorktreePath, cwd); err == nil {
			dir = cwd
		}
	}
	var out []string
	for _, p := range tracker.BashTargets(m.Command, dir) {
		if len(out) == maxBashTargets {
			break
		}
		for _, root := range []string{s.WorktreePath, e.Repo.Root} {
			if rel, err := safepath.Rel(root, p); err == nil {
				out = append(out, rel)
				break
			}
		}
	}
	return out
}

// StartToolCall is the pre-tool capture: it records the call and snapshots
// its candidate paths (the file its arguments name and the worktree's dirty
// set), so complete can tell what the tool changed.
func (e *Engine) StartToolCall(ctx context.Context, sessionID string, req ToolCallRequest) (*ToolCallAnswer, error) {
	if err := checkToolCallID(req.ToolCallID); err != nil {
		return nil, err
	}
	if err := checkLabel("agent_id", req.AgentID); err != nil {
		return nil, err
	}
	s, st, unlock, err := e.lockSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	lock := &heldLock{unlock}
	defer lock.release()
	if err := requireActive(s); err != nil {
		return nil, err
	}
	name := tracker.CanonicalToolName(req.ToolName)
	var old *prsm.ToolCall
	known, err := e.mayHaveCall(ctx, s, st, req.ToolCallID)
	if err != nil {
		return nil, err
	}
	err = prsm.ErrNotFound
	if known {
		err = e.DB.ReadWarm(ctx, func(q store.Querier) (err error) {
			old, err = store.GetToolCall(ctx, q, s.ID, req.ToolCallID)
			return err
		})
	}
	if err == nil {
		// A repeated capture is a no-op.
		return &ToolCallAnswer{ToolCallID: old.ID, ToolName: old.ToolName}, nil
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
	argRel := e.argPath(s, req.Args, req.Cwd)
	if !exact {
		if argRel != "" {
			paths = append(paths, argRel)
		}
		if name == "Bash" {
			paths = append(paths, e.bashPaths(s, req.Args, req.Cwd)...)
		}
	}
	paths, err = st.tracker.Filter(ctx, dedupe(paths))
	if err != nil {
		return nil, err
	}
	snap := snapshot{}
	var pre []tracker.Change
	st.tracker.NewLook()
	for _, rel := range paths {
		ch, differs, err := st.tracker.Differs(rel, e.blobs(ctx))
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
	// for the session (complete, a rollback, a read through e.Session)
	// waits for that commit. A capture the store then refuses is logged
	// and complete goes on as if it never arrived: the agent is never
	// stopped by prsm's bookkeeping.
	if st.inflight == nil {
		st.inflight = map[string]*inflightCall{}
	}
	call := &inflightCall{tc: tc, rel: argRel}
	if s.Mode == prsm.ModeAuto && argRel != "" && tracker.IsFileChangingTool(name) {
		call.early = e.registerEarly(s, st, argRel)
	}
	st.inflight[tc.ID] = call
	target := toolTarget(req.Args, argRel)
	e.afterAnswer(s.ID, lock, func() {
		ctx := context.WithoutCancel(ctx)
		// What the tracker knows of the file the tool names: the base of
		// its workspace write, which can then start before complete has
		// found what changed, and while the capture is stored (the write
		// only stages; nothing is placed before complete's record). Its
		// content is stored with the capture, and the record then does
		// not store it again (putBlob) unless a gc sweep ran in between.
		var known *prsmsync.Version
		if call.early != nil {
			if v, err := st.tracker.KnownVersion(argRel, e.blobs(ctx)); err == nil {
				known = &v
				e.earlyKnown(st, call.early, v)
			}
		}
		if !e.storeCapture(ctx, s, st, tc, pre, known, target) && call.early != nil {
			e.endEarly(st, call.early)
		}
	})
	return &ToolCallAnswer{ToolCallID: req.ToolCallID, ToolName: name, Candidates: len(snap)}, nil
}

// storeCapture stores a pre-tool capture: the tool call with the contents
// of pre (and of known, the named file's known version, when given), and
// for a file-changing tool the automatic checkpoint before it, in one
// transaction; target names what the tool works on, for the checkpoint's
// name. The caller holds the session's lock.
func (e *Engine) storeCapture(ctx context.Context, s *prsm.Session, st *sessionState, tc *prsm.ToolCall, pre []tracker.Change, known *prsmsync.Version, target string) (stored bool) {
	var ckpt *lazyCkpt
	if tracker.IsFileChangingTool(tc.ToolName) {
		var err error
		if ckpt, err = e.lazyCheckpoint(ctx, s, st, tc, target); err != nil {
			// A failed checkpoint must not stop the agent; it is logged.
			e.Log.Error("auto checkpoint", "session", s.ID, "tool_call", tc.ID, "err", err)
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
			knownHash, sweeps = hash, e.DB.BlobSweeps()
		}
		return insertToolCall(ctx, q, st, tc)
	}
	err := e.DB.Tx(ctx, func(q store.Querier) error {
		if err := capture(q); err != nil {
			return err
		}
		if ckpt != nil {
			return ckpt.store(ctx, q)
		}
		return nil
	})
	if err != nil && ckpt != nil {
		e.Log.Error("auto checkpoint", "session", s.ID, "tool_call", tc.ID, "err", err)
		ckpt = nil
		err = e.DB.Tx(ctx, capture) // the call without its checkpoint
	}
	if err != nil {
		e.Log.Error("pre-tool capture not stored: complete will record against the known state", "session", s.ID, "tool_call", tc.ID, "err", err)
		delete(st.inflight, tc.ID)
		return false
	}
	if knownHash != "" {
		st.noteStored(knownHash, sweeps)
	}
	e.statsChanged(st)
	if ckpt != nil {
		e.lazyStored(ctx, st, ckpt)
	}
	return true
}

// afterAnswer runs fn, the part of a tool call's work that its answer
// does not wait for, in the background, holding the session's lock (taken
// over from lock) until fn returns. e.Session waits for it: whatever comes
// next for session id, and every read of it, sees fn's work done.
func (e *Engine) afterAnswer(id string, lock *heldLock, fn func()) {
	unlock := lock.handOver()
	done := make(chan struct{})
	e.statesMu.Lock()
	e.finishing[id] = done
	e.statesMu.Unlock()
	e.background(func() {
		defer close(done)
		defer unlock()
		fn()
	})
}

// heldLock is a session's lock as a tool call holds it: release lets it go
// (once), unless afterAnswer took it over for the work after the answer.
type heldLock struct{ unlock func() }

func (l *heldLock) release() {
	if l.unlock != nil {
		l.unlock()
		l.unlock = nil
	}
}

// handOver takes the lock over from its holder: release does nothing
// after it.
func (l *heldLock) handOver() func() {
	unlock := l.unlock
	l.unlock = nil
	return unlock
}

// awaitAllAnswered waits until the work afterAnswer runs is done for
// every session, for what reads across sessions.
func (e *Engine) awaitAllAnswered() {
	e.statesMu.Lock()
	ids := make([]string, 0, len(e.finishing))
	for id := range e.finishing {
		ids = append(ids, id)
	}
	e.statesMu.Unlock()
	for _, id := range ids {
		e.awaitAnswered(id)
	}
}

// awaitAnswered waits until the work afterAnswer runs for session id is
// done.
func (e *Engine) awaitAnswered(id string) {
	e.statesMu.Lock()
	done := e.finishing[id]
	e.statesMu.Unlock()
	if done == nil {
		return
	}
	<-done
	e.statesMu.Lock()
	if e.finishing[id] == done {
		delete(e.finishing, id)
	}
	e.statesMu.Unlock()
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

// CompleteToolCall detects what the tool call changed, stores a record per
// changed file, applies each to the workspace (auto mode) and only then
// returns the records. A repeated complete returns the same records, after
// trying again the workspace writes that failed (retrySyncs).
func (e *Engine) CompleteToolCall(ctx context.Context, sessionID, toolCallID string, req CompleteRequest) (*Records, error) {
	if err := checkToolCallID(toolCallID); err != nil {
		return nil, err
	}
	s, st, unlock, err := e.lockSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	lock := &heldLock{unlock}
	defer lock.release()
	// A call in flight is stored and not completed: its capture's copy
	// serves. Anything else is looked up.
	call := st.inflight[toolCallID]
	var tc *prsm.ToolCall
	if call != nil {
		tc = call.tc
	} else {
		tc, err = store.GetToolCall(ctx, e.DB.Q(), s.ID, toolCallID)
	}
	switch {
	case call != nil:
		// In flight: go on with it.
	case err == nil && tc.CompletedAt != nil:
		recs, err := store.ListRecords(ctx, e.DB.Q(), store.RecordFilter{SessionID: s.ID, ToolCallID: toolCallID})
		if err != nil {
			return nil, err
		}
		if err := e.retrySyncs(ctx, s, recs); err != nil {
			return nil, err
		}
		return e.answer(ctx, recs)
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
		if err := insertToolCall(ctx, e.DB.Q(), st, tc); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	}
	if err := requireActive(s); err != nil {
		return nil, err
	}
	if call != nil && call.early != nil {
		e.claimEarly(st, call.early)
	}
	recs, finish, err := e.detectAndRecord(ctx, s, st, tc, call, req.Result, false)
	delete(st.inflight, tc.ID)
	if err != nil {
		finish()
		return nil, err
	}
	ans, err := e.answer(ctx, recs)
	if ans != nil {
		ans.Warnings = e.reportUnseen(s, st)
	}
	// The sync states are stored, and the records announced, after the
	// answer, as a capture is: the workspace has the changes already.
	e.afterAnswer(s.ID, lock, finish)
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
func (e *Engine) retrySyncs(ctx context.Context, s *prsm.Session, recs []*prsm.Record) error {
	if s.Status != prsm.SessionActive || s.Mode != prsm.ModeAuto {
		return nil
	}
	var done []stateChange
	var failed []error
	for _, r := range recs {
		if r.Status != prsm.StatusPending || r.SyncState != prsm.SyncPendingReview {
			continue
		}
		before, after, err := e.versions(ctx, r)
		if err != nil {
			return err
		}
		state, err := e.syncToWorkspace(ctx, s, r.RelPath, before, after)
		if err != nil && transient(err) {
			e.Log.Error("sync failed again", "session", s.ID, "record", r.ID, "err", err)
			failed = append(failed, fmt.Errorf("%s: %w", r.RelPath, err))
			continue
		}
		if err != nil {
			// As record: a path prsm may never write keeps the workspace
			// file as it is.
			e.Log.Error("sync refused: workspace file left as it is", "session", s.ID, "record", r.ID, "err", err)
		}
		done = append(done, stateChange{r: r, status: r.Status, syncSt: state})
	}
	if err := e.setStates(ctx, done, ""); err != nil {
		return err
	}
	if len(done) > 0 {
		e.publishSession(ctx, s.ID)
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
func (e *Engine) detectAndRecord(ctx context.Context, s *prsm.Session, st *sessionState, tc *prsm.ToolCall, call *inflightCall, result []byte, full bool) (recs []*prsm.Record, finish func(), err error) {
	finish = func() {}
	var early *earlyWrite
	defer func() {
		if err == nil {
			return
		}
		if early != nil {
			early.drop() // no-op once record settled it
		} else if call != nil && call.early != nil {
			e.endEarly(st, call.early)
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
		p = e.argPath(s, tc.Args, tc.Cwd)
	}
	if p != "" {
		extra = append(extra, p)
	}
	changes, ack, err := e.detect(ctx, st, extra, full)
	if err != nil {
		return nil, finish, err
	}
	changes, left := claim(st, tc, p, changes)
	if call != nil && call.early != nil {
		early = e.takeEarly(st, call.early, changes)
	}
	suffix := len(changes) > 1 || tc.ToolName == "Bash" || tc.ToolName == "Watch"
	recs, finish, err = e.record(ctx, s, st, tc, changes, snap, early, func(i int) string {
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
	return recs, finish, err
}

// maxToolCall is how long a tool call may run: Claude Code's longest
// Bash timeout. A call in flight for longer lost its PostToolUse.
const maxToolCall = 10 * time.Minute

// closeDangling closes the session's tool calls in flight for longer than
// age (every one, for 0: a new prompt comes once the agent's tools are
// done). Such a call sends no PostToolUse: its tool was denied, or its
// agent died. It is stored complete, with no records: it no longer holds
// up Watch records, rollbacks, or the next calls' claims, and what its
// tool may have changed is recorded like any unclaimed change.
func (e *Engine) closeDangling(ctx context.Context, s *prsm.Session, st *sessionState, age time.Duration) error {
	now := time.Now().UTC()
	closed := 0
	closeOne := func(id, tool string) error {
		if err := store.CompleteToolCall(ctx, e.DB.Q(), s.ID, id, []byte(`{"prsm":"closed: no PostToolUse came"}`), now); err != nil {
			return err
		}
		closed++
		e.Log.Warn("tool call closed: it never completed", "session", s.ID, "tool_call", id, "tool", tool)
		return nil
	}
	for id, c := range st.inflight {
		if now.Sub(c.tc.StartedAt) < age {
			continue
		}
		if c.early != nil {
			e.endEarly(st, c.early)
		}
		if err := closeOne(id, c.tc.ToolName); err != nil {
			return err
		}
		delete(st.inflight, id)
	}
	if age == 0 && !st.openChecked {
		// Calls captured before a restart are in the store only.
		open, err := store.OpenToolCalls(ctx, e.DB.Q(), s.ID)
		if err != nil {
			return err
		}
		for id := range open {
			if st.inflight[id] == nil {
				if err := closeOne(id, ""); err != nil {
					return err
				}
			}
		}
		st.openChecked = true
	}
	if closed > 0 && e.Watcher != nil {
		// What they changed is nobody's: a Watch record, once quiet.
		// (Without a watcher, the periodic scan or the next look finds
		// it.)
		e.changed(s.ID)
	}
	return nil
}

// crashedResult is the result stored for a tool call closed at start.
var crashedResult = []byte(`{"prsm":"closed at start: the server stopped before the call's PostToolUse came"}`)

// closeCrashed closes the session's tool calls that an earlier run of
// the server captured and never completed: it was killed while their
// tools ran, or before their completes came. Left open, each would stop
// rollbacks as a call in flight for maxToolCall. Each is completed as
// its complete would have been, from its capture's snapshot, and what
// changed is recorded under its own id; the calls share the changes as
// calls running together do (claim). The look is a full scan: a watcher
// started now saw nothing of what changed before. An agent whose
// PostToolUse comes later gets these records (a repeated complete);
// what its tool changes after this start is recorded like any unclaimed
// change. The caller holds the session's lock, at start, before any
// call of this run is captured. A syncError means the calls are closed
// and recorded, and the workspace is behind, as their records say.
func (e *Engine) closeCrashed(ctx context.Context, s *prsm.Session, st *sessionState) ([]*prsm.Record, error) {
	open, err := store.OpenToolCalls(ctx, e.DB.Q(), s.ID)
	if err != nil || len(open) == 0 {
		return nil, err
	}
	var calls []*inflightCall
	for id := range open {
		if st.inflight[id] != nil {
			continue // captured by this run: in flight
		}
		tc, err := store.GetToolCall(ctx, e.DB.Q(), s.ID, id)
		if err != nil {
			return nil, err
		}
		calls = append(calls, &inflightCall{tc: tc, rel: e.argPath(s, tc.Args, tc.Cwd)})
	}
	sort.Slice(calls, func(i, j int) bool {
		a, b := calls[i].tc, calls[j].tc
		if !a.StartedAt.Equal(b.StartedAt) {
			return a.StartedAt.Before(b.StartedAt)
		}
		return a.ID < b.ID
	})
	// In flight together while they close, so that each claims only its
	// own changes; none is left in flight whatever happens.
	for _, c := range calls {
		st.inflight[c.tc.ID] = c
	}
	defer func() {
		for _, c := range calls {
			delete(st.inflight, c.tc.ID)
		}
	}()
	var all []*prsm.Record
	var behind error
	for _, c := range calls {
		recs, finish, err := e.detectAndRecord(ctx, s, st, c.tc, c, crashedResult, true)
		finish()
		delete(st.inflight, c.tc.ID)
		if se := (*syncError)(nil); errors.As(err, &se) {
			behind = err // recorded; the workspace is behind
		} else if err != nil {
			return all, fmt.Errorf("close tool call %s: %w", c.tc.ID, err)
		}
		e.Log.Warn("tool call closed at start: the server stopped while it ran", "session", s.ID,
			"tool_call", c.tc.ID, "tool", c.tc.ToolName, "records", len(recs))
		all = append(all, recs...)
	}
	st.openChecked = true
	return all, behind
}

// claim keeps, of the changes found for tool call tc (named: the file its
// arguments name), those that are its own when other tool calls run at
// the same time (parallel tool calls, subagents). A tool that changes the
// one file it names claims that file only; any other tool claims what no
// other running call names. What it leaves (left) stays unrecorded, for
// the calls still running or, after them, a Watch record.
func claim(st *sessionState, tc *prsm.ToolCall, named string, changes []tracker.Change) (own []tracker.Change, left []string) {
	theirs := map[string]bool{}
	others := false
	for id, c := range st.inflight {
		if id == tc.ID {
			continue
		}
		others = true
		if tracker.ChangesNamedFileOnly(c.tc.ToolName) && c.rel != "" {
			theirs[c.rel] = true
		}
	}
	if !others {
		return changes, nil
	}
	for _, ch := range changes {
		mine := !theirs[ch.Rel]
		if tracker.ChangesNamedFileOnly(tc.ToolName) {
			// Its file only: none, when it names none in the worktree
			// (a path outside it, or arguments it cannot read).
			mine = named != "" && ch.Rel == named
		}
		if mine {
			own = append(own, ch)
		} else {
			left = append(left, ch.Rel)
		}
	}
	return own, left
}

// detect finds the changed files: the watcher's dirty set (or a git status
// scan when there is no watcher, when events were lost, or when full is
// set) plus extra paths, less scratch and ignored files. Call ack once the
// changes are recorded.
func (e *Engine) detect(ctx context.Context, st *sessionState, extra []string, full bool) ([]tracker.Change, func(), error) {
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
	paths, err = e.filter(ctx, st, dedupe(append(paths, extra...)))
	if err != nil {
		return nil, nil, err
	}
	changes, err := st.tracker.Detect(paths, e.blobs(ctx))
	if err != nil {
		return nil, nil, err
	}
	return changes, ack, nil
}

// record stores the records of changes for tool call tc (with the new
// known state, and the tool call completed, in one transaction), then
// applies them to the workspace (auto mode). The records come back with
// the sync states sync gave them; finish stores those states and
// announces the records. The caller runs finish (never nil) once, after
// its answer and before it lets go of the session. exists false means
// the tool call row is stored with the records.
func (e *Engine) record(ctx context.Context, s *prsm.Session, st *sessionState, tc *prsm.ToolCall, changes []tracker.Change, snap snapshot, early *earlyWrite, id func(int) string, result []byte, exists bool) (recs []*prsm.Record, finish func(), err error) {
	finish = func() {}
	now := time.Now().UTC()
	auto := s.Mode == prsm.ModeAuto
	// The early write made the record's costly parts already if it read
	// the one change.
	var parts *recordParts
	if early != nil && len(changes) == 1 {
		if parts = early.partsOf(changes[0]); parts != nil {
			e.earlyParts.Add(1)
		}
	}
	var writes *workspaceWrites
	if auto && len(changes) > 0 {
		writes = e.prepareWrites(s, changes, early)
	} else if early != nil {
		early.drop()
	}
	err = e.DB.Tx(ctx, func(q store.Querier) error {
		recs = recs[:0]
		if !exists {
			if err := insertToolCall(ctx, q, st, tc); err != nil {
				return err
			}
		}
		for i, ch := range changes {
			r, err := e.newRecord(ctx, q, s, st, tc, ch, snap, parts, id(i), now)
			if err != nil {
				return err
			}
			if err := store.InsertRecord(ctx, q, r); err != nil {
				return err
			}
			if err := store.PutFileState(ctx, q, s.ID, ch.Rel, tracker.StateOf(ch.After)); err != nil {
				return err
			}
			// In auto mode the record's sync state, pending_review until
			// the sync below stores another, is its intent (SPEC rule 6):
			// a crash before leaves it to the next start
			// (recoverSyncs), never a stored record nobody applies.
			recs = append(recs, r)
		}
		return store.CompleteToolCall(ctx, q, s.ID, tc.ID, result, now)
	})
	if err != nil {
		if writes != nil {
			writes.discard()
		}
		return nil, finish, err
	}
	// Stored: from here on the work runs to its end even if the caller
	// goes away (a canceled request is not a crash to recover from).
	ctx = context.WithoutCancel(ctx)
	for _, ch := range changes {
		st.tracker.Learn(ch.Rel, ch.After)
	}
	crashPoint("record:stored")
	// One record per file, placed in the workspace now that it is stored.
	var states []string
	var syncErrs []error
	if writes != nil {
		states, syncErrs = writes.place()
	}
	var failed []error
	var finished []syncDone
	for i, r := range recs {
		if !auto {
			continue
		}
		state, err := states[i], syncErrs[i]
		if err != nil && transient(err) {
			// Nothing was written (writes are atomic). The record stays
			// unsynced: accepting it, or the next start, applies it.
			e.Log.Error("sync failed", "session", s.ID, "record", r.ID, "err", err)
			failed = append(failed, fmt.Errorf("%s: %w", r.RelPath, err))
			continue
		}
		if err != nil {
			// A path prsm may never write (a symlink leading out, a
			// directory): the workspace stays as it is.
			e.Log.Error("sync refused: workspace file left as it is", "session", s.ID, "record", r.ID, "err", err)
		}
		finished = append(finished, syncDone{r, state})
	}
	for _, d := range finished {
		d.r.SyncState = d.state
	}
	// The records are announced once, with the states sync gave them,
	// once those are stored for all of them in one transaction: by
	// finish, which the caller runs after its answer. The hub gets
	// copies, taken now: the caller fills contents into recs while SSE
	// writers encode the events.
	evs := make([]prsm.Record, len(recs))
	for i, r := range recs {
		evs[i] = *r
	}
	finish = func() {
		if err := e.finishSyncs(ctx, finished); err != nil {
			// The workspace has the changes; their records stay
			// pending_review, and the next start settles their states.
			e.Log.Error("store sync states", "session", s.ID, "tool_call", tc.ID, "err", err)
		}
		e.statsChanged(st) // the stat cache's news are stored apart
		for i := range evs {
			e.Events.Publish(EventFileChanged, &evs[i])
		}
		if len(recs) > 0 {
			e.publishSession(ctx, s.ID)
		}
	}
	// The answer carries the contents, which are at hand: no reads of
	// the blobs just stored.
	for i, r := range recs {
		if r.Binary {
			continue
		}
		inline := func(v prsmsync.Version) *string {
			if !v.Present {
				return nil
			}
			return inlined(v.Content)
		}
		r.OldContent, r.NewContent = inline(changes[i].Before), inline(changes[i].After)
		if r.PreToolHash == r.OldHash {
			r.PreToolContent = r.OldContent
		}
	}
	if len(failed) > 0 {
		return recs, finish, &syncError{errs: failed}
	}
	return recs, finish, nil
}

// recordParts are the parts of a change's record that cost CPU: whether
// it is binary, its line ranges, and its new content hashed and
// compressed for the store (blob, nil: newRecord stores it). An early
// write makes them all while the complete request is on its way;
// newRecord makes the others itself otherwise.
type recordParts struct {
	made           bool
	binary         bool
	added, removed []prsm.Range
	blob           *store.Encoded
}

func makeRecordParts(before, after prsmsync.Version) recordParts {
	p := recordParts{made: true, binary: isBinaryVersion(before) || isBinaryVersion(after)}
	if !p.binary {
		p.added, p.removed = lineRanges(before, after)
	}
	return p
}

// newRecord builds the record of one change and stores its contents;
// parts, when given, are those of ch (see recordParts).
func (e *Engine) newRecord(ctx context.Context, q store.Querier, s *prsm.Session, st *sessionState, tc *prsm.ToolCall, ch tracker.Change, snap snapshot, parts *recordParts, id string, now time.Time) (*prsm.Record, error) {
	r := &prsm.Record{
		ID: id, SessionID: s.ID, FilePath: filepath.Join(e.Repo.Root, filepath.FromSlash(ch.Rel)), RelPath: ch.Rel,
		AgentID: tc.AgentID, ToolCallID: tc.ID, ToolName: tc.ToolName, MessageIndex: tc.MessageIndex,
		Timestamp: now, Status: prsm.StatusPending, SyncState: prsm.SyncPendingReview,
		AddedRanges: []prsm.Range{}, RemovedRanges: []prsm.Range{},
	}
	switch {
	case !ch.Before.Present:
		r.ChangeType = prsm.ChangeCreate
	case !ch.After.Present:
		r.ChangeType = prsm.ChangeDelete
	default:
		r.ChangeType = prsm.ChangeModify
	}
	put := func(v prsmsync.Version) (string, error) {
		if !v.Present {
			return "", nil
		}
		return e.putBlob(ctx, q, st, v.Content)
	}
	if parts == nil {
		p := makeRecordParts(ch.Before, ch.After)
		parts = &p
	}
	var err error
	if r.OldHash, err = put(ch.Before); err != nil {
		return nil, err
	}
	if parts.blob != nil {
		if err := store.PutEncoded(ctx, q, *parts.blob); err != nil {
			return nil, err
		}
		r.NewHash = parts.blob.Hash
	} else if r.NewHash, err = put(ch.After); err != nil {
		return nil, err
	}
	r.PreToolHash = r.OldHash
	if fs, ok := snap[ch.Rel]; ok {
		r.PreToolHash = fs.Hash
	}
	r.ModeBefore, r.ModeAfter = ch.Before.Mode, ch.After.Mode
	r.SizeBefore, r.SizeAfter = ch.Before.Size(), ch.After.Size()
	r.Note = bigNote(ch.Before, ch.After)
	r.Binary = parts.binary
	if !r.Binary {
		r.AddedRanges, r.RemovedRanges = parts.added, parts.removed
	}
	return r, nil
}

// bigNote is the note of a record with a side kept as a big file's stub:
// over the size limit, or past what one look reads into memory.
func bigNote(before, after prsmsync.Version) string {
	var sizes []string
	over := false
	for _, v := range []prsmsync.Version{before, after} {
		if in, ok := v.Big(); ok {
			sizes = append(sizes, bigfile.Human(in.Size))
			over = over || in.Size > bigfile.Limit()
		}
	}
	if len(sizes) == 0 {
		return ""
	}
	why := fmt.Sprintf("over prsm's size limit of %s (PRSM_MAX_FILE_SIZE)", bigfile.Human(bigfile.Limit()))
	if !over {
		why = fmt.Sprintf("past the %s of content prsm reads at once, in a tool call that changed more", bigfile.Human(tracker.LookBudget()))
	}
	return fmt.Sprintf("too large: %s, %s; prsm compares it by its size and a hash and keeps no copy of its content",
		strings.Join(sizes, " and "), why)
}

// fileLock serializes writes to one workspace file across sessions.
func (e *Engine) fileLock(rel string) func() {
	e.filesMu.Lock()
	mu, ok := e.files[rel]
	if !ok {
		mu = &stdsync.Mutex{}
		e.files[rel] = mu
	}
	e.filesMu.Unlock()
	mu.Lock()
	return mu.Unlock
}

// syncToWorkspace brings base -> theirs into the workspace file, merging
// with the user's edits; it returns the record's sync state.
func (e *Engine) syncToWorkspace(ctx context.Context, s *prsm.Session, rel string, base, theirs prsmsync.Version) (string, error) {
	unlock := e.fileLock(rel)
	defer unlock()
	out, _, err := prsmsync.Apply(e.Repo.Root, rel, base, theirs)
	return e.syncState(s, rel, out, err)
}

// placeInWorkspace is syncToWorkspace with the file's syncs to the disk
// left to syncs (prsmsync.Prepared.Settle), for a caller that places many
// files and syncs them together.
func (e *Engine) placeInWorkspace(s *prsm.Session, rel string, base, theirs prsmsync.Version, syncs *diskSyncs) (string, error) {
	unlock := e.fileLock(rel)
	defer unlock()
	out, _, w, err := prsmsync.ApplyUnsynced(e.Repo.Root, rel, base, theirs)
	if w != nil {
		syncs.add(w.Settle)
	}
	return e.syncState(s, rel, out, err)
}

// syncState is the sync state that a workspace write of rel, with outcome
// out and error err, gives its record.
func (e *Engine) syncState(s *prsm.Session, rel string, out prsmsync.Outcome, err error) (string, error) {
	if err != nil {
		return prsm.SyncConflict, err
	}
	if out == prsmsync.Conflict {
		e.Log.Warn("conflict: workspace file left as it is", "session", s.ID, "file", rel)
		return prsm.SyncConflict, nil
	}
	return prsm.SyncSynced, nil
}

// setState stores a record's status and sync state and announces it.
func (e *Engine) setState(ctx context.Context, r *prsm.Record, status, syncState string) error {
	return e.setStates(ctx, []stateChange{{r: r, status: status, syncSt: syncState}}, "")
}

func (e *Engine) publishSession(ctx context.Context, id string) {
	var s *prsm.Session
	err := e.DB.ReadWarm(ctx, func(q store.Querier) (err error) {
		s, err = store.GetSession(ctx, q, id)
		return err
	})
	if err == nil {
		e.Events.Publish(EventSessionUpdated, s)
	}
}

// InlineLimit is the largest text content carried inline in records.
const InlineLimit = 1 << 20

// answer fills the inline contents of records for a response.
func (e *Engine) answer(ctx context.Context, recs []*prsm.Record) (*Records, error) {
	if err := e.FillContent(ctx, recs); err != nil {
		return nil, err
	}
	if recs == nil {
		recs = []*prsm.Record{}
	}
	return &Records{Records: recs}, nil
}

// FillContent sets the inline contents of text records up to InlineLimit.
func (e *Engine) FillContent(ctx context.Context, recs []*prsm.Record) error {
	for _, r := range recs {
		if r.Binary {
			continue
		}
		for _, f := range []struct {
			hash string
			dst  **string
			size int64
		}{{r.OldHash, &r.OldContent, r.SizeBefore}, {r.NewHash, &r.NewContent, r.SizeAfter}, {r.PreToolHash, &r.PreToolContent, -1}} {
			if f.hash == "" || f.size > InlineLimit || *f.dst != nil {
				continue
			}
			b, err := store.GetBlob(ctx, e.DB.Q(), f.hash)
			if err != nil {
				return err
			}
			*f.dst = inlined(b)
		}
	}
	return nil
}

// inlined is content as a record carries it inline: nil past InlineLimit.
func inlined(b []byte) *string {
	if len(b) > InlineLimit {
		return nil
	}
	s := string(b)
	return &s
}

// versions returns a record's before and after versions.
func (e *Engine) versions(ctx context.Context, r *prsm.Record) (before, after prsmsync.Version, err error) {
	get := func(hash string, mode uint32) (prsmsync.Version, error) {
		if hash == "" {
			return prsmsync.Absent, nil
		}
		b, err := store.GetBlob(ctx, e.DB.Q(), hash)
		if err != nil {
			return prsmsync.Version{}, err
		}
		return prsmsync.Version{Present: true, Mode: mode, Content: b}, nil
	}
	if before, err = get(r.OldHash, r.ModeBefore); err != nil {
		return
	}
	after, err = get(r.NewHash, r.ModeAfter)
	return
}

// Content returns one side ("before" or "after") of the record id.
func (e *Engine) Content(ctx context.Context, sessionID, id, side string) ([]byte, *prsm.Record, error) {
	s, err := e.Session(ctx, sessionID)
	if err != nil {
		return nil, nil, err
	}
	r, err := store.GetRecord(ctx, e.DB.Q(), s.ID, id)
	if errors.Is(err, prsm.ErrNotFound) {
		recs, lerr := store.ListRecords(ctx, e.DB.Q(), store.RecordFilter{SessionID: s.ID, ToolCallID: id})
		if lerr != nil {
			return nil, nil, lerr
		}
		switch len(recs) {
		case 0:
			return nil, nil, recordNotFound(id)
		case 1:
			r, err = recs[0], nil
		default:
			return nil, nil, prsm.Errorf(prsm.ErrInvalid, "several_records", "name one record: "+recs[0].ID+", ...",
				"tool call %s changed %d files", id, len(recs))
		}
	}
	if err != nil {
		return nil, nil, err
	}
	var hash string
	switch side {
	case "before", "":
		hash = r.OldHash
	case "after":
		hash = r.NewHash
	default:
		return nil, nil, prsm.Errorf(prsm.ErrInvalid, "bad_side", "use side=before or side=after", "unknown side %q", side)
	}
	if hash == "" {
		return nil, r, prsm.Errorf(prsm.ErrNotFound, "no_content", "", "the file does not exist on the %s side of %s", side, r.ID)
	}
	b, err := store.GetBlob(ctx, e.DB.Q(), hash)
	if err != nil {
		return nil, r, err
	}
	if in, ok := bigfile.Parse(b); ok {
		if side == "" {
			side = "before"
		}
		return nil, r, prsm.Errorf(prsm.ErrNotFound, "too_large", "read the file in the session's worktree",
			"the %s side of %s is %s, too large: prsm keeps no copy of its content (%s)",
			side, r.ID, bigfile.Human(in.Size), r.Note)
	}
	return b, r, nil
}

func recordNotFound(id string) error {
	return prsm.Errorf(prsm.ErrNotFound, "record_not_found", "list changes with `prsm changes`", "no change %q", id)
}

// Records lists a session's records, filtered.
func (e *Engine) Records(ctx context.Context, sessionID, status, file string) ([]*prsm.Record, error) {
	f := store.RecordFilter{Status: status}
	if sessionID != "" {
		s, err := e.Session(ctx, sessionID)
		if err != nil {
			return nil, err
		}
		f.SessionID = s.ID
	}
	switch status {
	case "", prsm.StatusPending, prsm.StatusAccepted, prsm.StatusRejected:
	default:
		return nil, prsm.Errorf(prsm.ErrInvalid, "invalid_status", "use pending, accepted or rejected", "unknown status %q", status)
	}
	if file != "" {
		rel, err := e.relPath(file)
		if err != nil {
			return nil, err
		}
		f.RelPath = rel
	}
	recs, err := store.ListRecords(ctx, e.DB.Q(), f)
	if err != nil {
		return nil, err
	}
	if recs == nil {
		recs = []*prsm.Record{}
	}
	return recs, nil
}

// relPath turns a user-given file (workspace-relative, or absolute inside
// the workspace) into a relative path.
func (e *Engine) relPath(file string) (string, error) {
	p := file
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.Repo.Root, p)
	}
	rel, err := safepath.Rel(e.Repo.Root, p)
	if err != nil {
		return "", prsm.Errorf(prsm.ErrInvalid, "invalid_path", "name a file inside the workspace", "%s: %v", file, err)
	}
	return rel, nil
}

// RecordsOf returns the records of id: the record with that id, or every
// record of the tool call with that id.
func (e *Engine) RecordsOf(ctx context.Context, sessionID, id string) ([]*prsm.Record, error) {
	s, err := e.Session(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	return e.recordsOf(ctx, s, id)
}

func (e *Engine) recordsOf(ctx context.Context, s *prsm.Session, id string) ([]*prsm.Record, error) {
	if strings.TrimSpace(id) == "" {
		return nil, recordNotFound(id)
	}
	if r, err := store.GetRecord(ctx, e.DB.Q(), s.ID, id); err == nil {
		return []*prsm.Record{r}, nil
	} else if !errors.Is(err, prsm.ErrNotFound) {
		return nil, err
	}
	recs, err := store.ListRecords(ctx, e.DB.Q(), store.RecordFilter{SessionID: s.ID, ToolCallID: id})
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, recordNotFound(id)
	}
	return recs, nil
}

func trackerState(v prsmsync.Version) store.FileState { return tracker.StateOf(v) }

// toolTarget names what a tool call works on, for checkpoint descriptions:
// a Bash command, or the file.
func toolTarget(args json.RawMessage, rel string) string {
	var m map[string]any
	if json.Unmarshal(args, &m) == nil {
		if c, ok := m["command"].(string); ok && c != "" {
			return c
		}
	}
	return rel
}

// orTurn is a tool call's message index: as given, or the current turn.
func orTurn(idx int, st *sessionState) int {
	if idx > 0 {
		return idx
	}
	return st.turn
}
