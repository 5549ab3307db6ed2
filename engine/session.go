package engine

import (
	"context"
	stdsync "sync"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/tracker"
)

// sessionStates starts and ends sessions (startend.go) and holds their
// in-memory state, loaded on first use, and the work queued after their
// answers (session.go). statesMu guards states, finishing and an
// afterWork's next; a session's own lock (sessionState.mu) is taken by
// lockSession, never under statesMu.
type sessionStates struct {
	*Engine
	statesMu stdsync.Mutex
	states   map[string]*sessionState
	// finishing holds, per session, the tool call work that runs after
	// its answer (see afterAnswer).
	finishing map[string]*afterWork
}

// loaded is session id's state if it is loaded; nil otherwise.
func (ss *sessionStates) loaded(id string) *sessionState {
	ss.statesMu.Lock()
	defer ss.statesMu.Unlock()
	return ss.states[id]
}

// each calls fn for every loaded session state, holding statesMu: fn
// takes no session's lock.
func (ss *sessionStates) each(fn func(id string, st *sessionState)) {
	ss.statesMu.Lock()
	defer ss.statesMu.Unlock()
	for id, st := range ss.states {
		fn(id, st)
	}
}

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
	// lastTurn is the checkpoint of the newest turn while it is the
	// session's newest checkpoint (nil once another one is stored, and
	// after a restart): a turn that finds nothing done since takes it
	// over (Turn).
	lastTurn *prsm.Checkpoint
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
	// notes are the notes of the records a complete is making, by path
	// (a shell write to the workspace's path: wsshell.go); set and
	// cleared under the session's lock.
	notes map[string]string
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

// inflightCall is a captured tool call not yet completed.
type inflightCall struct {
	// tc is the call as its capture stored it, and rel the worktree
	// file its arguments name (""): complete reads neither again.
	tc  *prsm.ToolCall
	rel string
	// targets are the worktree files a Bash call's command names (its
	// redirects, sed -i, touch, cp and mv targets...): while it runs, a
	// call completing beside it leaves them to it (claim).
	targets []string
	// patchCall: the call applies a patch in Codex's format (apply_patch,
	// or a Bash command that is only such a patch), and patch are the
	// worktree files its text names. Such a call claims those files,
	// whatever else runs; a patch that fails, or that Codex applies
	// itself from the shell, sends no PostToolUse, so it is closed when a
	// call started after it completes (claim.go).
	patchCall bool
	patch     []string
	// before are the patch calls in flight when this call was captured:
	// its complete closes those still open.
	before []string
	// closing, when set, are the only files the call may claim: it is
	// being closed without its PostToolUse (claim.go).
	closing map[string]bool
	// early is the workspace write of the file the tool names (auto
	// mode; nil otherwise), started before complete knows the change.
	early *earlySlot
	// wsPre are the workspace files a Bash call's command names by the
	// workspace's own path, as they were at its capture (wsshell.go);
	// moved are those its complete brought into the worktree.
	wsPre, moved map[string]sync.Version
}

func (ss *sessionStates) state(ctx context.Context, s *prsm.Session) (*sessionState, error) {
	ss.statesMu.Lock()
	defer ss.statesMu.Unlock()
	if st, ok := ss.states[s.ID]; ok {
		return st, nil
	}
	known, err := store.ListFileStates(ctx, ss.DB.Q(), s.ID)
	if err != nil {
		return nil, err
	}
	stats, err := store.ListStats(ctx, ss.DB.Q(), s.ID)
	if err != nil {
		return nil, err
	}
	st := &sessionState{tracker: &tracker.Session{
		ID: s.ID, Worktree: s.WorktreePath, Base: s.BaseCommit, Repo: ss.Repo, Known: known,
		Stats: tracker.NewStatCache(stats), Log: ss.Log, Exclude: ss.stateInWorkspace(),
	}, inflight: map[string]*inflightCall{}}
	if s.Status == prsm.SessionActive {
		active := *s
		st.active = &active
	}
	if ss.Watcher != nil && s.Status == prsm.SessionActive {
		if err := ss.Watcher.Add(s.ID, s.WorktreePath); err != nil {
			return nil, err
		}
		st.tracker.Watcher = ss.Watcher
	}
	cps, err := store.ListCheckpoints(ctx, ss.DB.Q(), s.ID)
	if err != nil {
		return nil, err
	}
	for _, c := range cps {
		st.turn = max(st.turn, c.MessageIndex)
	}
	// With automatic checkpoints off, the tool calls keep the count.
	n, err := store.MaxMessageIndex(ctx, ss.DB.Q(), s.ID)
	if err != nil {
		return nil, err
	}
	st.turn = max(st.turn, n)
	if err := loadLazy(ctx, ss.DB.Q(), st); err != nil {
		return nil, err
	}
	ss.states[s.ID] = st
	if s.Status == prsm.SessionActive {
		ss.warmBase(s.BaseCommit)
	}
	return st, nil
}

