package sync

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	stdsync "sync"
	"unicode/utf8"

	"github.com/prsm-dev/prsm/internal/bigfile"
	"github.com/prsm-dev/prsm/internal/osproc"
	"github.com/prsm-dev/prsm/internal/safepath"
)

// File modes as st_mode bits, the form records carry (mode_before,
// mode_after): a regular file 0o100644 or 0o100755 (any permission bits),
// a symlink 0o120000.
const (
	ModeRegular = 0o100000
	ModeSymlink = 0o120000
	modeType    = 0o170000
)

// Version is one state of a file: absent, a regular file with its mode and
// bytes, or a symlink whose Content is the link target.
type Version struct {
	Present bool
	Mode    uint32
	Content []byte
}

// Size is the size of the file v stands for: for a file over the size
// limit, whose Content is a stub (bigfile), its real size.
func (v Version) Size() int64 {
	if in, ok := v.Big(); ok {
		return in.Size
	}
	return int64(len(v.Content))
}

// Big reports whether v is a regular file over the size limit: its Content
// is then a stub that names the content's size and hash (bigfile). A
// stub compares, merges (as binary) and is stored like any content; only
// writing it to disk copies the real content, from where it was seen.
func (v Version) Big() (bigfile.Info, bool) {
	if !v.Present || v.IsLink() {
		return bigfile.Info{}, false
	}
	return bigfile.Parse(v.Content)
}

// Absent is the version of a file that does not exist.
var Absent = Version{}

// IsLink reports whether v is a symlink.
func (v Version) IsLink() bool { return v.Present && v.Mode&modeType == ModeSymlink }

// exec reports whether a regular file has an exec bit.
func (v Version) exec() bool { return v.Present && !v.IsLink() && v.Mode&0o111 != 0 }

// kind is what a merge compares modes by: absent, link, executable or plain.
// Other permission bits (a user's 0600) are the user's business and kept.
func (v Version) kind() int {
	switch {
	case !v.Present:
		return 0
	case v.IsLink():
		return 1
	case v.exec():
		return 2
	}
	return 3
}

// Same reports whether two versions are the same for prsm: presence, kind
// (link, exec bit) and bytes. A big file's stub and bytes read whole are
// the same when the bytes hash to what the stub names: a file may be read
// either way (ReadVersionMax).
func Same(a, b Version) bool {
	if a.kind() != b.kind() {
		return false
	}
	if !a.Present || bytes.Equal(a.Content, b.Content) {
		return true
	}
	ai, aBig := a.Big()
	bi, bBig := b.Big()
	switch {
	case aBig && !bBig:
		return ai.Size == int64(len(b.Content)) && ai.ID == bigfile.HashBytes(b.Content)
	case bBig && !aBig:
		return bi.Size == int64(len(a.Content)) && bi.ID == bigfile.HashBytes(a.Content)
	}
	return false
}

// ErrNotFile means a path holds something prsm does not manage (a directory,
// a device) where a file was expected.
var ErrNotFile = errors.New("not a regular file or symlink")

// ReadVersion reads root/rel without following a final symlink. rel is
// confined to root (no "..", no symlinked parent directories).
func ReadVersion(root, rel string) (Version, error) {
	return ReadVersionMax(root, rel, bigfile.Limit())
}

// ReadVersionMax is ReadVersion that reads a file of more than max bytes
// (or over the size limit) as a big file's stub: a caller that reads many
// files at once bounds the memory they take.
func ReadVersionMax(root, rel string, max int64) (Version, error) {
	// openDirIn refuses a symlink among the parents, as Join does, and
	// checks each directory it opens: Join's own look at each parent would
	// be a second one.
	p, err := safepath.Lexical(root, rel)
	if err != nil {
		return Version{}, err
	}
	return readPathIn(root, p, min(max, bigfile.Limit()))
}

// IsText reports whether content can be merged line by line: no NUL byte and
// valid UTF-8.
func IsText(b []byte) bool {
	return bytes.IndexByte(b, 0) < 0 && utf8.Valid(b)
}

