package tracker

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"syscall"

	"github.com/fsnotify/fsnotify"

	"github.com/prsm-dev/prsm/internal/safepath"
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
	// Written, when set, is called (without locks held, on the watcher's
	// goroutine: it must not block) with the worktree-relative path of a
	// file that was created or written.
	Written func(sessionID, rel string)
	// Ignored reports which of the given directories (relative to root)
	// git ignores, so they are not watched; nil watches everything.
	Ignored func(root string, dirs []string) map[string]bool
	// Budget caps the directories watched over all worktrees (0: only the
	// kernel's max_user_watches). Budget and MaxDirty are set before the
	// first Add. A worktree that does not fit is scanned
	// instead, as when the kernel runs out of watches.
	Budget int
	// SentinelDir, when set, is a directory of prsm's own where Flush
	// touches a file instead of creating and removing one in the
	// worktree: inotify orders all of one instance's events, so any event
	// is a barrier, and changing a file's times costs far less than
	// creating it. Set before the first Add.
	SentinelDir string
	// MaxDirty caps the paths remembered per worktree (0: DefaultMaxDirty).
	// A burst beyond it (an unignored npm install) is not kept path by
	// path: the next look is one git status scan, which costs less.
	MaxDirty int
	// RemoteFS names the network file system a worktree is on ("" for a
	// local one); such a worktree is scanned, not watched. NewWatcher
	// sets it (statfs); tests replace it before the first Add.
	RemoteFS func(root string) string
	// Kqueue says the backend takes a descriptor per watched file and
	// directory (darwin and the BSDs); then a worktree is watched only
	// while all watched worktrees' files fit KqueueBound(OpenFiles), and
	// scanned otherwise. NewWatcher sets both (runtime.GOOS, ulimit -n);
	// tests replace them before the first Add.
	Kqueue    bool
	OpenFiles uint64

	mu        stdsync.Mutex
	roots     map[string]*watchedRoot // by worktree root
	dirs      map[string]*watchedRoot // watched directory -> its root
	sentinels map[string]sentinelWait
	spare     []string // sentinel files in SentinelDir not in use
	nextSpare int
	sentinelW bool            // SentinelDir is watched
	ignored   map[string]bool // directories left unwatched because git ignores them
	// tooLong holds the directories left unwatched because their path is
	// longer than the system takes: they are reported (as dirty paths,
	// which the tracker finds too long to record) and not tried again.
	tooLong map[string]bool
	kqUsed  int // descriptors the kqueue worktrees were counted at (Kqueue)
	// noBackend limits every worktree of a ScanningWatcher (fs is nil).
	noBackend Limit
	gen       uint64
	done      chan struct{}
	// progress counts the events handled and the directories walked, and
	// handling is set while an event is handled: a Flush waits past
	// flushQuiet for as long as the watcher moves or works on an event
	// (a walk that waits on git check-ignore moves no count).
	progress atomic.Uint64
	handling atomic.Bool
}

type watchedRoot struct {
	sessionID string
	root      string
	dirty     map[string]uint64 // rel path -> generation of its newest event
	full      uint64            // non-zero: the next look must be a full scan (generation of the cause)
	limit     Limit             // why this root is scanned, not watched (no Cause: watched)
	kqCost    int               // descriptors counted for it (Kqueue)
	rewalk    map[string]bool   // directories whose walk did not catch up (addTree)
}

// NewWatcher starts a watcher.
func NewWatcher(log *slog.Logger) (*Watcher, error) {
	f, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("start file watcher: %w", err)
	}
	w := &Watcher{fs: f, log: log, roots: map[string]*watchedRoot{}, dirs: map[string]*watchedRoot{},
		sentinels: map[string]sentinelWait{}, ignored: map[string]bool{}, tooLong: map[string]bool{}, done: make(chan struct{}),
		RemoteFS: remoteFS, Kqueue: usesKqueue(runtime.GOOS), OpenFiles: openFilesLimit()}
	go w.loop()
	return w, nil
}

