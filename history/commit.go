package history

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/safepath"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/worktree"
)

// commitTimeout bounds git commit: the user's hooks run in it.
const commitTimeout = 10 * time.Minute

// group is the records of one commit: a turn's, or a session's with
// --squash.
type group struct {
	session *prsm.Session
	turns   []int
	recs    []*prsm.Record
	files   []string // in the order first changed
	// in is each file as the commit has it (its git mode; absent for a
	// file the commit deletes).
	in map[string]sync.Version
	// info is the files' lines of update-index --index-info, once their
	// blobs are written (indexInfo).
	info map[string]string
}

// Commit is prsm commit: each group's accepted lines (HEAD plus each
// accepted record's change, applied in order) committed on the user's
// current branch with git commit, hooks and signing as the user set
// them, from a temporary index. The user's index then has the committed
// files as the new HEAD has them and its other entries as they were; the
// workspace's bytes do not change. A failed commit undoes the commits
// made before it, so nothing is half-made, and marks no record.
func (h *History) Commit(ctx context.Context, req api.CommitRequest) (*api.CommitReport, error) {
	branch, head, err := h.commitPoint(ctx)
	if err != nil {
		return nil, err
	}
	// The filter drivers are looked up while the plan, the trees and the
	// index are made: a git process off the way.
	var (
		pinned = make(chan struct{})
		git    *worktree.Runner
		pinErr error
	)
	if !req.DryRun {
		go func() {
			defer close(pinned)
			git, pinErr = h.Repo.Git().Pinned(ctx, h.Repo.Root)
		}()
	}
	runner := func() (*worktree.Runner, error) {
		<-pinned
		return git, pinErr
	}
	rep := &api.CommitReport{Commits: []api.PlannedCommit{}}
	groups, err := h.plan(ctx, req, head, rep)
	if err != nil {
		return nil, err
	}
	if len(groups) == 0 {
		return rep, prsm.Errorf(prsm.ErrConflict, string(api.CodeNothingToCommit), leftOutHint(rep),
			"nothing to commit: no accepted, uncommitted change matches%s", leftOutSummary(rep))
	}
	for i, g := range groups {
		msg := message(g, h.prompts(ctx, g.session.ID))
		if i < len(req.Messages) && strings.TrimSpace(req.Messages[i]) != "" {
			msg = req.Messages[i]
		}
		rep.Commits = append(rep.Commits, api.PlannedCommit{SessionID: g.session.ID, AgentID: g.session.AgentID,
			Turns: g.turns, Message: msg, Files: g.files, Records: ids(g.recs)})
	}
	if req.DryRun {
		return rep, nil
	}
	// The trace records are worked out while git commits: only their
	// revision waits for the commit.
	traced := make(chan []traced, 1)
	go func() { traced <- h.traces(ctx, groups, req.IncludeMine) }()
	made, err := h.commitAll(ctx, runner, branch, head, groups, rep)
	if err != nil {
		return nil, err
	}
	// The user's index, the records and the notes are separate files:
	// all three at once.
	indexDone, marked := make(chan error, 1), make(chan error, 1)
	go func() { indexDone <- h.syncIndex(ctx, git, groups) }()
	go func() {
		marked <- h.DB.Tx(ctx, func(q store.Querier) error {
			for i, g := range groups {
				if err := store.MarkCommitted(ctx, q, g.session.ID, made[i], ids(g.recs)); err != nil {
					return err
				}
			}
			return nil
		})
	}()
	for i, t := range <-traced {
		if t.err == nil {
			t.err = h.writeNote(ctx, made[i], t.withRevision(made[i]))
		}
		if t.err != nil {
			rep.LeftOut = append(rep.LeftOut, api.LeftOut{SessionID: groups[i].session.ID,
				Reason: fmt.Sprintf("the trace note of %.12s was not written: %v", made[i], t.err)})
		}
	}
	indexErr, markErr := <-indexDone, <-marked
	if indexErr != nil {
		return nil, fmt.Errorf("the commits are made; updating the index of their files failed: %w", indexErr)
	}
	if markErr != nil {
		return nil, fmt.Errorf("the commits are made; marking their changes committed failed: %w", markErr)
	}
	for i := range groups {
		rep.Commits[i].Commit = made[i]
	}
	return rep, nil
}

