package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/worktree"
)

// RewindPlan is Engine.RewindPlan's work.
func (rn *rewinder) RewindPlan(ctx context.Context, sessionID, id string) (*api.Plan, error) {
	return rn.Rewind(ctx, sessionID, id, true)
}

// Rewind is Engine.Rewind's work.
func (rn *rewinder) Rewind(ctx context.Context, sessionID, id string, dryRun bool) (*api.Plan, error) {
	s, c, err := rn.ckpt.Checkpoint(ctx, sessionID, id)
	if err != nil {
		return nil, err
	}
	if err := requireActive(s); err != nil {
		return nil, err
	}
	s, st, unlock, err := rn.sessions.lockSession(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	lock := &heldLock{unlock}
	defer lock.release()
	if err := rn.watch.settleUnclaimed(ctx, s, st); err != nil {
		return nil, err
	}
	rw, err := rn.planRewind(ctx, s, st, c)
	if err != nil {
		return nil, err
	}
	if dryRun {
		rw.now.done()
		rw.plan.DryRun = true
		return rw.plan, nil
	}
	defer rw.now.done()
	return rn.runRewind(ctx, s, st, lock, rw, "rewind to "+describe(c))
}

func describe(c *prsm.Checkpoint) string {
	if c.Name != "" {
		return fmt.Sprintf("%s (%s)", c.ID, short(c.Name, 40))
	}
	return c.ID
}

// asCheckedOut gives a rewind's targets of files that the checkpoint had
// as git checked them out (no record up to it had changed them) the
// content the checkout wrote (asCheckout). The worktree's side needs no
// such reading: a file with no record at all is the base's in both trees,
// so it is in no diff, and one with records holds their bytes. It returns
// the paths it adds to the rewind: files whose trees agree though their
// bytes do not (the agent's LF now, git's CRLF at the checkpoint). Paths
// no conversion can apply to (in most repositories, all) cost nothing.
func (rn *rewinder) asCheckedOut(ctx context.Context, s *prsm.Session, st *sessionState, c *prsm.Checkpoint, diffs []worktree.TreeDiff, rb *selectorRewind) (map[string]bool, error) {
	then := rn.ckpt.unchangedBy(ctx, s, c.RecordSeq)
	inDiff := map[string]bool{}
	for _, d := range diffs {
		inDiff[d.Path] = true
		to, _, err := rn.ckpt.asCheckout(ctx, st, d.Path, d.To, then)
		if err != nil {
			return nil, err
		}
		rb.targets[d.Path] = to
	}
	added := map[string]bool{}
	objs, err := rn.Repo.Objects()
	if err != nil {
		return nil, err
	}
	for _, r := range rb.undo {
		path := r.RelPath
		if inDiff[path] || added[path] {
			continue
		}
		// Not in the diff: the checkpoint's tree has the file the
		// worktree's tree has now, which is the base's where no record
		// had changed it by the checkpoint (asCheckout checks both).
		f, err := objs.ReadFile(st.tracker.Base, path)
		if errors.Is(err, worktree.ErrNoFile) {
			continue
		}
		if err != nil {
			return nil, err
		}
		to, converted, err := rn.ckpt.asCheckout(ctx, st, path, &f, then)
		if err != nil || !converted {
			if err != nil {
				return nil, err
			}
			continue
		}
		from, err := st.tracker.KnownVersion(path, rn.capture.blobs(ctx))
		if err != nil {
			return nil, err
		}
		if from.Present && from.Mode == to.Mode && bytes.Equal(from.Content, to.Content) {
			continue
		}
		rb.targets[path], rb.from[path] = to, from
		added[path] = true
	}
	return added, nil
}
