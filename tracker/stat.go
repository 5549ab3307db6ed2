package tracker

import (
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/prsm-dev/prsm/internal/safepath"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
)

// racyWindow is how long after a file's last change prsm waits before it
// trusts the file's stat facts to tell a later change. Filesystem
// timestamps are coarse (ext4 ticks with the kernel's jiffies, 1 to 10 ms):
// a write in the same tick as prsm's read, of the same size, would leave
// every fact as it was. Git handles the same "racily clean" entries the
// same way: it reads them again.
const racyWindow = 20 * time.Millisecond

// StatCache remembers, per file of a worktree, what lstat said when its
// content had a given hash, so a file whose facts are unchanged is neither
// read nor hashed again. jj and git's index do the same. It is filled as
// files are read and persisted with the session (store.Stat), so a restart
// does not rehash every file the session touched.
type StatCache struct {
	entries map[string]store.Stat
	// changed holds the paths whose entries are to persist (no entry:
	// delete the row). A set: a copy of each entry here held as much
	// memory again as the cache (200k files of an npm install).
	changed map[string]struct{}
}

// NewStatCache starts a cache from persisted entries.
func NewStatCache(entries map[string]store.Stat) *StatCache {
	if entries == nil {
		entries = map[string]store.Stat{}
	}
	return &StatCache{entries: entries, changed: map[string]struct{}{}}
}

// statOf returns the cache facts of fi.
func statOf(fi fs.FileInfo) store.Stat {
	st := store.Stat{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Mode: uint32(fi.Mode())}
	st.Ino, st.Ctime = inodeCtime(fi)
	return st
}

// ErrUnsettled means a file was being written when a look read it: it
// changed while it was read, or, for a look that asks for quiet, less
// than that long before. Its content is no change yet: it is recorded at
// a later look, once it has settled, and never as a read torn between
// two writes or a copy cut off mid-write.
var ErrUnsettled = errors.New("still being written")

// settled reports whether a file read between two lstats, before and
// after (nil: nothing there), held still while it was read: the same
// size, mtime, ctime, inode and mode in both, so that what was read is
// what the file held, whole, never part of one write and part of the
// next.
func settled(before, after fs.FileInfo) bool {
	if before == nil || after == nil {
		return before == after
	}
	return statOf(before) == statOf(after)
}

// lastChange is when fi's file last changed: its ctime, which every
// write sets and nobody can set back, where the system tells it, else its
// mtime.
func lastChange(fi fs.FileInfo) time.Time {
	if _, ctime := inodeCtime(fi); ctime != 0 {
		return time.Unix(0, ctime)
	}
	return fi.ModTime()
}

// isFile reports whether fi is a file a look reads (a regular file or a
// symlink), not nothing, a directory or a device.
func isFile(fi fs.FileInfo) bool {
	return fi != nil && (fi.Mode().IsRegular() || fi.Mode()&fs.ModeSymlink != 0)
}

// trusted reports whether e's facts would have changed with any write
// since it was taken: the file had been quiet for racyWindow by then.
func trusted(e store.Stat) bool {
	quiet := e.Seen - racyWindow.Nanoseconds()
	return e.Mtime < quiet && e.Ctime < quiet
}

// Lookup returns the content hash of root/rel when the file's facts equal
// the cached ones, without reading it. ok is false when the file must be
// read (no entry, changed facts, an entry too fresh to trust, or no file).
func (c *StatCache) Lookup(root, rel string) (hash string, mode uint32, ok bool) {
	if c == nil {
		return "", 0, false
	}
	e, found := c.entries[rel]
	if !found || !trusted(e) {
		return "", 0, false
	}
	p, err := safepath.Join(root, rel)
	if err != nil {
		return "", 0, false
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return "", 0, false
	}
	now := statOf(fi)
	if now.Size != e.Size || now.Mtime != e.Mtime || now.Ctime != e.Ctime || now.Ino != e.Ino || now.Mode != e.Mode {
		return "", 0, false
	}
	return e.Hash, versionMode(fi), true
}

// versionMode is the st_mode bits a Version of fi carries.
func versionMode(fi fs.FileInfo) uint32 {
	if fi.Mode()&fs.ModeSymlink != 0 {
		return sync.ModeSymlink
	}
	return sync.ModeRegular | uint32(fi.Mode().Perm())
}

// Remember notes that root/rel, as fi describes it, holds content with the
// given hash. fi must come from an lstat taken before the content was read,
// and unchanged after, so the facts belong to that content.
func (c *StatCache) Remember(rel string, fi fs.FileInfo, hash string, seen time.Time) {
	if c == nil {
		return
	}
	e := statOf(fi)
	e.Hash, e.Seen = hash, seen.UnixNano()
	if old, ok := c.entries[rel]; ok && old == e {
		return
	}
	c.entries[rel] = e
	c.changed[rel] = struct{}{}
}

// shared returns hash as rel's entry holds it, if it holds that hash:
// the tracker's known state of rel then shares the string instead of
// holding a copy of its own (64 bytes a file, 200k files of an npm
// install).
func (c *StatCache) shared(rel, hash string) string {
	if c != nil {
		if e, ok := c.entries[rel]; ok && e.Hash == hash {
			return e.Hash
		}
	}
	return hash
}

// Forget drops rel's entry (the file is gone or is not a file).
func (c *StatCache) Forget(rel string) {
	if c == nil {
		return
	}
	if _, ok := c.entries[rel]; ok {
		delete(c.entries, rel)
		c.changed[rel] = struct{}{}
	}
}

// Len is the number of cached files.
func (c *StatCache) Len() int {
	if c == nil {
		return 0
	}
	return len(c.entries)
}

// Changed reports whether entries changed since the last TakeChanged.
func (c *StatCache) Changed() bool {
	return c != nil && len(c.changed) > 0
}

// TakeChanged returns the entries changed since the last call, to persist.
func (c *StatCache) TakeChanged() map[string]*store.Stat {
	if c == nil || len(c.changed) == 0 {
		return nil
	}
	out := make(map[string]*store.Stat, len(c.changed))
	for rel := range c.changed {
		if e, ok := c.entries[rel]; ok {
			out[rel] = &e
		} else {
			out[rel] = nil
		}
	}
	c.changed = map[string]struct{}{}
	return out
}

// Restore puts the paths of entries taken by TakeChanged back, after
// persisting them failed: the next call persists their entries as they
// are then.
func (c *StatCache) Restore(m map[string]*store.Stat) {
	if c == nil {
		return
	}
	for rel := range m {
		c.changed[rel] = struct{}{} // persisted as the entry is then
	}
}
