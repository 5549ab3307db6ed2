// Package safepath owns confinement (SPEC.md rule 7): it turns untrusted paths,
// from agents, hooks, HTTP requests and git output, into paths inside a root,
// and refuses anything that escapes it, so that no other package has to get
// `..`, absolute paths, symlinks or odd bytes right on its own.
//
// The checks are done on names and, in Join, on the directories that exist at
// the time of the call. They keep untrusted input inside the root; they do not
// guard against a process that swaps a directory for a symlink between the
// check and the use.
package safepath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"syscall"
)

// Sentinel errors, matched with errors.Is; callers map both to a client error.
var (
	// ErrOutside means the path leads out of the root: through "..", as an
	// absolute path elsewhere, or through a symlinked directory.
	ErrOutside = errors.New("path is outside the root")
	// ErrBadPath means the path is not one prsm will touch even though it does
	// not escape: empty, the root itself, holding a NUL byte, or inside .git.
	ErrBadPath = errors.New("bad path")
	// ErrTooLong means the path is longer than the system takes (PATH_MAX,
	// counted on the absolute path): no file there can be read or written
	// by its name. It is a kind of ErrBadPath.
	ErrTooLong = fmt.Errorf("path too long for the system: %w", ErrBadPath)
)

// MaxPath is the longest absolute path, in bytes, that the system calls
// take: PATH_MAX less its closing NUL (Linux 4096, BSDs and macOS 1024).
var MaxPath = func() int {
	switch runtime.GOOS {
	case "darwin", "ios", "freebsd", "netbsd", "openbsd", "dragonfly":
		return 1023
	}
	return 4095
}()

// Rel turns p, absolute or relative to root, into a clean slash-separated path
// relative to root, or refuses it. It refuses an empty path, a NUL byte, the
// root itself, a path with a .git segment (in any letter case, as git does,
// for case-insensitive file systems), a relative path that climbs out of root
// after cleaning, and an absolute path that is not under root. Containment is
// decided with filepath.Rel, never by string prefix ("/repo-evil" is not in
// "/repo"), against both root as given and root with its symlinks resolved, so
// that a path reached through either spelling (/tmp versus /private/tmp) is
// accepted.
//
// Rel looks at names only, apart from resolving root: a symlink inside the
// root is not followed. Use Join before touching the file system.
func Rel(root, p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("empty path: %w", ErrBadPath)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", fmt.Errorf("path %q holds a NUL byte: %w", p, ErrBadPath)
	}
	var rel string
	if filepath.IsAbs(p) {
		roots, err := rootForms(root)
		if err != nil {
			return "", err
		}
		p = filepath.Clean(p)
		found := false
		for _, r := range roots {
			if r2, err := filepath.Rel(r, p); err == nil && filepath.IsLocal(r2) {
				rel, found = r2, true
				break
			}
			if r == p {
				return "", fmt.Errorf("path %q is the root itself: %w", p, ErrBadPath)
			}
		}
		if !found {
			return "", fmt.Errorf("path %q is not under %s: %w", p, root, ErrOutside)
		}
	} else {
		rel = filepath.Clean(p)
		if rel == "." {
			return "", fmt.Errorf("path %q is the root itself: %w", p, ErrBadPath)
		}
		if !filepath.IsLocal(rel) {
			return "", fmt.Errorf("path %q leads out of the root: %w", p, ErrOutside)
		}
	}
	rel = filepath.ToSlash(rel)
	if rel == "." || rel == "" {
		return "", fmt.Errorf("path %q is the root itself: %w", p, ErrBadPath)
	}
	for _, seg := range strings.Split(rel, "/") {
		if strings.EqualFold(seg, ".git") {
			return "", fmt.Errorf("path %q is inside .git: %w", p, ErrBadPath)
		}
	}
	return rel, nil
}

// Escapes reports whether rel, a clean relative path such as filepath.Rel
// returns (slash or OS separated), leads out of its base: it is ".." or
// starts with a ".." segment. Only a whole segment climbs: "..txt",
// "..foo/bar" and "..." are ordinary names inside the base, and a string
// prefix test for ".." would lose them.
func Escapes(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, "../") ||
		strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Join validates rel as Rel does (it may also be absolute under root) and
// returns the absolute path root/rel. It also refuses, with ErrOutside, a path
// whose existing parent directories (those between root and the last element)
// include a symlink, even one that points back inside: git refuses to go
// "beyond a symbolic link" too, and following one could reach anywhere. The
// last element may itself be a symlink; prsm handles links as links and never
// follows them. Parents that do not exist yet are fine (a file may be created
// in a new directory). A result longer than MaxPath is refused with
// ErrTooLong: no system call would take it.
func Join(root, rel string) (string, error) {
	return (*Dirs)(nil).Join(root, rel)
}

// Lexical is Join without its look at the parent directories: for a
// caller whose next step opens each of them without following a symlink
// (sync's reads), which Join's look would only repeat.
func Lexical(root, rel string) (string, error) {
	return (*Dirs)(nil).join(root, rel, false)
}

