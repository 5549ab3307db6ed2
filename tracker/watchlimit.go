package tracker

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// Why a worktree is scanned instead of watched (a Limit), and what the
// user can do about it. A limited worktree loses no change: every look
// at it (a tool call's end, a turn's end, the periodic scan of engine's
// scan.go) is a git status scan, since its events are never trusted.

// The causes of a Limit.
const (
	// LimitWatches: the kernel's inotify watches ran out (ENOSPC).
	LimitWatches = "watches"
	// LimitBudget: the worktree is past Budget (PRSM_MAX_WATCHES).
	LimitBudget = "budget"
	// LimitDescriptors: the process ran out of file descriptors while
	// watching (EMFILE, ENFILE).
	LimitDescriptors = "descriptors"
	// LimitRemote: the worktree is on a network file system, whose
	// changes made elsewhere send no events.
	LimitRemote = "remote"
	// LimitKqueue: the kqueue backend (one descriptor per file) would
	// take more descriptors than KqueueBound leaves free.
	LimitKqueue = "kqueue"
	// LimitNoWatcher: the watcher could not start at all.
	LimitNoWatcher = "no-watcher"
)

// Limit says why a worktree is scanned instead of watched, and the fix.
type Limit struct {
	Cause  string
	Reason string
	Fix    string
}

// String is the reason and the fix in one line.
func (l Limit) String() string {
	if l.Fix == "" {
		return l.Reason
	}
	return l.Reason + "; fix: " + l.Fix
}

// scanNote ends every reason: what prsm does instead.
const scanNote = "; scanning with git status instead"

// InotifyWatchesFix is the usual fix for LimitWatches.
const InotifyWatchesFix = "sudo sysctl fs.inotify.max_user_watches=524288 (and fs.inotify.max_user_watches=524288 in /etc/sysctl.conf to keep it), then restart prsm (prsm stop)"

// descriptorsFix is the fix for LimitDescriptors and LimitKqueue.
func descriptorsFix() string {
	return "raise the open files limit where prsm starts (ulimit -n 65536), then restart prsm (prsm stop)"
}

// errLimit classifies an error of a watch or of a walk that means the
// watcher cannot watch everything; ok is false for others.
func (w *Watcher) errLimit(err error) (Limit, bool) {
	switch {
	case errors.Is(err, errBudget):
		return Limit{Cause: LimitBudget,
			Reason: fmt.Sprintf("larger than the watch budget (%d directories) set by PRSM_MAX_WATCHES%s", w.Budget, scanNote),
			Fix:    "raise PRSM_MAX_WATCHES (or unset it), then restart prsm (prsm stop)"}, true
	case errors.Is(err, syscall.ENOSPC):
		reason := "out of inotify watches"
		if n := readProcInt("/proc/sys/fs/inotify/max_user_watches"); n > 0 {
			reason += fmt.Sprintf(" (fs.inotify.max_user_watches is %d)", n)
		}
		return Limit{Cause: LimitWatches, Reason: reason + scanNote, Fix: InotifyWatchesFix}, true
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return Limit{Cause: LimitDescriptors, Reason: "out of file descriptors" + openFilesNote() + scanNote, Fix: descriptorsFix()}, true
	}
	return Limit{}, false
}

// StartLimit is the Limit of every worktree when the watcher could not
// start (NewWatcher's error).
func StartLimit(err error) Limit {
	l := Limit{Cause: LimitNoWatcher, Reason: fmt.Sprintf("the file watcher could not start (%v)%s", err, scanNote)}
	switch {
	case errors.Is(err, syscall.EMFILE) && runtime.GOOS == "linux":
		// inotify_init says EMFILE both for the process's descriptors
		// and for the user's inotify instances.
		l.Fix = "sudo sysctl fs.inotify.max_user_instances=1024, or " + descriptorsFix()
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		l.Fix = descriptorsFix()
	}
	return l
}

// ScanningWatcher is a watcher with no backend, for when NewWatcher
// failed: every worktree added is limited by l (StartLimit) and scanned,
// as a watched one that lost its events would be.
func ScanningWatcher(log *slog.Logger, l Limit) *Watcher {
	w := &Watcher{log: log, roots: map[string]*watchedRoot{}, dirs: map[string]*watchedRoot{},
		sentinels: map[string]sentinelWait{}, ignored: map[string]bool{}, tooLong: map[string]bool{},
		done: make(chan struct{}), noBackend: l}
	close(w.done)
	return w
}

