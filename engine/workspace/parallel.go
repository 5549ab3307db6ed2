package workspace

import (
	"errors"
	stdsync "sync"
)

// syncWorkers is how many independent files are written at once. Each
// atomic write ends in an fsync; run together, the file system commits
// them in shared journal transactions, so n writes cost little more than
// one (docs/performance.md has a measure).
const syncWorkers = 16

// Parallel runs fn(0..n-1) with at most syncWorkers at once and returns
// each call's error by index.
func Parallel(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	if n == 0 {
		return errs
	}
	if n == 1 {
		errs[0] = fn(0)
		return errs
	}
	sem := make(chan struct{}, syncWorkers)
	var wg stdsync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = fn(i)
		}(i)
	}
	wg.Wait()
	return errs
}

// DiskSyncs collects the syncs to the disk of files placed without them
// (the Settle of sync.WriteUnsynced and ApplyUnsynced), to run together:
// independent files' syncs overlap, and a caller can answer first.
type DiskSyncs struct {
	mu    stdsync.Mutex
	syncs []func() error
}

// Add collects one file's sync.
func (d *DiskSyncs) Add(sync func() error) {
	d.mu.Lock()
	d.syncs = append(d.syncs, sync)
	d.mu.Unlock()
}

// Run makes every collected file durable, at once, and forgets them.
func (d *DiskSyncs) Run() error {
	d.mu.Lock()
	syncs := d.syncs
	d.syncs = nil
	d.mu.Unlock()
	return errors.Join(Parallel(len(syncs), func(i int) error { return syncs[i]() })...)
}
