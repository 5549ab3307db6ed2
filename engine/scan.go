package engine

import (
	"context"
	"errors"
	"time"
)

// ScanInterval is how often a session the watcher cannot cover (a worktree
// larger than the watch budget, or the kernel out of inotify watches) is
// scanned with git status for changes no tool call claimed.
var ScanInterval = 2 * time.Second

// startScanner starts scanDegraded; stopScanner ends it and waits.
func (e *Engine) startScanner(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	e.scanStop = func() { cancel(); <-done }
	go func() {
		defer close(done)
		e.scanDegraded(ctx)
	}()
}

func (e *Engine) stopScanner() {
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
func (e *Engine) scanDegraded(ctx context.Context) {
	t := time.NewTicker(ScanInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w := e.Watcher
		if w == nil {
			continue
		}
		for _, id := range w.DegradedRoots() {
			if _, err := e.WatchNow(ctx, id); err != nil && !errors.Is(err, context.Canceled) {
				e.Log.Error("periodic scan", "session", id, "err", err)
			}
		}
	}
}
