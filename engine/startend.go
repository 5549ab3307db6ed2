package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/worktree"
)

// StartSession is Engine.StartSession's work.
func (ss *sessionStates) StartSession(ctx context.Context, req api.StartRequest) (*prsm.Session, error) {
	req.Name = strings.TrimSpace(req.Name)
	req.AgentID = strings.TrimSpace(req.AgentID)
	if err := checkLabel("name", req.Name); err != nil {
		return nil, err
	}
	if err := checkLabel("agent_id", req.AgentID); err != nil {
		return nil, err
	}
	if req.AgentID == "" {
		req.AgentID = "unknown"
	}
	switch req.Mode {
	case "":
		req.Mode = prsm.ModeAuto
	case prsm.ModeAuto, prsm.ModeReview:
	default:
		return nil, prsm.Errorf(prsm.ErrInvalid, "invalid_mode", "use auto or review", "unknown mode %q", req.Mode)
	}
	// A repository prsm cannot read objects of (SHA-256) is refused
	// before a worktree is made: a session of it could record nothing.
	if _, err := ss.Repo.Objects(); err != nil {
		return nil, prsm.Errorf(prsm.ErrConflict, "unsupported_repository", "", "cannot start a session: %v", err)
	}

	ss.mu.Lock()
	defer ss.mu.Unlock()
	all, err := store.ListSessions(ctx, ss.DB.Q(), "")
	if err != nil {
		return nil, err
	}
	if req.Name == "" {
		req.Name = fmt.Sprintf("session-%d", len(all)+1)
	}
	for _, s := range all {
		if s.Status == prsm.SessionActive && s.Name == req.Name {
			return nil, prsm.Errorf(prsm.ErrConflict, "name_taken", "pick another --name, or use --session "+s.ID,
				"an active session is already named %q (%s)", req.Name, s.ID)
		}
	}

	id := newID()
	s := &prsm.Session{
		ID:           id,
		Name:         req.Name,
		AgentID:      req.AgentID,
		Mode:         req.Mode,
		Status:       prsm.SessionActive,
		WorktreePath: filepath.Join(ss.WorktreeDir(), id),
		Branch:       worktree.BranchName(id),
		CreatedAt:    time.Now().UTC(),
	}
	if err := os.MkdirAll(ss.WorktreeDir(), 0o700); err != nil {
		return nil, err
	}
	var exclude []string
	if own := ss.stateInWorkspace(); own != "" {
		exclude = append(exclude, own)
	}
	// A warm worktree's check (a git status in it) runs beside the
	// snapshot.
	warm, check := ss.warm.takeWarm(ctx)
	commit, err := ss.Repo.Snapshot(ctx, fmt.Sprintf("prsm: base of session %s (%s)", id, s.Name), exclude...)
	if err != nil {
		ss.warm.returnWarm(warm, check)
		return nil, err
	}
	s.BaseCommit = commit
	if !ss.warm.startWarm(ctx, s, commit, warm, check) {
		if err := ss.Repo.AddWorktree(ctx, s.WorktreePath, s.Branch, commit); err != nil {
			return nil, err
		}
	}
	// Agents report real paths (a symlinked /tmp or home resolved).
	if real, err := filepath.EvalSymlinks(s.WorktreePath); err == nil {
		s.WorktreePath = real
	}
	cleanup := func() {
		if err := ss.Repo.RemoveWorktree(context.WithoutCancel(ctx), s.WorktreePath, s.Branch); err != nil {
			ss.Log.Error("undo worktree of failed session start", "session", id, "err", err)
		}
	}
	// Files git could not convert went into the base as their bytes;
	// the checkout converted them all the same.
	if placed, err := ss.Repo.PlaceAsIs(s.WorktreePath, commit); err != nil {
		cleanup()
		return nil, fmt.Errorf("place files stored as they are: %w", err)
	} else if len(placed) > 0 {
		ss.Log.Warn("a .gitattributes conversion fails on these files: the session's base holds their bytes as they are",
			"session", id, "files", placed)
	}
	// Files over the size limit went into the base as stubs: the
	// checkout wrote those, and the real content takes their place.
	if placed, err := ss.Repo.PlaceBig(s.WorktreePath, commit); err != nil {
		cleanup()
		return nil, fmt.Errorf("place big files: %w", err)
	} else if len(placed) > 0 {
		ss.Log.Info("files over the size limit are stubs in the session's base", "session", id, "files", placed)
	}
	if copied, err := ss.Repo.CopyIncluded(ctx, s.WorktreePath); err != nil {
		cleanup()
		return nil, fmt.Errorf("copy .worktreeinclude files: %w", err)
	} else if len(copied) > 0 {
		ss.Log.Info("copied .worktreeinclude files", "session", id, "files", len(copied))
	}
	err = ss.DB.Tx(ctx, func(q store.Querier) error {
		if err := store.CreateSession(ctx, q, s); err != nil {
			return err
		}
		if req.AutoCheckpoints != nil && !*req.AutoCheckpoints {
			return store.SetAutoCheckpoints(ctx, q, s.ID, false)
		}
		return nil
	})
	if err != nil {
		cleanup()
		return nil, err
	}
	if ss.Watcher != nil {
		if _, err := ss.state(ctx, s); err != nil {
			ss.Log.Error("watch new session", "session", id, "err", err)
		}
	}
	ss.Log.Info("session started", "session", id, "name", s.Name, "worktree", s.WorktreePath)
	ss.Events.Publish(api.EventSessionUpdated, s)
	return s, nil
}

