package engine

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/internal/safepath"
	"github.com/prsm-dev/prsm/worktree"
)

// A warm worktree makes a session start cost what changed, not the
// repository's size: the server checks one out in the background (at
// start, and again after each session takes it), and StartSession moves
// it into place and brings it to the workspace's snapshot by writing
// only the files that differ (worktree.Repo.TakeWarm). It lives in
// WorktreeDir/.warm, a name no session has: reconcile, gc and the hooks'
// lookup by directory never take it for a session's, and `git worktree
// list` shows it detached and locked with worktree.WarmReason. Once
// git status found it exactly as prepared (CleanWarm), an inotify watch
// (warmwatch.go) says whether anything changed in it since; without a
// watch the start runs git status again, beside its snapshot. One that
// someone edited is never handed to a session: it is removed and
// prepared anew, and the session starts cold. PRSM_WARM_WORKTREES=0
// turns it off.

// warmer keeps a warm worktree ready for the next session start and hands
// it over (warm.go, warmwatch.go); pool is its state, guarded by pool.mu.
type warmer struct {
	*Engine
	pool warmPool
}

// warmPool is the workspace's warm worktree and its preparation.
type warmPool struct {
	mu      stdsync.Mutex
	ctx     context.Context // the server's: its end stops a preparation
	on      bool
	ready   *warmTree // prepared and clean when last looked at; nil otherwise
	filling bool      // a preparation runs
	// doomed are warm worktrees found changed or refused by a session:
	// the next preparation removes them rather than keep them.
	doomed map[string]bool
	// taken counts the session starts that took a warm worktree.
	taken atomic.Int64
}

// noWarmWatch makes every warm worktree go unwatched (tests: the git
// status check).
var noWarmWatch bool

// warmTree is a prepared warm worktree: at path, holding commit, and
// watched for changes since it was found clean (nil: out of watches).
type warmTree struct {
	path, commit string
	watch        *warmWatch
}

// cleanSince watches the warm worktree at path and then checks it is
// clean at commit: from then on its watch tells whether it still is. It
// returns nil when it is not clean.
func (wm *warmer) cleanSince(ctx context.Context, path, commit string) (*warmTree, string, error) {
	var ww *warmWatch
	l, werr := wm.Repo.Linked(path)
	if werr == nil {
		ww, werr = watchWarm(path, l.GitDir)
	}
	if noWarmWatch {
		if werr == nil {
			ww.Close()
		}
		werr = errors.New("watching switched off")
	}
	if werr != nil {
		wm.Log.Debug("warm worktree not watched; a start checks it with git status", "err", werr)
		ww = nil
	}
	why, err := wm.Repo.CleanWarm(ctx, path, commit)
	if err != nil || why != "" {
		if ww != nil {
			ww.Close()
		}
		return nil, why, err
	}
	return &warmTree{path: path, commit: commit, watch: ww}, "", nil
}

// warmDir is where the warm worktree lives.
func (wm *warmer) warmDir() string { return filepath.Join(wm.WorktreeDir(), ".warm") }

// StartWarming is Engine.StartWarming's work.
func (wm *warmer) StartWarming(ctx context.Context) {
	wm.pool.mu.Lock()
	wm.pool.ctx = ctx
	wm.pool.on = os.Getenv("PRSM_WARM_WORKTREES") != "0"
	wm.pool.mu.Unlock()
	wm.refillWarm()
	context.AfterFunc(ctx, func() {
		// The watch of the ready one ends with the server; a next
		// server checks it with git status.
		wm.pool.mu.Lock()
		defer wm.pool.mu.Unlock()
		if w := wm.pool.ready; w != nil && w.watch != nil {
			w.watch.Close()
			w.watch = nil
		}
	})
}