// Dirs remembers, for one look at a tree (a tool call's detection of what
// it changed), the directories Join found to be directories and not
// symlinks: the files of one directory then cost one lstat of each parent
// between them, not one each (an agent's npm install writes 200k files in
// a few thousand directories). A directory swapped for a symlink during
// the look still reads as a directory here; what reads a file under it
// opens each directory without following a symlink (package sync), so such
// a swap is refused there. Reset forgets them all, for the next look. A nil
// *Dirs remembers nothing; Dirs is not safe for concurrent use.
type Dirs struct{ ok map[string]bool }

// Reset forgets every directory, for a new look.
func (d *Dirs) Reset() { clear(d.ok) }

// Join is safepath.Join that looks at a parent directory only once.
func (d *Dirs) Join(root, rel string) (string, error) {
	return d.join(root, rel, true)
}

func (d *Dirs) join(root, rel string, look bool) (string, error) {
	r, err := Rel(root, rel)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("root %s: %w", root, err)
	}
	segs := strings.Split(r, "/")
	dir := abs
	for _, seg := range segs[:len(segs)-1] {
		if !look {
			break
		}
		dir = filepath.Join(dir, seg)
		if d != nil && d.ok[dir] {
			continue
		}
		fi, err := os.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			break // nothing below exists, so nothing below is a link
		}
		if errors.Is(err, syscall.ENAMETOOLONG) {
			// The input's fault, not the system's: a client error.
			return "", fmt.Errorf("path %q has a name too long for the file system: %w", rel, ErrTooLong)
		}
		if err != nil {
			return "", fmt.Errorf("check %s: %w", dir, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("path %q is beyond a symbolic link at %s: %w", rel, dir, ErrOutside)
		}
		if !fi.IsDir() {
			break // a file stands here; the OS refuses anything below it
		}
		if d != nil {
			if d.ok == nil {
				d.ok = map[string]bool{}
			}
			d.ok[dir] = true
		}
	}
	full := filepath.Join(abs, filepath.FromSlash(r))
	if len(full) > MaxPath {
		return "", fmt.Errorf("path %.40q... is %d bytes under %s, over the system's %d: %w", r, len(r), root, MaxPath, ErrTooLong)
	}
	return full, nil
}

// rootForms returns root as given (made absolute and clean) and, when it
// differs, with its symlinks resolved. The resolution is remembered per
// root: it costs an lstat of every directory from / down (eight for a
// session's worktree), and a tool call asks for it twice. A stale
// resolution cannot lead out: a path it accepts is still used as root
// joined with the relative path Rel returns.
func rootForms(root string) ([]string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("root %s: %w", root, err)
	}
	if forms, ok := resolved.Load(abs); ok {
		return forms.([]string), nil
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("resolve root %s: %w", root, err)
	}
	forms := []string{abs}
	if real != abs {
		forms = append(forms, real)
	}
	if resolvedCount.Add(1) > maxResolved {
		// Roots are the workspace and the sessions' worktrees; a server
		// that saw this many starts over rather than keep them all.
		resolved.Clear()
		resolvedCount.Store(1)
	}
	resolved.Store(abs, forms)
	return forms, nil
}

// resolved caches rootForms: absolute root -> its forms.
var (
	resolved      stdsync.Map
	resolvedCount atomic.Int64
)

const maxResolved = 1024

// Real is p absolute with its symlinks resolved; p cleaned and absolute
// when it does not exist (or cannot be resolved). For comparing trusted
// paths of this machine (a workspace root, PRSM_HOME), not for confining.
func Real(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// maxLinks bounds the symbolic links Resolve follows, as the kernel's
// MAXSYMLINKS (40 on Linux) bounds a path's lookup.
const maxLinks = 40

// Resolve is the absolute path p with every symbolic link on it followed,
// as a system call that opens p for writing would follow them: the
// existing part of p is resolved one name at a time, a link that points
// nowhere yet is followed to where it points (a write creates its
// target), and what does not exist is joined on unchanged. Unlike Real
// it never stops at the first missing name or a dangling link, so that
// the answer says where a write to p would land. A chain of more than 40
// links is refused, as the kernel refuses it.
func Resolve(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("resolve %q: not an absolute path: %w", p, ErrBadPath)
	}
	rest := splitPath(p)
	resolved, links := string(filepath.Separator), 0
	for len(rest) > 0 {
		seg := rest[0]
		rest = rest[1:]
		switch seg {
		case ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved) // resolved holds no link
			continue
		}
		next := filepath.Join(resolved, seg)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			// Nothing below exists: no link to follow.
			return filepath.Join(append([]string{next}, rest...)...), nil
		}
		if err != nil {
			return "", fmt.Errorf("resolve %s: %w", p, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("resolve %s: too many levels of symbolic links: %w", p, ErrOutside)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("resolve %s: %w", p, err)
		}
		if filepath.IsAbs(target) {
			resolved = string(filepath.Separator)
		}
		rest = append(splitPath(target), rest...)
	}
	return resolved, nil
}

// splitPath is p's names, without empty ones.
func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == filepath.Separator })
}

// ResolvesInside reports whether p (absolute), resolved as Resolve does,
// stays under root, whose own symlinks are resolved too; where says where
// p leads when it does not.
func ResolvesInside(root, p string) (ok bool, where string) {
	real, err := Resolve(p)
	if err != nil {
		return false, err.Error()
	}
	rel, err := filepath.Rel(Real(root), real)
	if err != nil || !filepath.IsLocal(rel) {
		return false, real
	}
	return true, real
}