// Merge combines two edits of a file made from base: ours (the user's side,
// or the file as it is now) and theirs (the change to bring in). Presence,
// kind and content merge separately: a side that left a property as in base
// takes the other side's; two different edits of text merge by lines (as
// git merge-file); anything else is a conflict (ok false). A deletion
// against an edit, or two different symlink targets, conflict.
func Merge(base, ours, theirs Version) (Version, bool) {
	switch {
	case Same(ours, theirs):
		return ours, true
	case Same(ours, base):
		return withPerm(theirs, ours), true
	case Same(theirs, base):
		return ours, true
	}
	if !ours.Present || !theirs.Present || ours.IsLink() || theirs.IsLink() || base.IsLink() {
		return Version{}, false
	}
	var baseContent []byte
	if base.Present {
		baseContent = base.Content
	}
	var content []byte
	switch {
	case bytes.Equal(ours.Content, baseContent):
		content = theirs.Content
	case bytes.Equal(theirs.Content, baseContent), bytes.Equal(ours.Content, theirs.Content):
		content = ours.Content
	default:
		if !IsText(baseContent) || !IsText(ours.Content) || !IsText(theirs.Content) {
			return Version{}, false
		}
		m, clean := Merge3(baseContent, ours.Content, theirs.Content)
		if !clean {
			return Version{}, false
		}
		content = m
	}
	// The exec bit: the side that changed it wins; both changing it
	// differently cannot happen with one bit.
	exec := ours.exec()
	if ours.exec() == base.exec() {
		exec = theirs.exec()
	}
	mode := ours.Mode &^ 0o111
	if exec {
		mode |= (ours.Mode & 0o444) >> 2
		if mode&0o111 == 0 {
			mode |= 0o100
		}
	}
	return Version{Present: true, Mode: mode, Content: content}, true
}

// withPerm returns v with the permission bits of like where only the exec
// bit matters: a user's 0600 stays 0600 when the agent's edit arrives.
// With no regular file to take them from (a new file, a link replaced),
// v's bits are git's for a new file: 0666, or 0777 when v is
// executable, less the umask. The agent's other bits (a chmod 000 or
// 0777) never reach the workspace.
func withPerm(v, like Version) Version {
	if !v.Present || v.IsLink() {
		return v
	}
	if !like.Present || like.IsLink() {
		perm := uint32(0o666)
		if v.exec() {
			perm = 0o777
		}
		v.Mode = ModeRegular | perm&^umask()
		return v
	}
	mode := ModeRegular | like.Mode&0o666
	if v.exec() {
		mode |= (like.Mode & 0o444) >> 2
		if mode&0o111 == 0 {
			mode |= 0o100
		}
	}
	v.Mode = mode
	return v
}

// Outcome says what Apply did.
type Outcome int

const (
	// Unchanged: the file already was the result.
	Unchanged Outcome = iota
	// Written: the file was replaced (or created, or removed) by the result.
	Written
	// Conflict: the edits could not be combined; the file was left as it was.
	Conflict
)

func (o Outcome) String() string {
	return [...]string{"unchanged", "written", "conflict"}[o]
}

// Apply brings the change base -> theirs into root/rel, keeping whatever
// else the file holds (the user's edits): a 3-way Merge with the file as it
// is now. On a conflict nothing is written. Writes are atomic; a removal
// prunes directories it leaves empty, up to root. It returns the outcome and
// the file as it is afterwards.
func Apply(root, rel string, base, theirs Version) (Outcome, Version, error) {
	out, v, w, err := ApplyUnsynced(root, rel, base, theirs)
	if err != nil {
		return out, v, err
	}
	if err := w.Settle(); err != nil {
		return Conflict, w.ours, err
	}
	return out, v, nil
}

// writeVersion makes p hold v, atomically.
func writeVersion(root, p string, v Version) error {
	switch {
	case !v.Present:
		return RemoveFile(root, p)
	case v.IsLink():
		return writeSymlinkIn(root, p, string(v.Content))
	}
	return writeFileIn(root, p, v.Content, os.FileMode(v.Mode&0o777))
}

// Write makes root/rel hold v exactly (confined to root), for callers that
// decided the result themselves.
func Write(root, rel string, v Version) error {
	p, err := safepath.Join(root, rel)
	if err != nil {
		return err
	}
	return writeVersion(root, p, v)
}

// umask is the process's file mode creation mask, which the user's own
// git works under too. Linux says it in /proc/self/status; elsewhere it
// is read by setting it, once, at the first new file.
var umask = stdsync.OnceValue(func() uint32 {
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Umask:"); ok {
				if n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					return uint32(n) & 0o777
				}
			}
		}
	}
	return osproc.Umask()
})
