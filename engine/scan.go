package engine

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/worktree"
)

// ScanInterval is how often a session the watcher cannot cover (a worktree
// larger than the watch budget, the kernel out of inotify watches: any of
// tracker's Limits) is scanned with git status for changes no tool call
// claimed.
var ScanInterval = 2 * time.Second

// startScanner starts scanDegraded; stopScanner ends it and waits.
func (wa *watcher) startScanner(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	wa.scanStop = func() { cancel(); <-done }
	go func() {
		defer close(done)
		wa.scanDegraded(ctx)
	}()
}

func (wa *watcher) stopScanner() {
	if wa.scanStop != nil {
		wa.scanStop()
		wa.scanStop = nil
	}
}

// scanDegraded gives the sessions the watcher cannot cover (tracker's
// Limits: out of watches or descriptors, past PRSM_MAX_WATCHES, a network
// file system, kqueue past its bound, or a watcher that could not start:
// tracker.ScanningWatcher) what events would: every ScanInterval a look
// (a full git status scan, since their dirty set is never trusted) that
// turns unclaimed changes into Watch records. Tool calls and turns need
// no help: their end always scans such a worktree, so the agent's
// changes are its calls' whatever the watcher sees. It runs until ctx
// ends.
func (wa *watcher) scanDegraded(ctx context.Context) {
	t := time.NewTicker(ScanInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		wa.review.checkMarkers(ctx)
		w := wa.Watcher
		if w == nil {
			continue
		}
		for _, id := range w.DegradedRoots() {
			// As the watcher's own look: what is still being written is
			// recorded at a later scan, once it settled, and a busy
			// store's record is tried again at the next.
			_, err := wa.watchLook(ctx, id, WatchQuiet)
			switch {
			case err == nil, errors.Is(err, context.Canceled):
			case store.IsBusy(err):
				wa.Log.Warn("periodic scan: the store is busy; trying again at the next", "session", id, "err", err)
			default:
				wa.Log.Error("periodic scan", "session", id, "err", err)
			}
		}
	}
}

// endVanished ends a session whose worktree was deleted by hand, and says
// why in the session's note. Its records stay readable. git's entry for
// the worktree goes; the branch goes too unless it holds commits the agent
// made (then it is kept, and the note names it).
func (wa *watcher) endVanished(ctx context.Context, s *prsm.Session) (string, error) {
	branch := s.Branch
	if tip, err := wa.Repo.Git().Output(ctx, worktree.NewCmd("rev-parse", "--verify", "-q").Rev(s.Branch+"^{commit}").Dir(wa.Repo.Root)); err != nil || tip != s.BaseCommit {
		branch = "" // agent commits (or no branch): keep whatever is there
	}
	note := "its worktree was deleted by hand; its records stay readable"
	if _, err := os.Lstat(s.WorktreePath); err == nil {
		note = "its worktree lost its .git file (deleted by hand, or a removal cut off); its records stay readable"
	}
	if branch == "" && s.Branch != "" {
		note += "; branch " + s.Branch + " is kept"
	}
	if err := wa.Repo.RemoveWorktree(ctx, s.WorktreePath, branch); err != nil {
		wa.Log.Warn("forget vanished worktree", "session", s.ID, "err", err)
	}
	if err := store.EndSessionNote(ctx, wa.DB.Q(), s.ID, time.Now().UTC(), note); err != nil {
		return "", err
	}
	wa.sessions.forgetState(s)
	return note, nil
}
