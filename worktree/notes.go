package worktree

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// ErrNoteNotPlain means AddNote leaves the note to git notes: the
// commit has a note already (git appends to it), the notes tree is fanned
// out into directories, or the ref moved while the note was made.
var ErrNoteNotPlain = errors.New("note left to git notes")

// AddNote adds note as commit's note under the notes ref (refs/notes/...),
// as `git notes add` would, without a git process: a notes commit by
// prsm on the ref's tip, whose tree is the tip's with a blob named by
// commit's id, written as loose objects; the ref moves only from the tip
// it was read at (under its .lock, as git moves refs). A commit with a
// note already, a tree with git's fan-out directories (git makes them
// past 256 notes), or a ref that moved meanwhile is ErrNoteNotPlain: run
// git notes then, which appends and fans out.
func (o *Objects) AddNote(ref, commit string, note []byte, when time.Time) error {
	if !strings.HasPrefix(ref, "refs/notes/") || strings.Contains(ref, "..") || !hexID.MatchString(commit) {
		return fmt.Errorf("add note under %s: refused", ref)
	}
	tip, err := o.Ref(ref)
	if err != nil {
		return err
	}
	base := ""
	if tip != "" {
		if base, err = o.CommitTreeID(tip); err != nil {
			return err
		}
		o.mu.Lock()
		t, err := o.tree(plumbing.NewHash(base))
		o.mu.Unlock()
		if err != nil {
			return err
		}
		for _, e := range t.entries {
			if e.Name == commit || (e.Mode == filemode.Dir && len(e.Name) == 2) {
				return ErrNoteNotPlain
			}
		}
	}
	b := o.NewBatch()
	tree, err := b.BuildTree(base, []TreeChange{{Path: commit, File: &File{Mode: 0o100644, Content: note}}})
	if err != nil {
		return err
	}
	c, err := b.Commit(tree, tip, "Notes added by prsm commit\n", when)
	if err != nil {
		return err
	}
	if err := o.WriteLoose(b.Objects()); err != nil {
		return err
	}
	return o.moveRef(ref, tip, c)
}

// moveRef points ref at to, if it points at from ("" for none) when its
// lock is held (writeRef); else, and when git holds the lock,
// ErrNoteNotPlain.
func (o *Objects) moveRef(ref, from, to string) error {
	err := o.writeRef(ref, to, false, func() error {
		if now, err := o.Ref(ref); err != nil || now != from {
			return ErrNoteNotPlain
		}
		return nil
	})
	if errors.Is(err, fs.ErrExist) {
		return ErrNoteNotPlain
	}
	return err
}
