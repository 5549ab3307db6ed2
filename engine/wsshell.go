package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/internal/safepath"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/tracker"
)

// Writes to the workspace's own path. An agent told to work in its
// worktree still sometimes names the workspace's absolute path. Claude
// Code's edit tools are moved onto the worktree by its hook
// (updatedInput), but a shell command cannot be rewritten, nor can every
// agent's tool input. So the capture of a tool call reads the workspace
// files it names by the workspace's path (a shell command's targets, an
// edit's file, a patch's files), and its complete compares: a file the
// tool changed there is brought into the session's worktree and recorded
// under the call like any change, with a note that says so. In review mode the workspace then goes back to what
// it held, until the change is accepted; in auto mode it keeps the
// change, which a reject takes out as usual.

// Bounds of what a capture reads of the workspace for one command.
const (
	maxWorkspaceShellFiles = 100
	maxWorkspaceShellBytes = 16 << 20 // per file; a larger one is compared by its hash
)

// workspaceShellNote is the note of a record whose change the agent's
// shell wrote to the workspace's own path.
const workspaceShellNote = "written to the workspace's own path, not the session's worktree; prsm brought it into the worktree for review"

// workspaceShellPaths are the workspace files (relative paths) a tool
// call names by the workspace's own path, with what each holds before the
// tool runs: a Bash command's targets, the file an edit tool's arguments
// name, the files of a patch. Paths prsm does not track (ignored,
// scratch, its own state) are left out. Nil when it names none.
func (cr *capturer) workspaceShellPaths(ctx context.Context, s *prsm.Session, st *sessionState, tool string, args json.RawMessage, cwd string) map[string]sync.Version {
	root := cr.Repo.Root
	if !strings.Contains(string(args), root) {
		return nil // a path named some other way (a variable, ~) is not seen
	}
	var abs []string
	if tool == tracker.ToolBash {
		var m struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(args, &m) != nil {
			return nil
		}
		abs = tracker.BashTargets(m.Command, shellDir(s, cwd))
	} else {
		if p := namedPath(args); filepath.IsAbs(p) {
			abs = append(abs, p)
		}
		var m struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(args, &m) == nil {
			for _, p := range tracker.PatchFiles(m.Command) {
				if filepath.IsAbs(p) {
					abs = append(abs, p)
				}
			}
		}
	}
	var rels []string
	for _, p := range abs {
		if len(rels) == maxWorkspaceShellFiles {
			break
		}
		if _, err := safepath.Rel(s.WorktreePath, p); err == nil || filepath.Clean(p) == s.WorktreePath {
			continue // the worktree's (it may lie inside the workspace)
		}
		if rel, err := safepath.Rel(root, p); err == nil {
			rels = append(rels, rel)
		}
	}
	if len(rels) == 0 {
		return nil
	}
	rels, err := st.tracker.Filter(ctx, rels)
	if err != nil || len(rels) == 0 {
		return nil
	}
	out := map[string]sync.Version{}
	for _, rel := range rels {
		v, err := sync.ReadVersionMax(root, rel, maxWorkspaceShellBytes)
		if err != nil {
			continue // a directory, a device: nothing prsm records
		}
		out[rel] = v
	}
	return out
}

// workspaceShellWrites brings into the session's worktree what a Bash
// call's command changed in the workspace files it named by the
// workspace's path (pre: what they held at its capture), and returns them
// with what each holds now. The caller holds the session's lock, records
// the call's changes with these paths among them, then calls
// settleWorkspaceShell.
func (cr *capturer) workspaceShellWrites(s *prsm.Session, st *sessionState, pre map[string]sync.Version) map[string]sync.Version {
	moved := map[string]sync.Version{}
	for rel, before := range pre {
		now, err := sync.ReadVersionMax(cr.Repo.Root, rel, maxWorkspaceShellBytes)
		if err != nil || sync.Same(before, now) {
			continue
		}
		if _, big := now.Big(); big {
			// No bytes to bring over; the watcher of the worktree never
			// sees it. Say so rather than record half of it.
			cr.Log.Warn("a shell command wrote a large file to the workspace's own path; not recorded", "session", s.ID, "file", rel)
			continue
		}
		if wt, err := sync.ReadVersion(s.WorktreePath, rel); err == nil && sync.Same(wt, now) {
			continue // the worktree has it already
		}
		if err := sync.Write(s.WorktreePath, rel, now); err != nil {
			cr.Log.Error("bring a workspace write into the worktree", "session", s.ID, "file", rel, "err", err)
			continue
		}
		moved[rel] = now
	}
	if len(moved) > 0 {
		st.notes = map[string]string{}
		for rel := range moved {
			st.notes[rel] = workspaceShellNote
		}
	}
	return moved
}

// settleWorkspaceShell ends what workspaceShellWrites began, once the
// call's records are stored: in review mode, the workspace files the
// command changed go back to what they held before it (pre), while their
// records wait for review; a file the user changed since is left as it is.
func (cr *capturer) settleWorkspaceShell(s *prsm.Session, st *sessionState, pre, moved map[string]sync.Version, recs []*prsm.Record) {
	st.notes = nil
	if s.Mode != prsm.ModeReview || len(moved) == 0 {
		return
	}
	for _, r := range recs {
		now, ok := moved[r.RelPath]
		if !ok || r.Status != prsm.StatusPending {
			continue
		}
		before := pre[r.RelPath]
		if _, big := before.Big(); big {
			continue // no bytes to put back; the record says what changed
		}
		out, err := cr.ws.Apply(r.RelPath, now, before)
		if err != nil || out == sync.Conflict {
			cr.Log.Warn("workspace file the shell wrote left as it is", "session", s.ID, "file", r.RelPath, "outcome", fmt.Sprint(out), "err", err)
		}
	}
}
