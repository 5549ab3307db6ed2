package sync

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/prsm-dev/prsm/internal/bigfile"
	"github.com/prsm-dev/prsm/internal/safepath"
)

// OpenDirs reads many files below one root (a look at what a tool call
// changed: an agent's npm install writes 200k files in a few thousand
// directories) with each directory opened once, as ReadVersionMax opens
// it (no symlink followed from root down), not once for every file in
// it. A directory stays open until Close, until maxOpenDirs others
// were opened since, or until an open finds no descriptor left; a path
// whose directory did not exist reads as absent until then too. A directory replaced after it was opened is
// still read through the one opened: callers that need the file still
// at its path compare its lstat after the read (the tracker does).
// Not safe for concurrent use.
type OpenDirs struct {
	root string
	dirs map[string]openDir
}

// openDir is a directory OpenDirs opened, or why it could not.
type openDir struct {
	d   *os.Root
	err error
}

// maxOpenDirs bounds the directories OpenDirs holds open: few, since a
// look's paths come a directory at a time, and a server may run under a
// low limit of open files (ulimit -n 64).
const maxOpenDirs = 8

// NewOpenDirs reads below root.
func NewOpenDirs(root string) *OpenDirs {
	return &OpenDirs{root: root, dirs: map[string]openDir{}}
}

// ReadVersionMax is the package's ReadVersionMax, through the open
// directories; it also returns the lstat of what it read (nil when
// absent), taken through the directory it read from.
func (o *OpenDirs) ReadVersionMax(rel string, max int64) (Version, fs.FileInfo, error) {
	p, err := safepath.Lexical(o.root, rel)
	if err != nil {
		return Version{}, nil, err
	}
	dir := filepath.Dir(p)
	od, ok := o.dirs[dir]
	if !ok {
		if len(o.dirs) >= maxOpenDirs {
			o.Close()
		}
		od.d, od.err = openDirIn(o.root, dir, false)
		if outOfFiles(od.err) {
			// Out of descriptors (a server under a low ulimit -n): the
			// directories held open go first, and the open is tried
			// once more.
			o.Close()
			od.d, od.err = openDirIn(o.root, dir, false)
		}
		if outOfFiles(od.err) {
			return Version{}, nil, od.err
		}
		o.dirs[dir] = od
	}
	return readInDir(od.d, od.err, p, min(max, bigfile.Limit()))
}

// outOfFiles reports whether err is the process's or the system's limit
// of open files.
func outOfFiles(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// Forget closes the directory of rel, if open: the next read opens it
// anew.
func (o *OpenDirs) Forget(rel string) {
	p, err := safepath.Lexical(o.root, rel)
	if err != nil {
		return
	}
	dir := filepath.Dir(p)
	if od, ok := o.dirs[dir]; ok {
		if od.d != nil {
			od.d.Close()
		}
		delete(o.dirs, dir)
	}
}

// Close closes every directory held open.
func (o *OpenDirs) Close() {
	for _, od := range o.dirs {
		if od.d != nil {
			od.d.Close()
		}
	}
	clear(o.dirs)
}
