package tracker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	stdsync "sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// SentinelPrefix names the files a flush writes; they are scratch files
// (IsScratch) and never recorded.
const SentinelPrefix = ".prsm-tmp-sentinel-"

// Watcher watches every session worktree with one inotify instance and one
// watch per directory, and keeps, per worktree, the set of paths that changed
// since the tracker last looked. When inotify overflows or runs out of
// watches, the worktree falls back to a full scan (git status), and says so.
type Watcher struct {
	fs  *fsnotify.Watcher
	log *slog.Logger
	// Changed is called (without locks held) with a session id whenever
	// one of its worktrees gets a change.
	Changed func(sessionID string)
	// Ignored reports which of the given directories (relative to root)
	// git ignores, so they are not watched; nil watches everything.
	Ignored func(root string, dirs []string) map[string]bool
	// Budget caps the directories watched over all worktrees (0: only the
	// kernel's max_user_watches). Budget and MaxDirty are set before the
	// first Add. A worktree that does not fit is scanned
	// instead, as when the kernel runs out of watches.
	Budget int
	// MaxDirty caps the paths remembered per worktree (0: DefaultMaxDirty).
	// A burst beyond it (an unignored npm install) is not kept path by
	// path: the next look is one git status scan, which costs less.
	MaxDirty int

	mu        stdsync.Mutex
	roots     map[string]*watchedRoot // by worktree root
	dirs      map[string]*watchedRoot // watched directory -> its root
	sentinels map[string]chan struct{}
	ignored   map[string]bool // directories left unwatched because git ignores them
	gen       uint64
	done      chan struct{}
}

type watchedRoot struct {
	sessionID string
	root      string
	dirty     map[string]uint64 // rel path -> generation of its newest event
	full      uint64            // non-zero: the next look must be a full scan (generation of the cause)
	degraded  string            // why this root is scanned, not watched ("" = watched)
}

// NewWatcher starts a watcher.
func NewWatcher(log *slog.Logger) (*Watcher, error) {
	f, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("start file watcher: %w", err)
	}
	w := &Watcher{fs: f, log: log, roots: map[string]*watchedRoot{}, dirs: map[string]*watchedRoot{},
		sentinels: map[string]chan struct{}{}, ignored: map[string]bool{}, done: make(chan struct{})}
	go w.loop()
	return w, nil
}

// Close stops the watcher.
func (w *Watcher) Close() error {
	err := w.fs.Close()
	<-w.done
	return err
}

// Add starts watching a session's worktree. Every directory is watched
// except .git and ignored ones.
func (w *Watcher) Add(sessionID, root string) error {
	wr := &watchedRoot{sessionID: sessionID, root: root, dirty: map[string]uint64{}}
	w.mu.Lock()
	w.roots[root] = wr
	w.mu.Unlock()
	w.addTree(wr, root, false)
	return nil
}

// Remove stops watching a worktree.
func (w *Watcher) Remove(root string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.roots, root)
	for d, wr := range w.dirs {
		if wr.root == root {
			w.fs.Remove(d)
			delete(w.dirs, d)
		}
	}
}

// addTree watches dir and every directory below it. When mark is set
// (a directory that appeared while watching), its files are marked dirty:
// they may have been written before the watch existed. Watches are added
// before the files are listed, and the directories are listed again until
// no unwatched one is left, so nothing created meanwhile slips through.
func (w *Watcher) addTree(wr *watchedRoot, dir string, mark bool) {
	for round := 0; round < 10; round++ {
		var fresh []string
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			if d.Name() == ".git" && p != dir {
				return filepath.SkipDir
			}
			w.mu.Lock()
			_, watched := w.dirs[p]
			ignored := w.ignored[p]
			w.mu.Unlock()
			if ignored {
				return filepath.SkipDir
			}
			if !watched {
				fresh = append(fresh, p)
			}
			return nil
		})
		fresh = w.dropIgnored(wr, fresh)
		if len(fresh) == 0 {
			break
		}
		for _, d := range fresh {
			w.watchDir(wr, d)
		}
	}
	if !mark {
		return
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			w.mu.Lock()
			_, watched := w.dirs[p]
			w.mu.Unlock()
			if !watched {
				return filepath.SkipDir // .git or ignored
			}
			return nil
		}
		files = append(files, p)
		return nil
	})
	w.mu.Lock()
	for _, f := range files {
		w.markLocked(wr, f)
	}
	w.mu.Unlock()
}

