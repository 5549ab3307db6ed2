package engine

import (
	"context"
	"fmt"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/tracker"
)

// fillPlan lists operations, warnings and conflicts. opType names the
// operation of a path (false: the worktree does not change there).
func (rn *rewinder) fillPlan(ctx context.Context, s *prsm.Session, rb *selectorRewind, opType func(string) (string, bool)) error {
	p := rb.plan
	p.Operations, p.AffectedFiles, p.Conflicts, p.Warnings = []api.Operation{}, []string{}, []api.Conflict{}, []string{}
	byPath := map[string][]*prsm.Record{} // newest first
	paths := map[string]bool{}
	for _, r := range rb.undo {
		byPath[r.RelPath] = append(byPath[r.RelPath], r)
		paths[r.RelPath] = true
		if r.Status == prsm.StatusAccepted {
			p.Warnings = append(p.Warnings, fmt.Sprintf("undoes accepted change %s (%s)", r.ID, r.RelPath))
		}
	}
	for _, path := range sortedKeys(paths) {
		typ, ok := opType(path)
		if !ok {
			continue
		}
		op := api.Operation{Type: typ, Path: path, RecordIDs: []string{}}
		recs := byPath[path]
		for i := len(recs) - 1; i >= 0; i-- {
			op.RecordIDs = append(op.RecordIDs, recs[i].ID)
		}
		if len(recs) == 0 {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s changed in the worktree without a record; only the worktree is restored", path))
		}
		p.Operations = append(p.Operations, op)
		p.AffectedFiles = append(p.AffectedFiles, path)
	}
	// Simulate the workspace's reverse merges to find the conflicts.
	results := map[string]sync.Version{} // each path's file afterwards, where no conflict
	dirs := map[string]bool{}            // paths where the workspace has a directory (fileAt)
	for _, path := range sortedKeys(paths) {
		ws, isDir, err := fileAt(rn.Repo.Root, path)
		if err != nil {
			p.Conflicts = append(p.Conflicts, api.Conflict{Path: path, Reason: err.Error()})
			continue
		}
		dirs[path] = isDir
		ok := true
		for _, r := range byPath[path] {
			if r.SyncState != prsm.SyncSynced {
				continue // never reached the workspace: nothing to take out
			}
			before, after, err := rn.rec.versions(ctx, r)
			if err != nil {
				return err
			}
			if ws, ok = sync.Merge(after, ws, before); !ok {
				p.Conflicts = append(p.Conflicts, api.Conflict{Path: path,
					Reason: fmt.Sprintf("your edits overlap change %s; the workspace file will be left as it is", r.ID)})
				break
			}
		}
		if ok {
			results[path] = ws
		}
	}
	// A file or link comes back where a directory stands only if the
	// rewind takes out all that the directory holds.
	gone := func(rel string) bool { v, ok := results[rel]; return ok && !v.Present }
	for _, path := range sortedKeys(dirs) {
		if v, ok := results[path]; dirs[path] && ok && v.Present && !emptiedBy(rn.Repo.Root, path, gone) {
			p.Conflicts = append(p.Conflicts, api.Conflict{Path: path,
				Reason: "your workspace has a directory there, holding files this rollback keeps; it will be left as it is"})
		}
	}
	return nil
}

// planWrites decides a selector rewind's worktree writes without making
// any: each record's delta comes out of the file by reverse merges, newest
// first, and it refuses when a later change overlaps. Every content it may write, now or
// to put the worktree back, goes to the blob store.
func (rn *rewinder) planWrites(ctx context.Context, s *prsm.Session, st *sessionState, rb *selectorRewind) (*selectorPayload, error) {
	p := &selectorPayload{Undo: []string{}, Worktree: map[string]store.FileState{}, Before: map[string]store.FileState{}}
	for _, r := range rb.undo {
		p.Undo = append(p.Undo, r.ID)
	}
	for _, r := range rb.undo {
		if r.SyncState != prsm.SyncSynced {
			if p.Unsynced == nil {
				p.Unsynced = map[string]string{}
			}
			p.Unsynced[r.ID] = r.Status
		}
	}
	targets, err := rn.selectorTargets(ctx, s, rb.undo)
	if err != nil {
		return nil, err
	}
	var contents [][]byte
	for _, rel := range sortedKeys(targets) {
		before, err := st.tracker.KnownVersion(rel, rn.capture.blobs(ctx))
		if err != nil {
			return nil, err
		}
		v := targets[rel]
		p.Worktree[rel], p.Before[rel] = tracker.StateOf(v), tracker.StateOf(before)
		for _, x := range []sync.Version{v, before} {
			if x.Present {
				contents = append(contents, x.Content)
			}
		}
	}
	err = rn.DB.Tx(ctx, func(q store.Querier) error {
		for _, c := range contents {
			if _, err := store.PutBlob(ctx, q, c); err != nil {
				return err
			}
		}
		return nil
	})
	return p, err
}
