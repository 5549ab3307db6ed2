package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/tracker"
)

// claim keeps, of the changes found for tool call tc (call: what its
// capture worked out, nil when it had none), those that are its own, and
// notes on those it shares a name with (notes, by path).
//
// A file already written when the call started (its capture saw it
// differ) and unchanged since is never its own: it belongs to the call
// that wrote it, the open call that names it, or else to Watch. A call
// being closed without its PostToolUse claims only call.closing.
//
// When other tool calls run at the same time (parallel tool calls,
// subagents): a patch (call.patchCall) claims the files its text names,
// whatever else runs, noting a file another running call names too (the
// first to complete takes it). A tool that changes the one file it names
// claims that file only. Any other tool claims what no other running call
// names: not the file of a running Edit or Write, nor a file a running
// Bash's command or patch names (a redirect, sed -i, touch, a cp or mv
// target), or a file under a directory it names (rm -r, cp -r, mv),
// unless its own command names it too. A file both commands name, or
// none, goes to the first to complete: which wrote it is unknown. What it
// leaves (left) stays unrecorded, for the calls still running or, after
// them, a Watch record. own reuses changes' array: the caller drops
// changes.
func claim(st *sessionState, tc *prsm.ToolCall, named string, call *inflightCall, snap snapshot, changes []tracker.Change) (own []tracker.Change, left []string, notes map[string]string) {
	var targets []string
	patch := map[string]bool{}
	if call != nil {
		targets = call.targets
		for _, rel := range call.patch {
			patch[rel] = true
		}
	}
	theirs := map[string]bool{}
	shell := map[string]bool{}       // what running shell commands and patches name
	namedBy := map[string][]string{} // which running calls name a file
	others := false
	for id, c := range st.inflight {
		if id == tc.ID {
			continue
		}
		others = true
		if tracker.ChangesNamedFileOnly(c.tc.ToolName) && c.rel != "" {
			theirs[c.rel] = true
			namedBy[c.rel] = append(namedBy[c.rel], id)
		}
		for _, rel := range c.targets {
			shell[rel] = true
		}
		for _, rel := range c.patch {
			shell[rel] = true
			namedBy[rel] = append(namedBy[rel], id)
		}
	}
	ours := map[string]bool{}
	for _, rel := range targets {
		ours[rel] = true
	}
	// own takes changes' array (it is never longer): a call that wrote
	// 200k files holds their changes once.
	own = changes[:0]
	for _, ch := range changes {
		var mine bool
		switch {
		case call != nil && call.closing != nil:
			mine = call.closing[ch.Rel]
		case writtenBefore(snap, ch):
			mine = false
		case !others:
			mine = true
		case call != nil && call.patchCall:
			if mine = patch[ch.Rel]; mine && len(namedBy[ch.Rel]) > 0 {
				if notes == nil {
					notes = map[string]string{}
				}
				ids := namedBy[ch.Rel]
				sort.Strings(ids)
				notes[ch.Rel] = fmt.Sprintf("also named by tool call %s, still running: the first to complete took it", strings.Join(ids, ", "))
			}
		case tracker.ChangesNamedFileOnly(tc.ToolName):
			// Its file only: none, when it names none in the worktree
			// (a path outside it, or arguments it cannot read).
			mine = named != "" && ch.Rel == named
		default:
			mine = !theirs[ch.Rel] && (!namesFile(shell, ch.Rel) || namesFile(ours, ch.Rel))
		}
		if mine {
			own = append(own, ch)
		} else {
			left = append(left, ch.Rel)
		}
	}
	return own, left, notes
}

// writtenBefore reports whether change ch was there already when the
// call whose capture is snap started: the capture saw the file differ
// from what prsm knew, and it holds what the capture saw.
func writtenBefore(snap snapshot, ch tracker.Change) bool {
	fs, ok := snap[ch.Rel]
	return ok && tracker.StateOf(ch.After) == fs
}

// namesFile reports whether targets (a shell command's) name rel or a
// directory it is in (rm -r, cp -r and mv name directories).
func namesFile(targets map[string]bool, rel string) bool {
	if len(targets) == 0 {
		return false
	}
	for p := rel; p != "." && p != "/" && p != ""; p = path.Dir(p) {
		if targets[p] {
			return true
		}
	}
	return false
}