// commitPoint is the branch HEAD is on and its commit ("" on an unborn
// branch). It refuses a detached HEAD and a merge, rebase, cherry-pick,
// revert or bisect in progress.
func (h *History) commitPoint(ctx context.Context) (branch, head string, err error) {
	// HEAD is a file of the git directory: "ref: refs/heads/NAME" on a
	// branch, a commit's hash when detached.
	b, err := os.ReadFile(filepath.Join(h.Repo.GitDir, "HEAD"))
	if err != nil {
		return "", "", err
	}
	branch, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: ")
	if !ok || !strings.HasPrefix(branch, "refs/heads/") {
		return "", "", prsm.Errorf(prsm.ErrConflict, string(api.CodeDetachedHead), "check out a branch first (git switch NAME)",
			"HEAD is detached: prsm commit commits only on a branch")
	}
	for _, op := range inProgress {
		if _, err := os.Lstat(filepath.Join(h.Repo.GitDir, op.file)); err == nil {
			return "", "", prsm.Errorf(prsm.ErrConflict, string(api.CodeGitInProgress), "finish or abort it first",
				"a %s is in progress in the workspace", op.what)
		}
	}
	objs, err := h.Repo.Objects()
	if err != nil {
		return "", "", err
	}
	head, err = objs.Ref(branch) // "" on an unborn branch
	return branch, head, err
}

// inProgress are the files of the git directory that say an operation
// is in progress, and what it is.
var inProgress = []struct{ file, what string }{
	{"MERGE_HEAD", "merge"}, {"CHERRY_PICK_HEAD", "cherry-pick"}, {"REVERT_HEAD", "revert"},
	{"rebase-merge", "rebase"}, {"rebase-apply", "rebase"}, {"BISECT_LOG", "bisect"},
}

// plan picks the records req names and builds each group's files from
// HEAD (head) and the groups before it. What it cannot take goes to
// rep.LeftOut.
func (h *History) plan(ctx context.Context, req api.CommitRequest, head string, rep *api.CommitReport) ([]*group, error) {
	q := h.DB.Q()
	sessions, err := store.ListSessions(ctx, q, "")
	if err != nil {
		return nil, err
	}
	var files map[string]bool
	if len(req.Files) > 0 {
		files = map[string]bool{}
		for _, f := range req.Files {
			rel, err := safepath.Rel(h.Repo.Root, f)
			if err != nil {
				return nil, prsm.Errorf(prsm.ErrInvalid, string(api.CodeInvalidPath), "name files inside the workspace", "%v", err)
			}
			files[rel] = true
		}
	}
	found := false
	var groups []*group
	for _, s := range sessions {
		if req.Session != "" && !strings.HasPrefix(s.ID, req.Session) && s.Name != req.Session {
			continue
		}
		found = true
		recs, err := store.ListRecords(ctx, q, store.RecordFilter{SessionID: s.ID})
		if err != nil {
			return nil, err
		}
		byKey := map[int]*group{}
		for _, r := range recs {
			if r.Commit != "" || (req.Turn > 0 && r.MessageIndex != req.Turn) || (files != nil && !files[r.RelPath]) {
				continue
			}
			if why := notCommittable(r); why != "" {
				if why != "-" {
					rep.LeftOut = append(rep.LeftOut, api.LeftOut{SessionID: s.ID, RecordID: r.ID, Path: r.RelPath, Reason: why})
				}
				continue
			}
			key := r.MessageIndex
			if req.Squash {
				key = 0
			}
			g := byKey[key]
			if g == nil {
				g = &group{session: s, in: map[string]sync.Version{}}
				byKey[key] = g
				groups = append(groups, g)
			}
			if !slices.Contains(g.turns, r.MessageIndex) {
				g.turns = append(g.turns, r.MessageIndex)
			}
			g.recs = append(g.recs, r)
		}
	}
	if req.Session != "" && !found {
		return nil, prsm.Errorf(prsm.ErrNotFound, string(api.CodeSessionNotFound), "see `prsm session list`", "no session %q", req.Session)
	}
	// Oldest first, so that each builds on the one before.
	slices.SortStableFunc(groups, func(a, b *group) int { return int(a.recs[0].Seq - b.recs[0].Seq) })
	return h.build(ctx, groups, head, req.IncludeMine, rep)
}

// notCommittable says why record r is not committed: "" when it is, "-"
// when it is out of the work anyway (rejected, rewound).
func notCommittable(r *prsm.Record) string {
	switch {
	case r.Status == prsm.StatusRejected || r.Status == prsm.StatusRewound:
		return "-"
	case r.Status == prsm.StatusPending:
		return "pending review"
	case r.SyncState == prsm.SyncConflict:
		return "in conflict"
	}
	return ""
}