// refillWarm starts a preparation unless one runs or a warm worktree is
// ready.
func (wm *warmer) refillWarm() {
	wm.flushMu.Lock()
	closed := wm.closed
	wm.flushMu.Unlock()
	wm.pool.mu.Lock()
	defer wm.pool.mu.Unlock()
	if closed || wm.pool.ctx == nil || wm.pool.filling || wm.pool.ready != nil {
		return
	}
	wm.pool.filling = true
	ctx := wm.pool.ctx
	wm.background(func() {
		w := wm.prepareWarm(ctx)
		wm.pool.mu.Lock()
		wm.pool.filling = false
		wm.pool.ready = w
		if w != nil && w.watch != nil && ctx.Err() != nil {
			w.watch.Close() // the server's end came first
			w.watch = nil
		}
		wm.pool.mu.Unlock()
		if w != nil {
			wm.Log.Info("warm worktree ready", "path", w.path, "commit", w.commit)
		}
	})
}

// prepareWarm removes what is in warmDir but a clean warm worktree, and
// makes one when there is none (and warm worktrees are on). It returns
// the warm worktree, nil when there is none.
func (wm *warmer) prepareWarm(ctx context.Context) *warmTree {
	if ctx.Err() != nil {
		return nil // the server stops: what is there stays for the next
	}
	wm.pool.mu.Lock()
	on := wm.pool.on
	wm.pool.mu.Unlock()
	var kept *warmTree
	for _, path := range wm.warmPaths(ctx) {
		wm.pool.mu.Lock()
		doomed := wm.pool.doomed[path]
		delete(wm.pool.doomed, path)
		wm.pool.mu.Unlock()
		if fi, err := os.Lstat(path); on && kept == nil && err == nil && fi.IsDir() && !doomed {
			if w := wm.leftWarm(ctx, path); w != nil {
				kept = w
				continue
			}
		}
		wm.removeWarm(ctx, path)
	}
	if !on || kept != nil || ctx.Err() != nil {
		return kept
	}
	head, err := wm.Repo.Head(ctx)
	if err != nil || head == "" {
		return nil // no commit yet: every start is cold
	}
	if err := os.MkdirAll(wm.warmDir(), 0o700); err != nil {
		wm.Log.Warn("warm worktree", "err", err)
		return nil
	}
	path := filepath.Join(safepath.Real(wm.warmDir()), "w"+newID())
	wm.mu.Lock()
	err = wm.Repo.AddWarm(ctx, path, head)
	wm.mu.Unlock()
	if err == nil {
		err = wm.Repo.FillWarm(ctx, path)
	}
	why := ""
	var w *warmTree
	if err == nil {
		w, why, err = wm.cleanSince(ctx, path, head)
	}
	if err != nil || why != "" {
		if ctx.Err() != nil {
			// The server stops: the next one's preparation removes
			// what was cut off, and this one's end does not wait.
			return nil
		}
		wm.Log.Warn("warm worktree not prepared", "err", err, "why", why)
		wm.removeWarm(ctx, path)
		return nil
	}
	return w
}

// warmPaths lists what lies in warmDir, and the worktrees git has there
// whose directory is gone.
func (wm *warmer) warmPaths(ctx context.Context) []string {
	dir := safepath.Real(wm.warmDir())
	seen := map[string]bool{}
	var paths []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, ent := range ents {
		add(filepath.Join(dir, ent.Name()))
	}
	out, err := wm.Repo.Git().Run(ctx, worktree.NewCmd("worktree", "list", "--porcelain", "-z").Dir(wm.Repo.Root))
	if err != nil {
		return paths
	}
	for _, f := range bytes.Split(out, []byte{0}) {
		if p, ok := bytes.CutPrefix(f, []byte("worktree ")); ok && filepath.Dir(string(p)) == dir {
			add(string(p))
		}
	}
	return paths
}

// leftWarm is the warm worktree at path, left by an earlier server, when
// it is still clean.
func (wm *warmer) leftWarm(ctx context.Context, path string) *warmTree {
	out, err := wm.Repo.RunIn(ctx, path, worktree.NewCmd("rev-parse", "--verify", "HEAD"))
	if err != nil {
		return nil
	}
	w, _, _ := wm.cleanSince(ctx, path, strings.TrimSpace(string(out)))
	return w
}