// openPatchFiles are the files the patch calls in flight name: the
// capture of a call looks at them, so that a file a patch wrote before
// the call started is seen as such (writtenBefore) even before the
// watcher reports it.
func openPatchFiles(st *sessionState) (ids, files []string) {
	for id, c := range st.inflight {
		if c.patchCall {
			ids = append(ids, id)
			files = append(files, c.patch...)
		}
	}
	sort.Strings(ids)
	return ids, files
}

// closedPatchResult is the result stored for a patch call closed without
// its PostToolUse.
var closedPatchResult = []byte(`{"prsm":"closed: a patch that failed or ran through the shell sends no PostToolUse"}`)

// closePatches closes the patch calls that were in flight when tool call
// call started and are open still: call ran after them, so they ended
// (a patch is applied at once), and they will send no PostToolUse (it
// failed, or Codex applied it from the shell). Each takes the files its
// text names that were written when call started (snap) and that call
// left; a patch that wrote none is closed with no records. finish is the
// records' to run after the answer. The caller holds the session's lock.
func (cr *capturer) closePatches(ctx context.Context, s *prsm.Session, st *sessionState, call *inflightCall, snap snapshot) (finish func(), err error) {
	var finishes []func()
	finish = func() {
		for _, f := range finishes {
			f()
		}
	}
	for _, id := range call.before {
		p := st.inflight[id]
		if p == nil || !p.patchCall {
			continue
		}
		p.closing = map[string]bool{}
		for _, rel := range p.patch {
			if _, ok := snap[rel]; ok {
				p.closing[rel] = true
			}
		}
		recs, f, err := cr.detectAndRecord(ctx, s, st, p.tc, p, closedPatchResult, false)
		finishes = append(finishes, f)
		delete(st.inflight, id)
		if se := (*syncError)(nil); err != nil && !errors.As(err, &se) {
			return finish, fmt.Errorf("close patch call %s: %w", id, err)
		}
		cr.Log.Info("patch call closed: a later call completed, and a patch that failed or ran through the shell sends no PostToolUse",
			"session", s.ID, "tool_call", id, "records", len(recs))
	}
	return finish, nil
}

// decodeSnapshot is a stored capture's snapshot; nil when it has none or
// cannot be read (detectAndRecord reports that).
func decodeSnapshot(b []byte) snapshot {
	var snap snapshot
	if len(b) > 0 && json.Unmarshal(b, &snap) != nil {
		return nil
	}
	return snap
}

// both runs f, then g.
func both(f, g func()) func() {
	return func() {
		f()
		g()
	}
}

// byStart sorts calls oldest first, by when they started and then by id.
func byStart(calls []*inflightCall) {
	sort.Slice(calls, func(i, j int) bool {
		a, b := calls[i].tc, calls[j].tc
		if !a.StartedAt.Equal(b.StartedAt) {
			return a.StartedAt.Before(b.StartedAt)
		}
		return a.ID < b.ID
	})
}

// closeOpenPatches closes every patch call in flight, oldest first, each
// with the files its text names that changed; the caller knows that no
// tool runs (a turn starts or ends) and holds the session's lock.
func (cr *capturer) closeOpenPatches(ctx context.Context, s *prsm.Session, st *sessionState) error {
	var open []*inflightCall
	for _, c := range st.inflight {
		if c.patchCall {
			open = append(open, c)
		}
	}
	byStart(open)
	for _, p := range open {
		p.closing = map[string]bool{}
		for _, rel := range p.patch {
			p.closing[rel] = true
		}
		recs, finish, err := cr.detectAndRecord(ctx, s, st, p.tc, p, closedPatchResult, false)
		finish()
		delete(st.inflight, p.tc.ID)
		if se := (*syncError)(nil); err != nil && !errors.As(err, &se) {
			return fmt.Errorf("close patch call %s: %w", p.tc.ID, err)
		}
		cr.Log.Info("patch call closed between turns: a patch that failed or ran through the shell sends no PostToolUse",
			"session", s.ID, "tool_call", p.tc.ID, "records", len(recs))
	}
	return nil
}