// Session is Engine.Session's work.
func (ss *sessionStates) Session(ctx context.Context, idOrPrefix string) (*prsm.Session, error) {
	s, err := store.ResolveSession(ctx, ss.DB.Q(), idOrPrefix)
	if err != nil {
		return nil, sessionError(idOrPrefix, err)
	}
	ss.awaitAnswered(s.ID)
	return s, nil
}

// forgetState drops the in-memory state of a session that ended, and its
// watch: nothing takes it for active any more.
func (ss *sessionStates) forgetState(s *prsm.Session) {
	ss.statesMu.Lock()
	if st := ss.states[s.ID]; st != nil {
		st.tracker.Close()
	}
	delete(ss.states, s.ID)
	ss.statesMu.Unlock()
	ss.health.forgetHooks(s.ID)
	if ss.Watcher != nil {
		ss.Watcher.Remove(s.WorktreePath)
	}
}

func sessionError(id string, err error) error {
	var amb *store.AmbiguousError
	switch {
	case errors.As(err, &amb):
		return prsm.Errorf(prsm.ErrAmbiguous, "ambiguous_id", "give more characters of the id",
			"session id prefix %q matches %d sessions: %s", id, len(amb.Matches), strings.Join(amb.Matches, ", "))
	case errors.Is(err, prsm.ErrNotFound):
		return prsm.Errorf(prsm.ErrNotFound, "session_not_found", "list sessions with `prsm session list`", "no session %q", id)
	case errors.Is(err, prsm.ErrInvalid):
		return prsm.Errorf(prsm.ErrInvalid, "invalid_id", "", "empty session id")
	}
	return err
}

// Sessions is Engine.Sessions's work.
func (ss *sessionStates) Sessions(ctx context.Context, status string) ([]*prsm.Session, error) {
	switch status {
	case "", prsm.SessionActive, prsm.SessionEnded:
	default:
		return nil, prsm.Errorf(prsm.ErrInvalid, "invalid_status", "use active or ended", "unknown session status %q", status)
	}
	ss.awaitAllAnswered()
	return store.ListSessions(ctx, ss.DB.Q(), status)
}

// EndSession is Engine.EndSession's work.
func (ss *sessionStates) EndSession(ctx context.Context, idOrPrefix string, discard bool) (*prsm.Session, error) {
	return ss.endSession(ctx, idOrPrefix, discard, nil)
}

