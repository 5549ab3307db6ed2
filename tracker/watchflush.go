package tracker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/fsnotify/fsnotify"
)

// A flush of the watcher: waiting until it has handled every event of a
// root up to now, by an event of its own (a sentinel) it waits for.

// Flush waits until every event that happened in root before the call has
// been handled: it makes an event of its own (a sentinel) and waits for
// it, since inotify delivers in order. The sentinel is a file of
// SentinelDir whose times it changes, or else a file it creates and
// removes in root. On timeout, or when the sentinel cannot be written,
// the root falls back to a full scan.
func (w *Watcher) Flush(ctx context.Context, root string) error {
	w.walkAgain(root)
	ch := make(chan struct{})
	w.mu.Lock()
	wr, ok := w.roots[root]
	if !ok {
		w.mu.Unlock()
		return fmt.Errorf("flush %s: not watched", root)
	}
	if _, watched := w.dirs[root]; !watched {
		w.setFull(wr)
		w.mu.Unlock()
		return nil
	}
	p, touch := w.takeSentinelLocked(root)
	op := fsnotify.Create
	if touch {
		op = fsnotify.Chmod // what changing a file's times reports
	}
	w.sentinels[p] = sentinelWait{ch: ch, op: op}
	w.mu.Unlock()
	var err error
	if touch {
		now := time.Now()
		err = os.Chtimes(p, now, now)
	} else {
		err = os.WriteFile(p, nil, 0o600)
		defer os.Remove(p)
	}
	if err != nil {
		// No sentinel (no descriptor left, a full disk): the look is a
		// full scan, which needs none of the events.
		w.mu.Lock()
		delete(w.sentinels, p)
		w.setFull(wr)
		w.mu.Unlock()
		w.log.Warn("file watcher flush: no sentinel; full scan", "root", root, "err", err)
		return nil
	}
	// The watcher may be busy with what came before the sentinel (the
	// walk of a tree the agent just made, thousands of directories or
	// levels deep): it is waited for while it moves, up to flushMax.
	// Giving up falls back to git status, which misses what it cannot
	// reach (paths too deep for it), so only a watcher that stopped
	// moving for flushQuiet, or one that takes flushMax, is given up on.
	quiet := time.NewTicker(flushQuiet)
	defer quiet.Stop()
	limit := time.NewTimer(flushMax)
	defer limit.Stop()
	last := w.progress.Load()
	for {
		select {
		case <-ch:
			if touch {
				// Reused only after its event arrived: a late event must
				// not end another flush early.
				w.putSentinel(p)
			}
			return nil
		case <-ctx.Done():
			w.mu.Lock()
			delete(w.sentinels, p)
			w.mu.Unlock()
			return ctx.Err()
		case <-quiet.C:
			if now := w.progress.Load(); now != last || w.handling.Load() {
				last = now
				continue
			}
		case <-limit.C:
		}
		w.mu.Lock()
		delete(w.sentinels, p)
		w.setFull(wr)
		w.mu.Unlock()
		w.log.Warn("file watcher flush timed out; full scan", "root", root)
		return nil
	}
}

// flushQuiet is how long a Flush waits for a watcher that handles no
// event and walks no directory meanwhile; flushMax how long it waits in
// all for one that keeps moving.
var (
	flushQuiet = 5 * time.Second
	flushMax   = 2 * time.Minute
)

// walkAgain walks, marking their files, the directories of root whose
// walk did not catch up: by the time of a flush the agent's tool has
// usually finished making them.
func (w *Watcher) walkAgain(root string) {
	w.mu.Lock()
	wr, ok := w.roots[root]
	var dirs []string
	if ok {
		for d := range wr.rewalk {
			dirs = append(dirs, d)
		}
		wr.rewalk = nil
	}
	w.mu.Unlock()
	sort.Strings(dirs)
	for _, d := range dirs {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			w.addTree(wr, d, true)
		}
	}
}

// sentinelWait is a flush waiting for its sentinel's event.
type sentinelWait struct {
	ch chan struct{}
	op fsnotify.Op
}

// takeSentinelLocked picks the sentinel of one flush: a spare file of
// SentinelDir (made once, then reused) when that directory is watched,
// else a new name in root.
func (w *Watcher) takeSentinelLocked(root string) (path string, touch bool) {
	if w.SentinelDir != "" && !w.sentinelW {
		if err := os.MkdirAll(w.SentinelDir, 0o700); err == nil && w.fs.Add(w.SentinelDir) == nil {
			w.sentinelW = true
		} else {
			w.SentinelDir = "" // not usable: sentinels in the worktrees
		}
	}
	if w.sentinelW {
		if n := len(w.spare); n > 0 {
			p := w.spare[n-1]
			w.spare = w.spare[:n-1]
			return p, true
		}
		w.nextSpare++
		p := filepath.Join(w.SentinelDir, fmt.Sprintf("%s%d", SentinelPrefix, w.nextSpare))
		if f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o600); err == nil {
			f.Close()
			return p, true
		}
	}
	var b [6]byte
	rand.Read(b[:])
	return filepath.Join(root, SentinelPrefix+hex.EncodeToString(b[:])), false
}

func (w *Watcher) putSentinel(p string) {
	w.mu.Lock()
	w.spare = append(w.spare, p)
	w.mu.Unlock()
}
