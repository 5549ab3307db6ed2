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
// larger than the watch budget, or the kernel out of inotify watches) is
// scanned with git status for changes no tool call claimed.
var ScanInterval = 2 * time.Second

// startScanner starts scanDegraded; stopScanner ends it and waits.
func (e *watcher) startScanner(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	e.scanStop = func() { cancel(); <-done }
	go func() {
		defer close(done)
		e.scanDegraded(ctx)
	}()
}

func (e *watcher) stopScanner() {
	if e.scanStop != nil {
		e.scanStop()
		e.scanStop = nil
	}
}

// scanDegraded gives the sessions the watcher cannot cover what events
// would: every ScanInterval a look (a full git status scan, since their
// dirty set is never trusted) that turns unclaimed changes into Watch
// records. Tool calls need no help: their complete always scans such a
// worktree. It runs until ctx ends.
func (e *watcher) scanDegraded(ctx context.Context) {
	t := time.NewTicker(ScanInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		e.review.checkMarkers(ctx)
		w := e.Watcher
		if w == nil {
			continue
		}
		for _, id := range w.DegradedRoots() {
			// As the watcher's own look: what is still being written is
			// recorded at a later scan, once it settled, and a busy
			// store's record is tried again at the next.
			_, err := e.watchLook(ctx, id, WatchQuiet)
			switch {
			case err == nil, errors.Is(err, context.Canceled):
			case store.IsBusy(err):
				e.Log.Warn("periodic scan: the store is busy; trying again at the next", "session", id, "err", err)
			default:
				e.Log.Error("periodic scan", "session", id, "err", err)
			}
		}
	}
}

// endVanished ends a session whose worktree was deleted by hand, and says
// why in the session's note. Its records stay readable. git's entry for
// the worktree goes; the branch goes too unless it holds commits the agent
// made (then it is kept, and the note names it).
func (e *watcher) endVanished(ctx context.Context, s *prsm.Session) (string, error) {
	branch := s.Branch
	if tip, err := e.Repo.Git().Output(ctx, worktree.NewCmd("rev-parse", "--verify", "-q").Rev(s.Branch+"^{commit}").Dir(e.Repo.Root)); err != nil || tip != s.BaseCommit {
		branch = "" // agent commits (or no branch): keep whatever is there
	}
	note := "its worktree was deleted by hand; its records stay readable"
	if _, err := os.Lstat(s.WorktreePath); err == nil {
		note = "its worktree lost its .git file (deleted by hand, or a removal cut off); its records stay readable"
	}
	if branch == "" && s.Branch != "" {
		note += "; branch " + s.Branch + " is kept"
	}
	if err := e.Repo.RemoveWorktree(ctx, s.WorktreePath, branch); err != nil {
		e.Log.Warn("forget vanished worktree", "session", s.ID, "err", err)
	}
	if err := store.EndSessionNote(ctx, e.DB.Q(), s.ID, time.Now().UTC(), note); err != nil {
		return "", err
	}
	e.sessions.forgetState(s)
	return note, nil
}