// StartDiscard is Engine.StartDiscard's work.
func (ss *sessionStates) StartDiscard(ctx context.Context, idOrPrefix string) (*api.Job, error) {
	s, err := ss.Session(ctx, idOrPrefix)
	if err != nil {
		return nil, err
	}
	j := ss.jobs.startJob(api.JobDiscard, s.ID, s.PendingCount, true, func(j *job) ([]*prsm.Record, error) {
		_, err := ss.endSession(context.WithoutCancel(ctx), s.ID, true, j)
		return nil, err
	})
	info := j.snapshot()
	return &info, nil
}

// endSession is EndSession, counting a discard's rejects in j (may be
// nil).
func (ss *sessionStates) endSession(ctx context.Context, idOrPrefix string, discard bool, j *job) (*prsm.Session, error) {
	s, err := ss.Session(ctx, idOrPrefix)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s.Status == prsm.SessionEnded {
		return s, nil // ending twice is a no-op
	}
	crashPoint("end:checking")
	now := time.Now().UTC()
	if ended, err := ss.endChecked(ctx, s, discard, j, now); err != nil || ended != nil {
		return ended, err // ended meanwhile (a vanished worktree's end): a no-op too
	}
	s.Status, s.EndedAt = prsm.SessionEnded, &now
	crashPoint("end:remove")
	if err := ss.removeWorktree(ctx, s.WorktreePath, s.Branch); err != nil {
		// Ended, and nothing in it is unreviewed: the next start tries again.
		ss.Log.Error("session ended; its worktree is removed at the next start", "session", s.ID, "err", err)
	}
	ss.Log.Info("session ended", "session", s.ID, "discard", discard)
	ss.Events.Publish(api.EventSessionUpdated, s)
	return s, nil
}

// endChecked ends session s in the store, holding the session's lock from
// its checks to the end, so that no record (a watcher's, a late
// PostToolUse's) comes between them unseen. Without discard, a pending
// record or a change in the worktree that no record describes refuses
// the end; with it, the pending records are rejected first. A session
// found ended by then is returned, and nothing is done.
func (ss *sessionStates) endChecked(ctx context.Context, s *prsm.Session, discard bool, j *job, now time.Time) (*prsm.Session, error) {
	st := ss.sessions.loaded(s.ID)
	if _, err := os.Lstat(s.WorktreePath); st == nil && !errors.Is(err, os.ErrNotExist) {
		if st, err = ss.state(ctx, s); err != nil {
			return nil, err
		}
	}
	if st != nil {
		st.mu.Lock()
		defer st.mu.Unlock() // a panic too (a crash point's)
	}
	fresh, err := store.GetSession(ctx, ss.DB.Q(), s.ID)
	if err != nil {
		return nil, err
	}
	if fresh.Status == prsm.SessionEnded {
		return fresh, nil
	}
	if !discard {
		if fresh.PendingCount > 0 {
			return nil, prsm.Errorf(prsm.ErrConflict, "unreviewed_changes",
				fmt.Sprintf("review them with `prsm changes --session %s`, or pass --discard to drop them", s.ID),
				"session %s has %s", s.ID, prsm.Plural(fresh.PendingCount, "pending change"))
		}
		if st != nil {
			dirty, err := ss.unrecorded(ctx, st)
			if err != nil {
				return nil, err
			}
			if dirty != "" {
				return nil, prsm.Errorf(prsm.ErrConflict, "unreviewed_changes",
					"pass --discard to drop them", "session %s's worktree has changes prsm has not recorded (%s)", s.ID, dirty)
			}
		}
	}
	var intent int64
	if discard && fresh.PendingCount > 0 {
		// Discarding drops the unreviewed changes: out of the workspace
		// too, by the same reverse merges as a reject (user edits stay).
		// Its intent goes once the session has ended: a crash before
		// leaves the next start to finish the rejects and the end.
		if st == nil {
			if st, err = ss.state(ctx, s); err != nil {
				return nil, err
			}
			st.mu.Lock()
			defer st.mu.Unlock()
		}
		run, err := ss.bulk.planBulk(ctx, s, st, false, "", true)
		if err != nil {
			return nil, fmt.Errorf("discard pending changes: %w", err)
		}
		intent = run.reject.intent
		if _, err := run.run(ctx, j); err != nil {
			return nil, fmt.Errorf("discard pending changes: %w", err)
		}
	}
	// Its checkpoints are built while its state is at hand.
	if err := ss.ckpt.materializeSession(ctx, s); err != nil {
		return nil, err
	}
	// The session ends, in the store and for every holder of its state,
	// before its worktree goes. Git deletes the files one by one: nothing
	// may take those deletions for the agent's (a watch record would
	// delete the user's files), and a kill meanwhile must leave an ended
	// session whose worktree the next start removes, not an active one
	// whose half-removed worktree it reads as work.
	if err := ss.endState(ctx, s, st, now); err != nil {
		return nil, err
	}
	if intent != 0 {
		return nil, store.DoneIntent(ctx, ss.DB.Q(), intent)
	}
	return nil, nil
}