// Close stops the watcher.
func (w *Watcher) Close() error {
	if w.fs == nil {
		return nil // a ScanningWatcher
	}
	err := w.fs.Close()
	<-w.done
	return err
}

// Add starts watching a session's worktree. Every directory is watched
// except .git and ignored ones. A worktree on a network file system, or
// (kqueue) one whose files would take too many descriptors, is scanned
// instead, and says why (Limits).
func (w *Watcher) Add(sessionID, root string) error {
	wr := &watchedRoot{sessionID: sessionID, root: root, dirty: map[string]uint64{}}
	w.mu.Lock()
	w.roots[root] = wr
	if w.fs == nil {
		w.degradeLocked(wr, w.noBackend)
	}
	w.mu.Unlock()
	if w.fs == nil {
		return nil
	}
	if w.RemoteFS != nil {
		if name := w.RemoteFS(root); name != "" {
			w.mu.Lock()
			w.degradeLocked(wr, remoteLimit(name))
			w.mu.Unlock()
			return nil
		}
	}
	if w.Kqueue && !w.fitKqueue(wr) {
		return nil
	}
	w.addTree(wr, root, false)
	return nil
}

// fitKqueue counts what watching wr with kqueue costs and reserves it,
// or, past the bound, marks wr as scanned and reports false.
func (w *Watcher) fitKqueue(wr *watchedRoot) bool {
	bound := KqueueBound(w.OpenFiles)
	w.mu.Lock()
	room := bound - w.kqUsed
	w.mu.Unlock()
	cost := w.kqueueCost(wr.root, room)
	w.mu.Lock()
	defer w.mu.Unlock()
	if cost > bound-w.kqUsed {
		w.degradeLocked(wr, Limit{Cause: LimitKqueue,
			Reason: fmt.Sprintf("too large to watch with kqueue: %d files and directories would take more than the %d descriptors left to it%s", cost, max(bound-w.kqUsed, 0), openFilesNote()) + scanNote,
			Fix:    descriptorsFix()})
		return false
	}
	wr.kqCost = cost
	w.kqUsed += cost
	return true
}

// Remove stops watching a worktree.
func (w *Watcher) Remove(root string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if wr := w.roots[root]; wr != nil {
		w.kqUsed -= wr.kqCost
	}
	delete(w.roots, root)
	for d, wr := range w.dirs {
		if wr.root == root {
			w.fs.Remove(d)
			delete(w.dirs, d)
		}
	}
	for d := range w.tooLong {
		if d == root || strings.HasPrefix(d, root+string(filepath.Separator)) {
			delete(w.tooLong, d)
		}
	}
}

