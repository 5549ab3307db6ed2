package engine

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	stdsync "sync"

	"github.com/prsm-dev/prsm/sync"
)

// trashCan owns the bins of bulk removals (sync.Bin), under
// ProjectDir/trash. A reject of many created files renames each one it
// takes out into a bin instead of unlinking it: one rename per file,
// where an unlink cost the disk several times as much. Once the
// removals are durable the bin is emptied in the background, after the
// reject has answered. Close stops the emptying between two batches of
// files; what a stop or a crash left, the next start's reconcile
// empties.
type trashCan struct {
	*Engine
	mu      stdsync.Mutex
	queue   []string // bins to empty, in order
	running bool     // an emptier works through queue
	// busy counts the bulk jobs running: the emptier waits for them
	// (pause). Its deletions would be theirs to wait for: each of their
	// parts makes its removals durable with a sync of the whole file
	// system, which writes out every deletion made before it.
	busy int
}

// trashBatch is how many files the emptier deletes between two looks at
// whether the engine is closing.
const trashBatch = 512

func (tc *trashCan) dir() string { return filepath.Join(tc.ProjectDir, "trash") }

// bin is a new bin; nil, where none can be made, unlinks the files.
func (tc *trashCan) bin() *sync.Bin {
	b, err := sync.NewBin(tc.dir())
	if err != nil {
		tc.Log.Warn("no bin for removed files: unlinking them", "err", err)
		return nil
	}
	return b
}

// throw closes b, whose removals are done and durable, and empties it in
// the background.
func (tc *trashCan) throw(b *sync.Bin) {
	if b == nil {
		return
	}
	if err := b.Close(); err != nil {
		tc.Log.Warn("close bin", "path", b.Path, "err", err)
	}
	tc.empty(b.Path)
}

// emptyLeft empties, in the background, the bins an earlier run left (a
// stop, a crash); it runs before any removal of this run makes one.
func (tc *trashCan) emptyLeft() {
	entries, err := os.ReadDir(tc.dir())
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			tc.Log.Warn("read the trash", "err", err)
		}
		return
	}
	var left []string
	for _, e := range entries {
		if e.IsDir() && sync.IsBinName(e.Name()) {
			left = append(left, filepath.Join(tc.dir(), e.Name()))
		}
	}
	if len(left) > 0 {
		tc.Log.Info("emptying bins left by an earlier run", "bins", len(left))
		tc.empty(left...)
	}
}

// pause holds the emptier back while a bulk job runs, until the returned
// func is first called.
func (tc *trashCan) pause() (resume func()) {
	tc.mu.Lock()
	tc.busy++
	tc.mu.Unlock()
	return stdsync.OnceFunc(func() {
		tc.mu.Lock()
		tc.busy--
		tc.mu.Unlock()
		tc.empty()
	})
}

// paused reports whether a bulk job holds the emptier back.
func (tc *trashCan) paused() bool {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.busy > 0
}

// empty queues bins for the emptier, and starts it where none runs and
// nothing holds it back.
func (tc *trashCan) empty(bins ...string) {
	tc.mu.Lock()
	tc.queue = append(tc.queue, bins...)
	start := !tc.running && tc.busy == 0 && len(tc.queue) > 0
	tc.running = tc.running || start
	tc.mu.Unlock()
	if start {
		tc.background(tc.emptier)
	}
}

// emptier empties the queued bins, one after another, until none is left
// or the engine closes.
func (tc *trashCan) emptier() {
	for {
		closing := tc.closing()
		tc.mu.Lock()
		if len(tc.queue) == 0 || closing || tc.busy > 0 {
			tc.running = false
			tc.mu.Unlock()
			return
		}
		bin := tc.queue[0]
		tc.queue = tc.queue[1:]
		tc.mu.Unlock()
		err := tc.deleteBin(bin)
		if errors.Is(err, errStopping) {
			// Closing, or a bulk job began: the bin waits its turn again.
			tc.mu.Lock()
			tc.queue = append([]string{bin}, tc.queue...)
			tc.mu.Unlock()
		} else if err != nil {
			tc.Log.Warn("empty bin", "path", bin, "err", err)
		}
	}
}

// deleteBin deletes the files of bin, then bin. It removes each entry
// alone, never a tree: a bin holds the files a removal took out, and a
// directory found in one (put there by a race with its removal) is left
// with what it holds, as an unlink would have left it.
func (tc *trashCan) deleteBin(bin string) error {
	d, err := os.Open(bin)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer d.Close()
	var kept error
	for {
		if tc.closing() || tc.paused() {
			return errStopping
		}
		names, err := d.Readdirnames(trashBatch)
		for _, name := range names {
			if rerr := os.Remove(filepath.Join(bin, name)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
				kept = rerr
			}
		}
		if errors.Is(err, io.EOF) || (err == nil && len(names) == 0) {
			break
		}
		if err != nil {
			return err
		}
	}
	if kept != nil {
		return kept
	}
	return os.Remove(bin)
}