// endState stores that session s ended and makes every holder of its
// state see it: a request waiting for the session's lock finds it ended,
// its watch stops, and a pending watch record does not run. The caller
// holds the lock of st, the session's state (nil when none is loaded).
func (ss *sessionStates) endState(ctx context.Context, s *prsm.Session, st *sessionState, now time.Time) error {
	if st == nil {
		if st = ss.sessions.loaded(s.ID); st != nil {
			st.mu.Lock()
			defer st.mu.Unlock()
		}
	}
	if err := store.EndSession(ctx, ss.DB.Q(), s.ID, now); err != nil {
		return err
	}
	if st != nil {
		if st.active != nil {
			// lockSession copies it under the lock.
			st.active.Status, st.active.EndedAt = prsm.SessionEnded, &now
		}
		st.timerMu.Lock()
		if st.watchTimer != nil {
			st.watchTimer.Stop()
		}
		st.timerMu.Unlock()
	}
	ss.forgetState(s)
	return nil
}

// removeWorktree removes the worktree of a session that ended with nothing
// unreviewed in it, and its branch. Where git refuses, because a kill
// while git removed it took its .git file (git deletes the files first,
// its own entry last), the directory is deleted and then git's entry.
func (ss *sessionStates) removeWorktree(ctx context.Context, path, branch string) error {
	if filepath.Dir(path) == ss.WorktreeDir() {
		// git refuses to remove a worktree whose .git names another
		// place: an agent's rewrite is put back (and kept) first.
		ss.guard.repairDotGit(ctx, "", path)
	}
	err := ss.Repo.RemoveWorktree(ctx, path, branch)
	if err == nil {
		return nil
	}
	if filepath.Dir(path) != ss.WorktreeDir() {
		return err // not one of prsm's: never deleted by hand
	}
	if _, serr := os.Lstat(filepath.Join(path, ".git")); !errors.Is(serr, os.ErrNotExist) {
		return err
	}
	ss.Log.Warn("worktree half removed; deleting the rest", "path", path, "err", err)
	if rerr := os.RemoveAll(path); rerr != nil {
		return errors.Join(err, rerr)
	}
	return ss.Repo.RemoveWorktree(ctx, path, branch)
}

// unrecorded reports (as a short list) files in the session's worktree that
// changed while no record describes them. The caller holds st's lock.
func (ss *sessionStates) unrecorded(ctx context.Context, st *sessionState) (string, error) {
	if _, err := os.Lstat(st.tracker.Worktree); errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	defer st.tracker.EndLook()
	paths, err := st.tracker.Dirty(ctx)
	if err != nil {
		return "", err
	}
	if paths, err = ss.guard.filter(ctx, st, paths); err != nil {
		return "", err
	}
	changes, unsettled, err := st.tracker.Detect(paths, ss.capture.blobs(ctx), 0)
	if err != nil {
		return "", err
	}
	var names []string
	for _, c := range changes {
		names = append(names, c.Rel)
	}
	names = append(names, unsettled...)
	if len(names) > 3 {
		names = append(names[:3], fmt.Sprintf("and %d more", len(names)-3))
	}
	return strings.Join(names, ", "), nil
}