// openFilesNote names the open files limit, when it is known.
func openFilesNote() string {
	if n := openFilesLimit(); n > 0 {
		return fmt.Sprintf(" (ulimit -n is %d)", n)
	}
	return ""
}

func readProcInt(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// degradeLocked marks wr as scanned instead of watched, once (the first
// cause is kept), and says so in the log. w.mu is held.
func (w *Watcher) degradeLocked(wr *watchedRoot, l Limit) {
	w.setFull(wr)
	if wr.limit.Cause != "" {
		return
	}
	wr.limit = l
	w.log.Warn("file watcher fallback", "session", wr.sessionID, "reason", l.Reason, "fix", l.Fix)
	// Its watches are of no use (every look scans) and are given back,
	// so that they serve other worktrees; no more are added (watchDir).
	for d, o := range w.dirs {
		if o == wr {
			w.fs.Remove(d)
			delete(w.dirs, d)
		}
	}
}

// Limits reports, per session, why it is scanned instead of watched.
func (w *Watcher) Limits() map[string]Limit {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]Limit{}
	for _, wr := range w.roots {
		if wr.limit.Cause != "" {
			out[wr.sessionID] = wr.limit
		}
	}
	return out
}

// Which worktrees are not watched at all, decided at Add: those on a
// network file system, and, with kqueue, those whose files would take
// more descriptors than the bound.

// remoteLimit is the Limit of a worktree on a network file system.
func remoteLimit(fsName string) Limit {
	return Limit{Cause: LimitRemote,
		Reason: fmt.Sprintf("on a network file system (%s), which does not report every change%s", fsName, scanNote),
		Fix:    "keep prsm's state on a local disk: set PRSM_HOME to a local directory, then restart prsm (prsm stop)"}
}

// KqueueBound is how many descriptors the kqueue backend may hold for
// all worktrees with an open files limit of nofile: half of it, and
// never closer than kqueueReserve to it, so that the server (its store,
// git's pipes, its connections) keeps room.
func KqueueBound(nofile uint64) int {
	if nofile == 0 {
		return 0
	}
	b := nofile / 2
	if nofile < kqueueReserve {
		b = 0
	} else if nofile-kqueueReserve < b {
		b = nofile - kqueueReserve
	}
	if b > 1<<30 {
		b = 1 << 30
	}
	return int(b)
}

// kqueueReserve is the descriptors KqueueBound always leaves free.
const kqueueReserve = 512

// usesKqueue reports whether fsnotify watches with kqueue on goos: one
// descriptor for every watched directory and every file in it.
func usesKqueue(goos string) bool {
	switch goos {
	case "darwin", "freebsd", "openbsd", "netbsd", "dragonfly":
		return true
	}
	return false
}

// kqueueCost counts the descriptors watching root with kqueue would
// take: its directories and their files, less .git and what git
// ignores. It walks a level at a time (one question to git a level) and
// stops past limit, so a huge tree costs no more than limit entries.
func (w *Watcher) kqueueCost(root string, limit int) int {
	total := 1
	level := []string{root}
	for len(level) > 0 && total <= limit {
		var next []string
		for _, dir := range level {
			ents, err := os.ReadDir(dir)
			if err != nil {
				continue
			}
			for _, e := range ents {
				if e.IsDir() {
					if e.Name() != ".git" {
						next = append(next, filepath.Join(dir, e.Name()))
					}
					continue
				}
				total++
			}
			if total > limit {
				return total
			}
		}
		if w.Ignored != nil && len(next) > 0 {
			rels := make([]string, len(next))
			for i, d := range next {
				rel, _ := filepath.Rel(root, d)
				rels[i] = filepath.ToSlash(rel)
			}
			ign := w.Ignored(root, rels)
			kept := next[:0]
			for i, d := range next {
				if !ign[rels[i]] {
					kept = append(kept, d)
				}
			}
			next = kept
		}
		total += len(next)
		level = next
	}
	return total
}
