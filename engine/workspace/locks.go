package workspace

import (
	"slices"
	stdsync "sync"
)

// fileLocks are the workspace's per-file locks, which serialize the
// writes of one file across sessions: a lock per file, made when taken
// and gone once nobody holds or waits for it, and, for a LockAll of many
// files (an npm install's 200k), one claim of them all.
type fileLocks struct {
	// mu guards the fields below; freed is signalled when a lock or a
	// claim goes.
	mu    stdsync.Mutex
	freed *stdsync.Cond
	// files holds the locks held or waited for, by path.
	files map[string]*fileLock
	// high is the most locks files held since it was made: a map keeps
	// its size after deletes, so an empty one that grew large is made
	// anew.
	high int
	// claims are the held locks of many files at once (lockAll of more
	// than claimFrom), each its sorted paths: a lock each would be a map
	// entry and a mutex per file, 12 MB for an npm install's 200k.
	claims []*claim
	// waiting counts the claims waiting for files to be let go.
	waiting int
}

func newFileLocks() *fileLocks {
	l := &fileLocks{files: map[string]*fileLock{}}
	l.freed = stdsync.NewCond(&l.mu)
	return l
}

// fileLock is one workspace file's lock, with how many hold or wait for
// it.
type fileLock struct {
	mu   stdsync.Mutex
	refs int
}

// claim is a LockAll of many files: its paths, sorted, each once.
type claim struct{ rels []string }

// covers reports whether c holds rel.
func (c *claim) covers(rel string) bool {
	_, ok := slices.BinarySearch(c.rels, rel)
	return ok
}

// claimed reports whether a held claim holds rel. The caller holds mu.
func (ls *fileLocks) claimed(rel string) bool {
	for _, c := range ls.claims {
		if c.covers(rel) {
			return true
		}
	}
	return false
}

// lockFile takes rel's lock, made if nobody holds it, once no claim
// holds rel.
func (ls *fileLocks) lockFile(rel string) *fileLock {
	ls.mu.Lock()
	for ls.claimed(rel) {
		ls.freed.Wait()
	}
	l, ok := ls.files[rel]
	if !ok {
		l = &fileLock{}
		ls.files[rel] = l
		ls.high = max(ls.high, len(ls.files))
	}
	l.refs++
	ls.mu.Unlock()
	l.mu.Lock()
	return l
}

// unlockFile lets rel's lock l go; the last one drops it.
func (ls *fileLocks) unlockFile(rel string, l *fileLock) {
	l.mu.Unlock()
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if l.refs--; l.refs > 0 {
		return
	}
	delete(ls.files, rel)
	if len(ls.files) == 0 && ls.high > 256 {
		ls.files, ls.high = map[string]*fileLock{}, 0
	}
	if ls.waiting > 0 {
		ls.freed.Broadcast() // a claim may wait for this file
	}
}

// lock takes rel's lock and returns the unlock.
func (ls *fileLocks) lock(rel string) func() {
	l := ls.lockFile(rel)
	return func() { ls.unlockFile(rel, l) }
}

// claimFrom is the size from which lockAll takes its files by one claim.
const claimFrom = 1024

// lockAll locks the files rels and returns the unlock of them all. A few
// are locked one by one in path order, so that two callers never wait
// for each other; many are claimed at once, once no lock and no claim
// holds any of them (a claim waits holding nothing).
func (ls *fileLocks) lockAll(rels []string) func() {
	rels = slices.Clone(rels)
	slices.Sort(rels)
	rels = slices.Compact(rels)
	if len(rels) > claimFrom {
		return ls.claim(slices.Clip(rels))
	}
	locks := make([]*fileLock, len(rels))
	for i, rel := range rels {
		locks[i] = ls.lockFile(rel)
	}
	return func() {
		for i, l := range locks {
			ls.unlockFile(rels[i], l)
		}
	}
}

// claim holds the files rels (sorted, each once) at once, and returns
// the unlock.
func (ls *fileLocks) claim(rels []string) func() {
	c := &claim{rels: rels}
	ls.mu.Lock()
	ls.waiting++
	for ls.overlaps(c) {
		ls.freed.Wait()
	}
	ls.waiting--
	ls.claims = append(ls.claims, c)
	ls.mu.Unlock()
	return func() {
		ls.mu.Lock()
		ls.claims = slices.DeleteFunc(ls.claims, func(o *claim) bool { return o == c })
		ls.freed.Broadcast()
		ls.mu.Unlock()
	}
}

// overlaps reports whether a file of c is locked or claimed now. The
// caller holds mu.
func (ls *fileLocks) overlaps(c *claim) bool {
	for rel := range ls.files {
		if c.covers(rel) {
			return true
		}
	}
	for _, o := range ls.claims {
		a, b := c.rels, o.rels
		for len(a) > 0 && len(b) > 0 {
			switch {
			case a[0] == b[0]:
				return true
			case a[0] < b[0]:
				a = a[1:]
			default:
				b = b[1:]
			}
		}
	}
	return false
}