// unlock ends the session's look (tracker.EndLook: the content it read
// is recorded) and lets go of its lock.
func (st *sessionState) unlock() {
	st.tracker.EndLook()
	st.mu.Unlock()
}

// lockSession resolves id and locks the session. The session returned
// may not have its PendingCount: read Session for that. An active
// session whose state is loaded is not read from the store again (tool
// calls come often, and each would read it again).
func (ss *sessionStates) lockSession(ctx context.Context, id string) (*prsm.Session, *sessionState, func(), error) {
	ss.statesMu.Lock()
	st := ss.states[id]
	ss.statesMu.Unlock()
	if st != nil && st.active != nil {
		ss.awaitAnswered(id)
		st.mu.Lock()
		s := *st.active
		return &s, st, st.unlock, nil
	}
	s, err := ss.Session(ctx, id)
	if err != nil {
		return nil, nil, nil, err
	}
	if st, err = ss.state(ctx, s); err != nil {
		return nil, nil, nil, err
	}
	st.mu.Lock()
	return s, st, st.unlock, nil
}

// lockActive is lockSession for the work only an active session takes:
// it refuses an ended session (requireActive), holding no lock then.
func (ss *sessionStates) lockActive(ctx context.Context, id string) (*prsm.Session, *sessionState, func(), error) {
	s, st, unlock, err := ss.lockSession(ctx, id)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := requireActive(s); err != nil {
		unlock()
		return nil, nil, nil, err
	}
	return s, st, unlock, nil
}

// requireActive refuses a session that has ended.
func requireActive(s *prsm.Session) error {
	if s.Status != prsm.SessionActive {
		return prsm.Errorf(prsm.ErrConflict, "session_ended", "start a new session", "session %s has ended", s.ID)
	}
	return nil
}

// afterAnswer runs fn, the part of a tool call's work that its answer
// does not wait for, in the background, holding the session's lock (taken
// over from lock) until fn returns, and then the work thenAfter queued
// meanwhile. Session waits for it: whatever comes next for session id,
// and every read of it, sees that work done.
func (ss *sessionStates) afterAnswer(id string, lock *heldLock, fn func()) {
	unlock := lock.handOver()
	w := &afterWork{done: make(chan struct{})}
	ss.statesMu.Lock()
	ss.finishing[id] = w
	ss.statesMu.Unlock()
	ss.background(func() {
		defer close(w.done)
		defer unlock()
		for fn != nil {
			fn()
			ss.statesMu.Lock()
			fn = nil
			if len(w.next) > 0 {
				fn, w.next = w.next[0], w.next[1:]
			} else {
				w.ended = true
			}
			ss.statesMu.Unlock()
		}
	})
}

// afterWork is a session's work after an answer: done is closed once it
// and what was queued behind it are done and the lock is let go.
type afterWork struct {
	done  chan struct{}
	next  []func() // guarded by sessionStates.statesMu
	ended bool     // nothing more is taken into next
}

// thenAfter queues fn behind the work after an answer that session id
// runs now, under the same hold of the session's lock: nothing else takes
// the lock in between. It reports false, queuing nothing, when no such
// work runs (fn must then take the lock itself).
func (ss *sessionStates) thenAfter(id string, fn func()) bool {
	ss.statesMu.Lock()
	defer ss.statesMu.Unlock()
	w := ss.finishing[id]
	if w == nil || w.ended {
		return false
	}
	w.next = append(w.next, fn)
	return true
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
func (ss *sessionStates) awaitAllAnswered() {
	ss.statesMu.Lock()
	ids := make([]string, 0, len(ss.finishing))
	for id := range ss.finishing {
		ids = append(ids, id)
	}
	ss.statesMu.Unlock()
	for _, id := range ids {
		ss.awaitAnswered(id)
	}
}

// awaitAnswered waits until the work afterAnswer runs for session id is
// done.
func (ss *sessionStates) awaitAnswered(id string) {
	ss.statesMu.Lock()
	w := ss.finishing[id]
	ss.statesMu.Unlock()
	if w == nil {
		return
	}
	<-w.done
	ss.statesMu.Lock()
	if ss.finishing[id] == w {
		delete(ss.finishing, id)
	}
	ss.statesMu.Unlock()
}

// orTurn is a tool call's message index: as given, or the current turn.
func orTurn(idx int, st *sessionState) int {
	if idx > 0 {
		return idx
	}
	return st.turn
}
