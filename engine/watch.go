package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/tracker"
	"github.com/prsm-dev/prsm/worktree"
)

// WatchQuiet is how long a worktree must be quiet before changes that no
// tool call claimed become a Watch record.
const WatchQuiet = 300 * time.Millisecond

// watcher records the changes no hook told of: it follows the watcher's
// events (or, past the watch budget, a periodic scan: scan.go) and makes
// Watch records of them once a session is quiet; Reconcile, at a start,
// squares the store with the worktrees left on disk.
type watcher struct {
	*Engine
	// watchCtx is the server's, for the records the watcher makes.
	watchCtx context.Context
	// scanStop stops the periodic scan (startScanner).
	scanStop func()
}

// newWatcher is tracker.NewWatcher; tests make it fail.
var newWatcher = tracker.NewWatcher

// StartWatching is Engine.StartWatching's work.
func (wa *watcher) StartWatching(ctx context.Context) error {
	w, err := newWatcher(wa.Log)
	if err != nil {
		// No watcher (no descriptor, no inotify instance left): every
		// session is limited (the status says why, with the fix) and
		// scanned at each look and periodically (scan.go). Nothing is
		// lost.
		l := tracker.StartLimit(err)
		wa.Log.Warn("file watcher unavailable", "reason", l.Reason, "fix", l.Fix)
		w = tracker.ScanningWatcher(wa.Log, l)
	}
	w.Ignored = wa.ignoredDirs
	w.Changed = wa.changed
	w.Written = wa.capture.written
	w.Budget = wa.WatchBudget
	w.SentinelDir = filepath.Join(wa.ProjectDir, "sentinels")
	wa.watchCtx = ctx
	wa.Watcher = w
	wa.startScanner(ctx)
	sessions, err := store.ListSessions(ctx, wa.DB.Q(), prsm.SessionActive)
	if err != nil {
		return err
	}
	for _, s := range sessions {
		if _, err := os.Stat(s.WorktreePath); err != nil {
			continue // reconcile deals with it
		}
		if _, err := wa.sessions.state(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// StopWatching is Engine.StopWatching's work.
func (wa *watcher) StopWatching() {
	wa.stopScanner()
	if wa.Watcher != nil {
		wa.Watcher.Close()
	}
}

// ignoredDirs asks git which of the directories of a worktree are ignored,
// so the watcher spends no watches on node_modules and the like. The
// worktree's git directory is named by prsm (RunIn), never found through
// its .git file.
func (wa *watcher) ignoredDirs(root string, dirs []string) map[string]bool {
	in := []byte(strings.Join(dirs, "\x00") + "\x00")
	out, err := wa.Repo.RunIn(context.Background(), root, worktree.NewCmd("check-ignore", "-z", "--stdin").Stdin(in).
		Env("GIT_OPTIONAL_LOCKS=0", "GIT_LITERAL_PATHSPECS=0"))
	if err != nil && worktree.ExitCode(err) != 1 {
		return nil
	}
	m := map[string]bool{}
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			m[string(p)] = true
		}
	}
	return m
}

// changed is the watcher's callback: (re)start the session's quiet timer.
func (wa *watcher) changed(sessionID string) { wa.watchIn(sessionID, WatchQuiet, 0) }

// watchIn (re)starts the session's quiet timer: a look (watchTick) in d,
// the busy-th try of a record the store refused as busy (0: the first).
func (wa *watcher) watchIn(sessionID string, d time.Duration, busy int) {
	st := wa.sessions.loaded(sessionID)
	if st == nil {
		return
	}
	st.timerMu.Lock()
	defer st.timerMu.Unlock()
	if st.watchTimer != nil {
		st.watchTimer.Stop()
	}
	st.watchTimer = time.AfterFunc(d, func() {
		whileOpen(wa.Engine, func() { wa.watchTick(sessionID, busy) })
	})
}

// watchRetryMax caps the wait between two tries of a watcher's record
// that the store refused as busy (each try waits busy_timeout for the
// lock besides).
const watchRetryMax = 5 * time.Second

// watchTick is the quiet timer's look: what settled is recorded as a
// Watch call (a file still being written is looked at again by
// watchAgain). A record the store refuses as busy is never dropped: it
// is tried again, after WatchQuiet, then twice as long each time up to
// watchRetryMax, for as long as the session is active; the change keeps
// the turn that wrote it (a turn's start records what is left first).
func (wa *watcher) watchTick(sessionID string, busy int) {
	_, err := wa.watchLook(wa.watchCtx, sessionID, WatchQuiet)
	switch {
	case err == nil, errors.Is(err, context.Canceled):
	case store.IsBusy(err):
		wait := min(WatchQuiet<<min(busy, 8), watchRetryMax)
		wa.Log.Warn("watch record: the store is busy; trying again", "session", sessionID, "in", wait, "try", busy+1, "err", err)
		wa.watchIn(sessionID, wait, busy+1)
	default:
		wa.Log.Error("watch record", "session", sessionID, "err", err)
	}
}

// watchAgain has the watcher look at the session again once its files
// may have settled: the unsettled ones were being written when a look
// read them (tracker.ErrUnsettled), and they are kept as changed
// meanwhile. Without a watcher, the next look's scan finds them anyway.
func (wa *watcher) watchAgain(st *sessionState, unsettled []string) {
	st.tracker.Unclaimed(unsettled)
	if wa.Watcher != nil {
		wa.changed(st.tracker.ID)
	}
}

// WatchNow is Engine.WatchNow's work.
func (wa *watcher) WatchNow(ctx context.Context, sessionID string) ([]*prsm.Record, error) {
	return wa.watchLook(ctx, sessionID, 0)
}

// watchLook is WatchNow for a look that records only files left alone
// for quiet (the watcher's own, which runs while the agent may still
// write).
func (wa *watcher) watchLook(ctx context.Context, sessionID string, quiet time.Duration) ([]*prsm.Record, error) {
	s, st, unlock, err := wa.sessions.lockSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if s.Status != prsm.SessionActive {
		return nil, nil
	}
	if _, err := os.Stat(s.WorktreePath); err != nil {
		return nil, nil
	}
	return wa.watchRecord(ctx, s, st, quiet)
}

// watchRecord records the session's unclaimed changes as a Watch call,
// unless a tool call runs (calls in flight past maxToolCall are closed
// first); the caller holds the session's lock. quiet is the look's
// (recordUnclaimed).
func (wa *watcher) watchRecord(ctx context.Context, s *prsm.Session, st *sessionState, quiet time.Duration) ([]*prsm.Record, error) {
	if err := wa.capture.closeDangling(ctx, s, st, maxToolCall); err != nil {
		return nil, err
	}
	if len(st.inflight) > 0 {
		return nil, nil
	}
	return wa.recordUnclaimed(ctx, s, st, "watch-"+newID(), "Watch", s.AgentID, false, quiet)
}

// settleUnclaimed records, as WatchNow would a moment later, what changed
// in the session's worktree that no record describes yet. A rewind runs
// it first, so that it works from a worktree whose every change has a
// record: a change is then undone like the others and kept by the safety
// checkpoint, never absorbed into the rewind's own write nor dropped from
// the worktree unrecorded. While a tool call is in flight the changes are
// that call's: nothing is recorded (and a rewind refuses to run).
func (wa *watcher) settleUnclaimed(ctx context.Context, s *prsm.Session, st *sessionState) error {
	// A call open in the store only (captured before a restart) counts.
	if tc, err := wa.capture.inFlight(ctx, s.ID); err != nil || tc != "" {
		return err
	}
	_, err := wa.watchRecord(ctx, s, st, 0)
	if se := (*syncError)(nil); errors.As(err, &se) {
		// Recorded; the workspace is behind, as the records say.
		return nil
	}
	return err
}

// recordUnclaimed detects changes and, if any, records them under a new
// pseudo tool call. With quiet, only files left alone that long are
// recorded (the others when they have settled: watchAgain).
func (wa *watcher) recordUnclaimed(ctx context.Context, s *prsm.Session, st *sessionState, tcID, tool, agent string, full bool, quiet time.Duration) ([]*prsm.Record, error) {
	changes, ack, err := wa.capture.detect(ctx, st, nil, full, quiet)
	if err != nil {
		return nil, err
	}
	wa.guard.reportUnseen(s, st)
	if len(changes) == 0 {
		ack()
		return nil, nil
	}
	tc := &prsm.ToolCall{SessionID: s.ID, ID: tcID, ToolName: tool, AgentID: agent, MessageIndex: st.turn, StartedAt: time.Now().UTC()}
	id := func(i int) string { return fmt.Sprintf("%s:%d", tcID, i) }
	if tool == "Reconcile" {
		tc.ToolName = "Watch"
		n, err := wa.reconcileCount(ctx, s.ID)
		if err != nil {
			return nil, err
		}
		id = func(i int) string { return fmt.Sprintf("reconcile-%s-%d", s.ID[:8], n+i) }
	}
	recs, finish, err := wa.rec.record(ctx, s, st, tc, changes, nil, nil, id, nil, false)
	finish()
	if tool == "Watch" && len(recs) > 0 {
		wa.health.watched(s.ID, s.AgentID)
	}
	if se := (*syncError)(nil); errors.As(err, &se) {
		ack() // recorded; only the workspace is behind, and its intents are open
		return recs, err
	}
	if err != nil {
		return nil, err
	}
	ack()
	return recs, nil
}

func (wa *watcher) reconcileCount(ctx context.Context, sessionID string) (int, error) {
	recs, err := store.ListRecords(ctx, wa.DB.Q(), store.RecordFilter{SessionID: sessionID})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range recs {
		if strings.HasPrefix(r.ID, "reconcile-") {
			n++
		}
	}
	return n, nil
}

// ReconcileReport says what a start-up reconcile found.
type ReconcileReport struct {
	Records  []*prsm.Record `json:"records"`
	Vanished []string       `json:"vanished"` // sessions whose worktree was deleted by hand
	Pruned   []string       `json:"pruned"`   // prsm worktrees removed: no session, nothing pending
	// Branches are session branches (prsm/<id>) removed: no session, no
	// worktree, the tip prsm's own snapshot (a start a kill cut off).
	Branches []string `json:"branches"`
}

// Reconcile is Engine.Reconcile's work.
func (wa *watcher) Reconcile(ctx context.Context) (*ReconcileReport, error) {
	rep := &ReconcileReport{Records: []*prsm.Record{}, Vanished: []string{}, Pruned: []string{}, Branches: []string{}}
	// Leftover temp files of writes a crash cut off, then the operations
	// themselves, before anything else looks at the files.
	if n, err := wa.ws.CleanTemp(); err != nil {
		wa.Log.Warn("clean temp files", "err", err)
	} else if n > 0 {
		wa.Log.Info("removed temp files left by a crash", "count", n)
	}
	wa.trash.emptyLeft()
	// Checkpoints whose objects a crash kept from the repository. What
	// cannot be written (a bad row) is logged and set aside or left; the
	// start goes on.
	if err := wa.ckpt.flushAtStart(ctx); err != nil {
		wa.Log.Error("reconcile: checkpoints not written", "err", err)
	}
	if _, err := wa.intents.RecoverIntents(ctx); err != nil {
		return nil, err
	}
	sessions, err := store.ListSessions(ctx, wa.DB.Q(), "")
	if err != nil {
		return nil, err
	}
	owned := map[string]*prsm.Session{}
	for _, s := range sessions {
		owned[filepath.Base(s.WorktreePath)] = s
		if s.Status != prsm.SessionActive {
			continue
		}
		if _, err := os.Lstat(filepath.Join(s.WorktreePath, ".git")); errors.Is(err, os.ErrNotExist) {
			// Deleted by hand, or half removed by a removal a kill cut
			// off (an older prsm removed the worktree before it ended
			// the session). Its files are not read as changes; what is
			// left stays (the prune below skips it).
			note, err := wa.endVanished(ctx, s)
			if err != nil {
				return nil, err
			}
			wa.Log.Warn("session ended: "+note, "session", s.ID, "worktree", s.WorktreePath)
			s.Status, s.Note = prsm.SessionEnded, note
			rep.Vanished = append(rep.Vanished, s.ID)
			continue
		}
		if _, err := sync.CleanTemp(s.WorktreePath); err != nil {
			wa.Log.Warn("clean temp files", "session", s.ID, "err", err)
		}
		ss, st, unlock, err := wa.sessions.lockSession(ctx, s.ID)
		if err != nil {
			// Its state cannot be loaded (a bad row): the others are
			// served all the same.
			wa.Log.Error("reconcile: session not loaded", "session", s.ID, "err", err)
			continue
		}
		// The tool calls a crash left open first: what changed is theirs.
		// The rest is nobody's.
		recs, err := wa.capture.closeCrashed(ctx, ss, st)
		if se := (*syncError)(nil); err == nil || errors.As(err, &se) {
			more, uerr := wa.recordUnclaimed(ctx, ss, st, "reconcile-"+s.ID[:8]+"-"+newID()[:6], "Reconcile", "unknown", true, 0)
			recs = append(recs, more...)
			if uerr != nil {
				err = uerr
			}
		}
		unlock()
		rep.Records = append(rep.Records, recs...)
		if se := (*syncError)(nil); errors.As(err, &se) {
			// Recorded, not yet applied: the start goes on, and the
			// records' open intents are tried again at the next one.
			wa.Log.Error("reconcile: workspace not updated", "session", s.ID, "err", err)
			err = nil
		}
		if err != nil {
			// One session's worktree that cannot be read does not keep
			// the server (and every other session) down; it is tried
			// again at the next start.
			wa.Log.Error("reconcile: changes made while the server was down not recorded", "session", s.ID, "err", err)
		}
	}
	entries, _ := os.ReadDir(wa.WorktreeDir())
	for _, ent := range entries {
		s, ok := owned[ent.Name()]
		if ok && s.Status == prsm.SessionActive {
			continue
		}
		if ok && s.PendingCount > 0 {
			continue // unreviewed work is never deleted
		}
		if ok && s.Note != "" {
			// Ended by a start (its worktree vanished or lost its .git
			// file): what is left may be the agent's unrecorded work, and
			// the note says what was kept. Never deleted.
			continue
		}
		path := filepath.Join(wa.WorktreeDir(), ent.Name())
		branch := "prsm/" + ent.Name()
		if !ok && (!looksLikeSessionID(ent.Name()) || !wa.isWorktree(ctx, path)) {
			continue // not prsm's worktree: never deleted
		}
		// An ended session's, with nothing unreviewed, or prsm's own
		// orphan: removed, even where a kill cut off its removal.
		if err := wa.sessions.removeWorktree(ctx, path, branch); err != nil {
			wa.Log.Warn("prune worktree", "path", path, "err", err)
			continue
		}
		rep.Pruned = append(rep.Pruned, ent.Name())
	}
	rep.Branches = wa.pruneBranches(ctx, owned)
	if len(rep.Records)+len(rep.Vanished)+len(rep.Pruned)+len(rep.Branches) > 0 {
		wa.Log.Info("reconciled", "records", len(rep.Records), "vanished", len(rep.Vanished), "pruned", len(rep.Pruned), "branches", len(rep.Branches))
	}
	return rep, nil
}

// pruneBranches deletes the session branches no session owns: a start
// that a kill cut off inside `git worktree add` leaves its branch and no
// worktree. Only a branch named like a session's, checked out nowhere,
// whose tip is still prsm's base snapshot (nobody committed on it) is
// deleted: its content is the workspace's at that start, and deleting a
// branch touches no file. Another prsm project of the same repository
// has its sessions' branches checked out in their worktrees.
func (wa *watcher) pruneBranches(ctx context.Context, owned map[string]*prsm.Session) []string {
	deleted := []string{}
	branches, err := wa.Repo.SessionBranches(ctx)
	if err != nil {
		wa.Log.Warn("list session branches", "err", err)
		return deleted
	}
	for _, b := range branches {
		id := strings.TrimPrefix(b.Name, "prsm/")
		if !looksLikeSessionID(id) || owned[id] != nil || b.CheckedOut || !b.ByPrsm {
			continue
		}
		if err := wa.Repo.DeleteBranchAt(ctx, b.Name, b.Tip); err != nil {
			wa.Log.Warn("delete stray session branch", "branch", b.Name, "err", err)
			continue
		}
		wa.Log.Info("deleted the branch of a session start cut off", "branch", b.Name)
		deleted = append(deleted, b.Name)
	}
	return deleted
}

func looksLikeSessionID(s string) bool {
	if len(s) != 12 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// isWorktree reports whether git lists path as a worktree of the repository.
func (wa *watcher) isWorktree(ctx context.Context, path string) bool {
	out, err := wa.Repo.Git().Run(ctx, worktree.NewCmd("worktree", "list", "--porcelain", "-z").Dir(wa.Repo.Root))
	if err != nil {
		return false
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	for _, f := range bytes.Split(out, []byte{0}) {
		if p, ok := bytes.CutPrefix(f, []byte("worktree ")); ok {
			if string(p) == path || string(p) == real {
				return true
			}
		}
	}
	return false
}
