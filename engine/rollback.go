package engine

import (
	"context"
	"sort"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
)

// rollback is what a plan will do: the records it undoes (newest first)
// and, for a rewind, the exact worktree target of every differing path.
type rollback struct {
	plan    *api.Plan
	undo    []*prsm.Record
	targets map[string]sync.Version // nil: reverse-merge the records in the worktree too
	// from is, for a rewind, what each target path holds now as far as
	// prsm knows: the workspace takes the net change from -> target.
	from map[string]sync.Version
	// now is the tree of the current state a rewind planned against: the
	// safety checkpoint's tree, not built twice.
	now *treeState
	// wsTargets (a rewind in review mode) are the workspace's targets
	// where they are not the worktree's (reviewTargets); wsConflict the
	// paths whose target could not be worked out, left as they are.
	wsTargets  map[string]sync.Version
	wsConflict map[string]bool
	// byRecord (a rewind in review mode) are the paths whose workspace
	// takes the undone records' deltas out one by one (reviewTargets).
	byRecord map[string]bool
	// hidden (a rewind in review mode) are, by path, the records rejected
	// since the checkpoint without ever reaching the workspace (made after
	// it, or made before it and not rejected by the user by then): the
	// workspace's side of the worktree leaves them out too, where an
	// undone record brings them back (broughtBack).
	hidden map[string][]*prsm.Record
}

// delta is one record's change of a file.
type delta struct{ before, after sync.Version }

// deltas are the changes of recs, in their order.
func (e *Engine) deltas(ctx context.Context, recs []*prsm.Record) ([]delta, error) {
	ds := make([]delta, len(recs))
	for i, r := range recs {
		b, a, err := e.versions(ctx, r)
		if err != nil {
			return nil, err
		}
		ds[i] = delta{b, a}
	}
	return ds, nil
}

// cancelling returns the last index j of a run of deltas from i (newest
// first, each one's before the next one's after) whose net change is
// nothing (the oldest one's before is the newest one's after); i where
// there is none.
func cancelling(ds []delta, i int) int {
	for k := i; k < len(ds); k++ {
		if sameVersion(ds[k].before, ds[i].after) {
			return k
		}
		if k+1 < len(ds) && !sameVersion(ds[k].before, ds[k+1].after) {
			break
		}
	}
	return i
}

// newestFirst is the records of a and b, newest first.
func newestFirst(a, b []*prsm.Record) []*prsm.Record {
	out := append(append([]*prsm.Record{}, a...), b...)
	sortRecords(out, true)
	return out
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// rollbackPayload is a rollback's intent (SPEC rule 6): everything needed
// to finish it after a crash, decided before its first write. The worktree
// side is exact targets, so writing them again is harmless; the workspace
// side is the records to undo, and those already marked rejected are done.
type rollbackPayload struct {
	Safety   string                     `json:"safety"`   // the safety checkpoint taken first
	Undo     []string                   `json:"undo"`     // records it undoes, newest first
	Worktree map[string]store.FileState `json:"worktree"` // the exact target of every worktree path it writes
	Before   map[string]store.FileState `json:"before"`   // what those paths held before (as prsm knew them)
	// Net (a rewind): the workspace takes each path's net change out
	// (Before -> Worktree) in one merge, rather than record by record. A
	// rewind may undo a rollback's own record without the records that
	// rollback rejected: record by record, that would bring back in the
	// workspace what the rollback took out.
	Net bool `json:"net,omitempty"`
	// ByRecord lists paths a rewind takes out record by record: in review
	// mode, those whose change the undone records explain (reviewTargets);
	// in payloads of older versions, those with Unsynced records.
	ByRecord []string `json:"by_record,omitempty"`
	// Unsynced are the undone records that had not reached the workspace
	// (review mode, a failed sync), with the status each had. The
	// workspace takes none of their deltas (workspaceSide), and the
	// rollback's own records tell that part apart (recordRollback).
	Unsynced map[string]string `json:"unsynced,omitempty"`
	// Workspace (a rewind in review mode) holds the workspace's target of
	// each path where it is not the worktree's (reviewTargets), and
	// WorkspaceConflict the paths whose workspace file is left as it is.
	Workspace         map[string]store.FileState `json:"workspace,omitempty"`
	WorkspaceConflict []string                   `json:"workspace_conflict,omitempty"`
	// Hidden (a rewind in review mode) lists by path, newest first, the
	// records rejected since the checkpoint without ever reaching the
	// workspace (rollback.hidden): taken out with the Unsynced ones that
	// bring them back (rollbackSide).
	Hidden map[string][]string `json:"hidden,omitempty"`

	session string // the session's id, not stored
}

// stateVersion is the version a stored file state describes.
func (e *Engine) stateVersion(ctx context.Context, fs store.FileState) (sync.Version, error) {
	if !fs.Present {
		return sync.Absent, nil
	}
	b, err := store.GetBlob(ctx, e.DB.Q(), fs.Hash)
	if err != nil {
		return sync.Version{}, err
	}
	return sync.Version{Present: true, Mode: fs.Mode, Content: b}, nil
}

func (e *Engine) stateVersions(ctx context.Context, m map[string]store.FileState) (map[string]sync.Version, error) {
	out := make(map[string]sync.Version, len(m))
	for rel, fs := range m {
		v, err := e.stateVersion(ctx, fs)
		if err != nil {
			return nil, err
		}
		out[rel] = v
	}
	return out, nil
}

func rollbackToolCall(safety string) string { return "rollback-" + safety }

func sortedVersions(m map[string]sync.Version) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