// removeWarm removes the warm worktree at path, files first without the
// engine's lock, then git's entry under it.
func (wm *warmer) removeWarm(ctx context.Context, path string) {
	err := wm.Repo.RemoveWarm(ctx, path, func(fn func() error) error {
		wm.mu.Lock()
		defer wm.mu.Unlock()
		return fn()
	})
	if err != nil {
		wm.Log.Warn("remove warm worktree", "path", path, "err", err)
	}
}

// warmCheck is CleanWarm's answer.
type warmCheck struct {
	why string
	err error
}

// takeWarm takes the ready warm worktree, if any, and starts checking in
// the background that it is clean (the caller snapshots meanwhile). The
// caller holds the engine's mu.
func (wm *warmer) takeWarm(ctx context.Context) (*warmTree, <-chan warmCheck) {
	wm.pool.mu.Lock()
	w := wm.pool.ready
	wm.pool.ready = nil
	wm.pool.mu.Unlock()
	if w == nil {
		return nil, nil
	}
	ch := make(chan warmCheck, 1)
	if w.watch != nil {
		quiet := w.watch.Quiet(2 * time.Second)
		w.watch.Close()
		w.watch = nil
		if quiet {
			ch <- warmCheck{}
		} else {
			ch <- warmCheck{why: "a file or directory in it changed"}
		}
		return w, ch
	}
	go func() {
		why, err := wm.Repo.CleanWarm(ctx, w.path, w.commit)
		ch <- warmCheck{why, err}
	}()
	return w, ch
}

// doomWarm marks the warm worktree w for removal by the next
// preparation.
func (wm *warmer) doomWarm(w *warmTree) {
	wm.pool.mu.Lock()
	if wm.pool.doomed == nil {
		wm.pool.doomed = map[string]bool{}
	}
	wm.pool.doomed[w.path] = true
	wm.pool.mu.Unlock()
}

// returnWarm gives back the warm worktree w that takeWarm took for a
// start that failed before using it: ready again when clean.
func (wm *warmer) returnWarm(w *warmTree, check <-chan warmCheck) {
	if w == nil {
		return
	}
	defer wm.refillWarm()
	if c := <-check; c.err != nil || c.why != "" {
		wm.doomWarm(w)
		return
	}
	wm.pool.mu.Lock()
	if wm.pool.ready == nil {
		wm.pool.ready = w
	}
	wm.pool.mu.Unlock()
}

// startWarm makes s's worktree out of the warm worktree w (none: it
// reports false at once), which check says is clean or not, seeded with
// commit. It reports whether it did; when not, s's worktree does not
// exist and the caller starts cold. A warm worktree that was not clean,
// or not taken, is removed and another prepared. The caller holds the engine's mu.
func (wm *warmer) startWarm(ctx context.Context, s *prsm.Session, commit string, w *warmTree, check <-chan warmCheck) bool {
	if w == nil {
		return false
	}
	defer wm.refillWarm()
	c := <-check
	if c.err != nil || c.why != "" {
		wm.Log.Warn("warm worktree changed since it was prepared; starting cold and preparing another", "why", c.why, "err", c.err)
		wm.doomWarm(w)
		return false
	}
	err := wm.Repo.TakeWarm(ctx, w.path, w.commit, s.WorktreePath, s.Branch, commit)
	if err == nil {
		wm.pool.taken.Add(1)
		return true
	}
	wm.Log.Warn("warm worktree not taken; starting cold", "session", s.ID, "err", err)
	if _, serr := os.Lstat(s.WorktreePath); serr == nil {
		// Moved, not checked out: removed with its branch, so the cold
		// start finds the place free.
		if rerr := wm.Repo.RemoveWorktree(context.WithoutCancel(ctx), s.WorktreePath, s.Branch); rerr != nil {
			wm.Log.Error("remove half-taken warm worktree", "path", s.WorktreePath, "err", rerr)
		}
		return false
	}
	wm.doomWarm(w)
	return false
}