// dropIgnored removes the directories git ignores (and those below them).
// The ignored ones are remembered as watched-elsewhere so they are not
// listed again.
func (w *Watcher) dropIgnored(wr *watchedRoot, dirs []string) []string {
	if w.Ignored == nil || len(dirs) == 0 {
		return dirs
	}
	var rels []string
	for _, d := range dirs {
		if rel, err := filepath.Rel(wr.root, d); err == nil && rel != "." {
			rels = append(rels, filepath.ToSlash(rel))
		}
	}
	if len(rels) == 0 {
		return dirs
	}
	ign := w.Ignored(wr.root, rels)
	if len(ign) == 0 {
		return dirs
	}
	kept := dirs[:0]
	for _, d := range dirs {
		rel, _ := filepath.Rel(wr.root, d)
		skip := false
		for r := filepath.ToSlash(rel); r != "." && r != ""; r = pathDir(r) {
			if ign[r] {
				skip = true
				break
			}
		}
		if skip {
			w.mu.Lock()
			w.ignored[d] = true
			w.mu.Unlock()
			continue
		}
		kept = append(kept, d)
	}
	return kept
}

// DefaultMaxDirty is the dirty paths kept per worktree before a burst
// falls back to a full scan.
const DefaultMaxDirty = 20_000

// errBudget is a watch refused because Budget is spent.
var errBudget = fmt.Errorf("watch budget spent: %w", syscall.ENOSPC)

func (w *Watcher) watchDir(wr *watchedRoot, d string) {
	w.mu.Lock()
	full := w.Budget > 0 && len(w.dirs) >= w.Budget
	w.mu.Unlock()
	var err error
	if full {
		err = errBudget
	} else {
		err = w.fs.Add(d)
	}
	if err != nil {
		w.mu.Lock()
		if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) {
			if wr.degraded == "" {
				wr.degraded = "out of inotify watches; scanning with git status instead"
				if errors.Is(err, errBudget) {
					wr.degraded = fmt.Sprintf("larger than the watch budget (%d directories); scanning with git status instead", w.Budget)
				}
				w.log.Warn("file watcher fallback", "session", wr.sessionID, "reason", wr.degraded)
			}
		}
		w.setFull(wr)
		w.mu.Unlock()
		return
	}
	w.mu.Lock()
	if _, ok := w.roots[wr.root]; ok {
		w.dirs[d] = wr
	}
	w.mu.Unlock()
}

func pathDir(rel string) string {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return ""
	}
	return rel[:i]
}

func (w *Watcher) setFull(wr *watchedRoot) {
	w.gen++
	wr.full = w.gen
}

func (w *Watcher) markLocked(wr *watchedRoot, p string) {
	rel, err := filepath.Rel(wr.root, p)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return
	}
	w.gen++
	wr.dirty[filepath.ToSlash(rel)] = w.gen
	max := w.MaxDirty
	if max <= 0 {
		max = DefaultMaxDirty
	}
	if len(wr.dirty) > max {
		// Forget the paths: the full scan finds them all. Memory stays
		// bounded whatever the burst.
		clear(wr.dirty)
		w.setFull(wr)
	}
}

func (w *Watcher) loop() {
	defer close(w.done)
	for {
		select {
		case ev, ok := <-w.fs.Events:
			if !ok {
				return
			}
			w.handle(ev)
		case err, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			w.mu.Lock()
			for _, wr := range w.roots {
				w.setFull(wr)
			}
			w.mu.Unlock()
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.log.Warn("file watcher queue overflow; the next look at each session is a full git status scan")
			} else {
				w.log.Warn("file watcher error; falling back to a full scan", "err", err)
			}
			w.notifyAll()
		}
	}
}

func (w *Watcher) notifyAll() {
	w.mu.Lock()
	var ids []string
	for _, wr := range w.roots {
		ids = append(ids, wr.sessionID)
	}
	w.mu.Unlock()
	for _, id := range ids {
		if w.Changed != nil {
			w.Changed(id)
		}
	}
}

