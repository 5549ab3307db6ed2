package engine

import (
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	stdsync "sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// warmWatch watches a prepared warm worktree for any change (inotify on
// every directory), so that a session start need not run git status in
// it: a change of any file or directory, or a lost event, marks it
// changed. Without a watch (out of watches) the start runs CleanWarm.
type warmWatch struct {
	fw   *fsnotify.Watcher
	root string

	mu       stdsync.Mutex
	changed  bool
	sentinel string        // the file Quiet creates, whose events are its own
	seen     chan struct{} // closed when the sentinel's creation is seen
	done     chan struct{} // closed when the loop ends
	once     stdsync.Once
}

// watchWarm watches every directory of the warm worktree at root, and
// git's entry for it, gitDir (its index and HEAD live there: a git add
// or commit in it changes them).
func watchWarm(root, gitDir string) (*warmWatch, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := fw.Add(gitDir); err != nil {
		fw.Close()
		return nil, err
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return fw.Add(p)
		}
		return nil
	})
	if err != nil {
		fw.Close()
		return nil, err
	}
	ww := &warmWatch{fw: fw, root: root, done: make(chan struct{})}
	go ww.loop()
	return ww, nil
}

func (ww *warmWatch) loop() {
	defer close(ww.done)
	for {
		select {
		case ev, ok := <-ww.fw.Events:
			if !ok {
				return
			}
			ww.mu.Lock()
			if ev.Name == ww.sentinel && ww.sentinel != "" {
				if ev.Has(fsnotify.Create) && ww.seen != nil {
					close(ww.seen)
					ww.seen = nil
				}
			} else {
				ww.changed = true
			}
			ww.mu.Unlock()
		case _, ok := <-ww.fw.Errors:
			if !ok {
				return
			}
			ww.mu.Lock()
			ww.changed = true // an overflow: events were lost
			ww.mu.Unlock()
		}
	}
}

// Quiet reports whether nothing changed in the worktree since it was
// watched. The kernel queues a watch's events in order, so once the
// event of a sentinel file created now arrives, every change made before
// it has been seen; the sentinel is removed again.
func (ww *warmWatch) Quiet(timeout time.Duration) bool {
	var b [6]byte
	rand.Read(b[:])
	name := filepath.Join(ww.root, ".prsm-warm-"+hex.EncodeToString(b[:]))
	seen := make(chan struct{})
	ww.mu.Lock()
	ww.sentinel, ww.seen = name, seen
	ww.mu.Unlock()
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false
	}
	f.Close()
	defer os.Remove(name)
	select {
	case <-seen:
	case <-time.After(timeout):
		return false
	}
	ww.mu.Lock()
	defer ww.mu.Unlock()
	return !ww.changed
}

// Close stops watching; closing again does nothing.
func (ww *warmWatch) Close() {
	ww.once.Do(func() {
		ww.fw.Close()
		<-ww.done
	})
}