// build works out each group's files: from the tip before it (HEAD for
// the first), each record's accepted change applied in order (sync.Onto:
// its blocks of lines placed where its unchanged lines are in the tip),
// or, with mine, the workspace's bytes. A record whose change does not
// apply is left out, and so is a group left with nothing.
func (h *History) build(ctx context.Context, groups []*group, head string, mine bool, rep *api.CommitReport) ([]*group, error) {
	objs, err := h.Repo.Objects()
	if err != nil {
		return nil, err
	}
	tip := map[string]sync.Version{} // the files the groups before changed
	read := func(rel string) (sync.Version, error) {
		if v, ok := tip[rel]; ok || head == "" {
			return v, nil
		}
		f, err := objs.ReadFile(head, rel)
		if errors.Is(err, worktree.ErrNoFile) {
			return sync.Absent, nil
		}
		if err != nil {
			return sync.Version{}, err
		}
		return sync.Version{Present: true, Mode: f.Mode, Content: f.Content}, nil
	}
	var out []*group
	for _, g := range groups {
		var kept []*prsm.Record
		for _, r := range g.recs {
			cur, err := read(r.RelPath)
			if err != nil {
				return nil, err
			}
			before, after, err := h.sides(ctx, r)
			if errors.Is(err, prsm.ErrNotFound) {
				rep.LeftOut = append(rep.LeftOut, api.LeftOut{SessionID: r.SessionID, RecordID: r.ID, Path: r.RelPath,
					Reason: "too large: prsm keeps no copy of its content; commit it yourself"})
				continue
			}
			if err != nil {
				return nil, err
			}
			applied, ok := onto(r, before, after, cur)
			if !ok {
				rep.LeftOut = append(rep.LeftOut, api.LeftOut{SessionID: r.SessionID, RecordID: r.ID, Path: r.RelPath,
					Reason: "does not apply to HEAD: it overlaps lines that are not committed"})
				continue
			}
			if r.NewHash == "" && len(applied) == 0 {
				tip[r.RelPath] = sync.Absent // the record deleted the file
			} else {
				tip[r.RelPath] = sync.Version{Present: true, Mode: gitMode(r.ModeAfter, cur.Mode), Content: applied}
			}
			kept = append(kept, r)
			if !slices.Contains(g.files, r.RelPath) {
				g.files = append(g.files, r.RelPath)
			}
		}
		if len(kept) == 0 {
			continue
		}
		g.recs = kept
		for _, f := range g.files {
			if mine {
				b, err := os.ReadFile(filepath.Join(h.Repo.Root, filepath.FromSlash(f)))
				switch {
				case err == nil:
					tip[f] = sync.Version{Present: true, Mode: cmp.Or(tip[f].Mode, 0o100644), Content: b}
				case errors.Is(err, os.ErrNotExist):
					tip[f] = sync.Absent
				}
			}
			g.in[f] = tip[f]
		}
		out = append(out, g)
	}
	return out, nil
}

// onto is record r's change (before to after) applied to cur: its blocks
// of lines placed where its unchanged lines are (sync.Onto); a binary
// file or a symlink, which has no lines, whole, where cur is before.
func onto(r *prsm.Record, before, after []byte, cur sync.Version) ([]byte, bool) {
	if r.Binary || isLink(r.ModeBefore) || isLink(r.ModeAfter) {
		return after, cur.Present == (r.OldHash != "") && bytes.Equal(cur.Content, before)
	}
	return sync.Onto(before, after, cur.Content)
}

func isLink(mode uint32) bool { return mode&0o170000 == 0o120000 }

// gitMode is the git file mode of a record's after side: executable or
// not; old when the record does not say.
func gitMode(after, old uint32) uint32 {
	switch {
	case after == 0 && old != 0:
		return old
	case isLink(after):
		return 0o120000
	case after&0o111 != 0:
		return 0o100755
	}
	return 0o100644
}

func ids(recs []*prsm.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

// prompts are session id's turn prompts (none on an error: a commit
// message without the prompt is still a message).
func (h *History) prompts(ctx context.Context, id string) map[int]string {
	p, _ := store.TurnPrompts(ctx, h.DB.Q(), id)
	return p
}

func leftOutSummary(rep *api.CommitReport) string {
	if len(rep.LeftOut) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d changes left out: %s)", len(rep.LeftOut), rep.LeftOut[0].Reason)
}

func leftOutHint(rep *api.CommitReport) string {
	for _, l := range rep.LeftOut {
		if l.Reason == "pending review" {
			return "accept the changes first (prsm changes accept ID)"
		}
	}
	return "accept an agent's changes, then commit them"
}
