package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/internal/safepath"
)

// Entry is a workspace file as Read found it.
type Entry struct {
	// Present: something is at the path.
	Present bool
	// Symlink: it is a symbolic link; Content is its target (Read is
	// false when the target could not be read).
	Symlink bool
	// Regular: it is a regular file; Content is its bytes when Read.
	Regular bool
	// Read: Content holds the whole target or file (a file's size was
	// within the limit).
	Read bool
	// Size is the size the file system reports, or the bytes read.
	Size    int64
	Content []byte
}

// Read reads the user's workspace file rel (a record's RelPath): the
// bytes of a regular file up to limit, the target of a link (never
// followed), nothing else. The path goes through safepath.Join first, as
// a write would: a path out of the workspace, through a linked directory
// or into .git is refused (bad_path).
func (w *Writer) Read(rel string, limit int64) (*Entry, error) {
	p, err := safepath.Join(w.root, rel)
	if err != nil {
		return nil, prsm.Errorf(prsm.ErrInvalid, "bad_path", "", "record path %q: %v", rel, err)
	}
	out := &Entry{}
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", rel, err)
	}
	out.Present, out.Size = true, fi.Size()
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		out.Symlink = true
		if target, err := os.Readlink(p); err == nil {
			out.Content, out.Read = []byte(target), true
		}
	case !fi.Mode().IsRegular():
	case fi.Size() <= limit:
		out.Regular = true
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", rel, err)
		}
		if b == nil {
			b = []byte{}
		}
		out.Content, out.Read, out.Size = b, true, int64(len(b))
	default:
		out.Regular = true
	}
	return out, nil
}
