package engine

import (
	"context"
	"errors"
	"time"

	"github.com/prsm-dev/prsm/store"
)

// The stat cache's news (tracker.StatCache: the lstat facts of the files
// a tool call read) are stored apart from the tool calls' transactions,
// StatsDelay after the first tool call that left some, and before the
// server stops (SaveStats). A stat row only saves a read: a file whose
// facts differ from the stored ones is read again, and a file's ctime
// never goes back. So a crash that loses the newest rows costs reads
// after the restart, never a wrong record. Kept out of the capture's and
// the complete's transactions, they no longer add pages and statements
// to every tool call's commits (docs/performance.md).

// StatsDelay is how long after a tool call that left stat cache news
// they are stored, with those of the tool calls after it.
var StatsDelay = 2 * time.Second

// statsChanged has session st's stat cache news stored StatsDelay from
// now, unless a save is due already. The caller holds the session's lock.
func (e *Engine) statsChanged(st *sessionState) {
	if !st.tracker.Stats.Changed() {
		return
	}
	e.flushMu.Lock()
	defer e.flushMu.Unlock()
	if e.closed || e.statsTimer != nil {
		return
	}
	e.flushWG.Add(1)
	e.statsTimer = time.AfterFunc(StatsDelay, func() {
		defer e.flushWG.Done()
		e.flushMu.Lock()
		e.statsTimer = nil // news from now on are the next save's
		closed := e.closed
		e.flushMu.Unlock()
		if closed {
			return
		}
		if err := e.sessions.SaveStats(context.Background()); err != nil {
			e.Log.Warn("store stat cache", "err", err)
		}
	})
}

// SaveStats is Engine.SaveStats's work.
func (ss *sessionStates) SaveStats(ctx context.Context) error {
	states := map[string]*sessionState{}
	ss.sessions.each(func(id string, st *sessionState) {
		if st.active != nil {
			states[id] = st
		}
	})
	var errs []error
	for id, st := range states {
		st.mu.Lock() // held by a tool call's work after its answer until it is done
		stats := st.tracker.Stats.TakeChanged()
		st.mu.Unlock()
		if len(stats) == 0 {
			continue
		}
		err := ss.DB.Tx(ctx, func(q store.Querier) error { return store.PutStats(ctx, q, id, stats) })
		if err == nil {
			continue
		}
		if ss.sessions.loaded(id) != st {
			continue // the session ended meanwhile: nothing reads its cache
		}
		st.mu.Lock()
		st.tracker.Stats.Restore(stats) // for the next try
		st.mu.Unlock()
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
