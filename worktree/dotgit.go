package worktree

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/prsm-dev/prsm/sync"
)

// DotGitRepair says what RepairDotGit put right.
type DotGitRepair struct {
	// Found describes what stood at the worktree's .git: a file and
	// its first line, a directory, a symlink and its target, or
	// nothing.
	Found string
	// Kept is where it was moved to; empty when nothing stood there.
	Kept string
	// Entry is set when git's entry for the worktree named another
	// place as the worktree's .git and was pointed back.
	Entry bool
}

// String says it in a line for logs and notes.
func (d *DotGitRepair) String() string {
	var parts []string
	switch {
	case d.Found == "nothing":
		parts = append(parts, "the worktree's .git file was gone; prsm put back the one git wrote")
	case d.Found != "":
		s := "the worktree's .git was changed (found " + d.Found + "); prsm put back the file git wrote"
		if d.Kept != "" {
			s += " and kept the changed one in " + filepath.Dir(d.Kept)
		}
		parts = append(parts, s)
	}
	if d.Entry {
		parts = append(parts, "git's entry for the worktree named another place; prsm pointed it back")
	}
	return strings.Join(parts, "; ")
}

// RepairDotGit checks the session worktree at path: its .git is a file
// that names git's entry for it, as git wrote it, and that entry names
// the worktree back. Where either differs, it puts it right and says
// what it did; nil means nothing needed doing (or the worktree is gone:
// its caller handles that). Whatever stood at .git is moved into the
// directory quarantine (created 0700), never deleted: the bytes are the
// agent's. The check costs an lstat and the read of a small file; git's
// entry, which lies in the user's git directory, is checked the first
// time and after each repair.
func (r *Repo) RepairDotGit(path, quarantine string) (*DotGitRepair, error) {
	l, err := r.Linked(path)
	if err != nil {
		if _, serr := os.Lstat(path); serr != nil {
			return nil, nil
		}
		return nil, err
	}
	rep := &DotGitRepair{}
	dotgit := filepath.Join(l.WorkTree, ".git")
	checkEntry := func() error {
		if g, ok := entryGitdir(l.GitDir); !ok || g != dotgit {
			if err := sync.WriteFileFrom(filepath.Join(l.GitDir, "gitdir"), 0o644, func(f *os.File) error {
				_, err := f.WriteString(dotgit + "\n")
				return err
			}); err != nil {
				return fmt.Errorf("repair git's entry for %s: %w", l.WorkTree, err)
			}
			rep.Entry = true
		}
		r.linkedMu.Lock()
		r.entryOK[path] = true
		r.linkedMu.Unlock()
		return nil
	}
	r.linkedMu.Lock()
	checked := r.entryOK[path]
	r.linkedMu.Unlock()
	if !checked {
		if err := checkEntry(); err != nil {
			return nil, err
		}
	}
	for try := 0; ; try++ {
		fi, err := os.Lstat(dotgit)
		switch {
		case errors.Is(err, os.ErrNotExist):
			if _, err := os.Lstat(l.WorkTree); err != nil {
				return nil, nil // the worktree is gone
			}
			if rep.Found == "" {
				rep.Found = "nothing"
			}
		case err != nil:
			return nil, fmt.Errorf("check %s: %w", dotgit, err)
		default:
			var b []byte
			if fi.Mode().IsRegular() {
				b, _ = readSmall(dotgit)
				if holdsEntry(b, l) {
					if rep.Entry || rep.Found != "" {
						return rep, nil
					}
					return nil, nil
				}
			}
			if rep.Found == "" {
				rep.Found = describe(dotgit, fi, b)
			}
			kept, err := keep(dotgit, quarantine, filepath.Base(l.WorkTree))
			if err != nil {
				return nil, err
			}
			if rep.Kept == "" {
				rep.Kept = kept
			}
		}
		// O_EXCL: what the agent puts there meanwhile is kept the same
		// way on the next round, never overwritten.
		f, err := os.OpenFile(dotgit, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) && try < 3 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("repair %s: %w", dotgit, err)
		}
		_, werr := f.WriteString("gitdir: " + l.GitDir + "\n")
		if err := errors.Join(werr, f.Close()); err != nil {
			return nil, fmt.Errorf("repair %s: %w", dotgit, err)
		}
		if checked {
			// Whoever rewrote the file may have moved git's entry too.
			if err := checkEntry(); err != nil {
				return nil, err
			}
		}
		return rep, nil
	}
}

// holdsEntry reports whether b, a worktree's .git file, names l's entry
// as git writes it: "gitdir: <path>", absolute or (with
// worktree.useRelativePaths) relative to the worktree.
func holdsEntry(b []byte, l Linked) bool {
	s, ok := strings.CutPrefix(strings.TrimRight(string(b), " \t\r\n"), "gitdir: ")
	if !ok || strings.ContainsAny(s, "\r\n") {
		return false
	}
	if s == l.GitDir {
		return true
	}
	rel, err := filepath.Rel(l.WorkTree, l.GitDir)
	return err == nil && s == rel
}

// describe says in a few words what stood at p: fi is its lstat, b the
// start of its content when it is a file.
func describe(p string, fi os.FileInfo, b []byte) string {
	switch {
	case fi.Mode().IsRegular():
		line, _, _ := strings.Cut(string(b), "\n")
		return fmt.Sprintf("a file holding %q", printable(line, 200))
	case fi.IsDir():
		return "a directory"
	case fi.Mode()&os.ModeSymlink != 0:
		target, _ := os.Readlink(p)
		return fmt.Sprintf("a symlink to %q", printable(target, 200))
	}
	return "a " + fi.Mode().Type().String() + " file"
}

// printable is s with control characters and invalid UTF-8 replaced,
// cut to at most n bytes.
func printable(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "..."
	}
	return s
}

// keep moves p into the directory quarantine under a new name that
// starts with prefix, and returns that name.
func keep(p, quarantine, prefix string) (string, error) {
	if err := os.MkdirAll(quarantine, 0o700); err != nil {
		return "", fmt.Errorf("quarantine %s: %w", p, err)
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	dst := filepath.Join(quarantine, prefix+"-dotgit-"+time.Now().UTC().Format("20060102T150405.000000000")+"-"+hex.EncodeToString(b[:]))
	if err := os.Rename(p, dst); err != nil {
		return "", fmt.Errorf("quarantine %s: %w", p, err)
	}
	return dst, nil
}