func (w *Watcher) handle(ev fsnotify.Event) {
	base := filepath.Base(ev.Name)
	if strings.HasPrefix(base, SentinelPrefix) {
		if ev.Has(fsnotify.Create) {
			w.mu.Lock()
			ch, ok := w.sentinels[ev.Name]
			delete(w.sentinels, ev.Name)
			w.mu.Unlock()
			if ok {
				close(ch)
			}
		}
		return
	}
	w.mu.Lock()
	wr := w.dirs[filepath.Dir(ev.Name)]
	if wr == nil {
		wr = w.dirs[ev.Name]
	}
	if wr == nil {
		w.mu.Unlock()
		return
	}
	var newDir bool
	switch {
	case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename):
		if _, isDir := w.dirs[ev.Name]; isDir {
			// A directory went away or moved: drop the watches of its
			// whole subtree (inotify would go on reporting old paths) and
			// scan fully next time, since its files were not reported
			// one by one.
			prefix := ev.Name + string(filepath.Separator)
			for d := range w.dirs {
				if d == ev.Name || strings.HasPrefix(d, prefix) {
					w.fs.Remove(d)
					delete(w.dirs, d)
				}
			}
			w.setFull(wr)
		}
		w.markLocked(wr, ev.Name)
	case ev.Has(fsnotify.Create):
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
			newDir = true
		} else {
			w.markLocked(wr, ev.Name)
		}
	default:
		w.markLocked(wr, ev.Name)
	}
	id := wr.sessionID
	w.mu.Unlock()
	if newDir {
		w.addTree(wr, ev.Name, true)
	}
	if w.Changed != nil {
		w.Changed(id)
	}
}

// ErrFlushTimeout means a sentinel's event did not arrive in time.
var ErrFlushTimeout = errors.New("file watcher flush timed out")

// Flush waits until every event that happened in root before the call has
// been handled: it writes a sentinel file and waits for its event (inotify
// delivers in order). On timeout the root falls back to a full scan.
func (w *Watcher) Flush(ctx context.Context, root string) error {
	var b [6]byte
	rand.Read(b[:])
	p := filepath.Join(root, SentinelPrefix+hex.EncodeToString(b[:]))
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
	w.sentinels[p] = ch
	w.mu.Unlock()
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		w.mu.Lock()
		delete(w.sentinels, p)
		w.setFull(wr)
		w.mu.Unlock()
		return fmt.Errorf("flush %s: %w", root, err)
	}
	defer os.Remove(p)
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		w.mu.Lock()
		delete(w.sentinels, p)
		w.setFull(wr)
		w.mu.Unlock()
		w.log.Warn("file watcher flush timed out; full scan", "root", root)
		return nil
	}
}

// Dirty is what changed in a root since the tracker last acknowledged.
type Dirty struct {
	Paths []string
	// Full means events may have been lost: scan everything.
	Full    bool
	gens    map[string]uint64
	fullGen uint64
	root    string
}

// Peek returns the dirty set of root without clearing it.
func (w *Watcher) Peek(root string) Dirty {
	w.mu.Lock()
	defer w.mu.Unlock()
	d := Dirty{root: root, gens: map[string]uint64{}}
	wr, ok := w.roots[root]
	if !ok {
		d.Full = true
		return d
	}
	d.Full = wr.full != 0 || wr.degraded != ""
	d.fullGen = wr.full
	for p, g := range wr.dirty {
		d.Paths = append(d.Paths, p)
		d.gens[p] = g
	}
	sort.Strings(d.Paths)
	return d
}

// Ack clears what d reported, keeping paths that changed again since.
func (w *Watcher) Ack(d Dirty) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wr, ok := w.roots[d.root]
	if !ok {
		return
	}
	for p, g := range d.gens {
		if wr.dirty[p] == g {
			delete(wr.dirty, p)
		}
	}
	if d.Full && wr.full == d.fullGen {
		wr.full = 0
	}
}

// DegradedRoots lists the worktrees (by session id) that are scanned
// instead of watched: they get no events, so someone must look at them
// from time to time.
func (w *Watcher) DegradedRoots() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var ids []string
	for _, wr := range w.roots {
		if wr.degraded != "" {
			ids = append(ids, wr.sessionID)
		}
	}
	sort.Strings(ids)
	return ids
}

// Degraded reports, per session, why it is scanned instead of watched.
func (w *Watcher) Degraded() map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]string{}
	for _, wr := range w.roots {
		if wr.degraded != "" {
			out[wr.sessionID] = wr.degraded
		}
	}
	return out
}