// addTree watches dir and every directory below it. When mark is set
// (a directory that appeared while watching), its files are marked dirty:
// they may have been written before the watch existed. Watches are added
// before the files are listed, and the directories are listed again until
// no unwatched one is left, so nothing created meanwhile slips through.
// When the walks do not catch up (a script makes a chain of directories,
// each inside the last, faster than watches are added), what the last
// walk missed has no watch and sends no event: the next look is a full
// scan, and the next Flush walks dir again.
func (w *Watcher) addTree(wr *watchedRoot, dir string, mark bool) {
	caught := false
	for round := 0; round < maxWalks; round++ {
		var fresh []string
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if l, ok := w.errLimit(err); ok {
				// A directory not listed (no descriptor left): what
				// is below it gets no watch, so scan.
				w.mu.Lock()
				w.degradeLocked(wr, l)
				w.mu.Unlock()
			}
			if err != nil || !d.IsDir() {
				return nil
			}
			w.progress.Add(1)
			if d.Name() == ".git" && p != dir {
				return filepath.SkipDir
			}
			w.mu.Lock()
			_, watched := w.dirs[p]
			ignored := w.ignored[p] || w.tooLong[p]
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
			caught = true
			break
		}
		for _, d := range fresh {
			w.watchDir(wr, d)
		}
	}
	if !caught {
		w.mu.Lock()
		if wr.rewalk == nil {
			wr.rewalk = map[string]bool{}
		}
		if len(wr.rewalk) < maxRewalk {
			wr.rewalk[dir] = true
		}
		w.setFull(wr)
		w.mu.Unlock()
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

// maxWalks bounds the walks of one addTree; maxRewalk the directories
// per worktree left to walk again at the next Flush (past it, the full
// scans still find the files, and the directories stay unwatched).
const (
	maxWalks  = 10
	maxRewalk = 1000
)

// maxTooLong bounds the directories remembered as too long to watch; past
// it, such a directory is tried again at each walk (and fails again).
const maxTooLong = 10_000

// errBudget is a watch refused because Budget is spent.
var errBudget = fmt.Errorf("watch budget spent: %w", syscall.ENOSPC)

func (w *Watcher) watchDir(wr *watchedRoot, d string) {
	w.mu.Lock()
	full := w.Budget > 0 && len(w.dirs) >= w.Budget
	limited := wr.limit.Cause != ""
	w.mu.Unlock()
	if limited {
		return // scanned, not watched (degradeLocked)
	}
	var err error
	if full {
		err = errBudget
	} else {
		err = w.fs.Add(d)
	}
	if errors.Is(err, syscall.ENAMETOOLONG) {
		// No watch can name it, and nothing else can either (git status
		// skips it with a warning): not a loss of events elsewhere, so
		// no full scan. The directory itself becomes a dirty path, which
		// the tracker finds too long to record and reports.
		w.mu.Lock()
		if len(w.tooLong) < maxTooLong {
			w.tooLong[d] = true
		}
		w.markLocked(wr, d)
		w.mu.Unlock()
		return
	}
	if err != nil {
		w.mu.Lock()
		if l, ok := w.errLimit(err); ok {
			w.degradeLocked(wr, l)
		} else {
			w.setFull(wr)
		}
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
	if err != nil || rel == "." || safepath.Escapes(rel) {
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
			w.handling.Store(true)
			w.handle(ev)
			w.handling.Store(false)
			w.progress.Add(1)
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
		w.mu.Lock()
		sw, ok := w.sentinels[ev.Name]
		// Only the flush's own event counts: a reused sentinel's creation
		// (or an earlier touch) comes before the changes it must follow.
		ok = ok && ev.Has(sw.op)
		if ok {
			delete(w.sentinels, ev.Name)
		}
		w.mu.Unlock()
		if ok {
			close(sw.ch)
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
	var newDir, written bool
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
			written = true
		}
	default:
		w.markLocked(wr, ev.Name)
		written = ev.Has(fsnotify.Write)
	}
	id, root := wr.sessionID, wr.root
	w.mu.Unlock()
	if newDir {
		w.addTree(wr, ev.Name, true)
	}
	if written && w.Written != nil {
		if rel, err := filepath.Rel(root, ev.Name); err == nil && filepath.IsLocal(rel) {
			w.Written(id, filepath.ToSlash(rel))
		}
	}
	if w.Changed != nil {
		w.Changed(id)
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
	d.Full = wr.full != 0 || wr.limit.Cause != ""
	d.fullGen = wr.full
	for p, g := range wr.dirty {
		d.Paths = append(d.Paths, p)
		d.gens[p] = g
	}
	sort.Strings(d.Paths)
	return d
}

// Touch marks paths (relative, slash-separated) of the tree at root
// dirty, as an event would.
func (w *Watcher) Touch(root string, paths []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wr, ok := w.roots[root]
	if !ok {
		return
	}
	for _, p := range paths {
		w.gen++
		wr.dirty[p] = w.gen
	}
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
		if wr.limit.Cause != "" {
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
		if wr.limit.Cause != "" {
			out[wr.sessionID] = wr.limit.Reason
		}
	}
	return out
}
