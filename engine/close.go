package engine

// warmBase reads the trees of a session's base commit into the tree cache
// in the background (worktree.WarmTrees): without it, the first change in
// each directory of a large repository waited for its tree to be read
// from the pack.
func (e *Engine) warmBase(commit string) {
	objs, err := e.Repo.Objects()
	if err != nil {
		return
	}
	e.background(func() {
		objs.WarmTrees(commit, 0, func() bool {
			e.flushMu.Lock()
			defer e.flushMu.Unlock()
			return e.closed
		})
	})
}

// background runs fn in a goroutine that Close waits for; once the engine
// is closed it runs fn at once instead.
func (e *Engine) background(fn func()) {
	e.flushMu.Lock()
	if e.closed {
		e.flushMu.Unlock()
		fn()
		return
	}
	e.settleWG.Add(1)
	e.flushMu.Unlock()
	go func() {
		defer e.settleWG.Done()
		fn()
	}()
}

// whileOpen runs fn in this goroutine, counted as background work that
// Close waits for; once Close has begun it does not run fn. A timer's
// work (the watcher's quiet timer) goes through it: run after Close, it
// would use a closed store.
func whileOpen(e *Engine, fn func()) {
	e.flushMu.Lock()
	if e.closed {
		e.flushMu.Unlock()
		return
	}
	e.settleWG.Add(1)
	e.flushMu.Unlock()
	defer e.settleWG.Done()
	fn()
}

// Close stops the engine's background work (the delayed writing of
// checkpoint objects and of the stat caches) and waits for it. What is
// still pending stays in the store for FlushObjects or the next start; the
// stat caches' news not saved (SaveStats) are lost, which costs reads
// after the next start. The engine is not used after.
func (e *Engine) Close() {
	e.flushMu.Lock()
	e.closed = true
	t, st := e.flushTimer, e.statsTimer
	e.flushMu.Unlock()
	if t != nil && t.Stop() {
		e.flushWG.Done() // it will not run
	}
	if st != nil && st.Stop() {
		e.flushWG.Done()
	}
	e.flushWG.Wait()
	e.settleWG.Wait()
	e.watch.stopScanner()
	e.sessions.each(func(_ string, st *sessionState) {
		st.tracker.Close() // its running check-ignore
	})
}

// closing reports whether Close has begun.
func (e *Engine) closing() bool {
	e.flushMu.Lock()
	defer e.flushMu.Unlock()
	return e.closed
}
