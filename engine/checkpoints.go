package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	stdsync "sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/worktree"
)

// MaxNamedCheckpoints is how many manual checkpoints a session may hold.
const MaxNamedCheckpoints = 50

// MaxAnnotation bounds checkpoint annotations.
const MaxAnnotation = 4 << 10

// headRef is the ref that keeps a session's checkpoint chain alive: every
// checkpoint commit has the one before it as parent, so one ref keeps them
// all from git gc.
// checkpointer makes, lists, names and diffs a session's checkpoints
// (checkpoints.go), builds the lazy ones (lazyckpt.go), reads their files
// as git's checkout wrote them (checkout.go) and writes their objects to
// the repository in the background (flush.go). writeMu serializes those
// writes; the flusher's timer and the engine's closing are guarded by the
// engine's flushMu.
type checkpointer struct {
	*Engine
	writeMu stdsync.Mutex
}

func headRef(sessionID string) string { return "refs/prsm/" + sessionID + "/head" }

func checkpointRef(sessionID, id string) string { return "refs/prsm/" + sessionID + "/" + id }

func checkText(field, s string, max int) error {
	if len(s) > max {
		return prsm.Errorf(prsm.ErrInvalid, "invalid_"+field, fmt.Sprintf("keep it under %d bytes", max), "%s is %d bytes long", field, len(s))
	}
	if !utf8.ValidString(s) {
		return prsm.Errorf(prsm.ErrInvalid, "invalid_"+field, "", "%s is not valid UTF-8", field)
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return prsm.Errorf(prsm.ErrInvalid, "invalid_"+field, "use printable characters", "%s contains a control character", field)
		}
	}
	return nil
}

// short cuts s to n runes on one line, for generated descriptions.
func short(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// CreateCheckpoint is Engine.CreateCheckpoint's work.
func (ck *checkpointer) CreateCheckpoint(ctx context.Context, sessionID string, req api.CheckpointRequest) (*prsm.Checkpoint, error) {
	req.Name = strings.TrimSpace(req.Name)
	if req.Name == "" {
		return nil, prsm.Errorf(prsm.ErrInvalid, "invalid_name", "give the checkpoint a --name", "a named checkpoint needs a name")
	}
	if err := checkLabel("name", req.Name); err != nil {
		return nil, err
	}
	if err := checkText("annotation", req.Annotation, MaxAnnotation); err != nil {
		return nil, err
	}
	s, st, unlock, err := ck.sessions.lockActive(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	n, err := store.CountCheckpoints(ctx, ck.DB.Q(), s.ID, prsm.CheckpointManual)
	if err != nil {
		return nil, err
	}
	if n >= MaxNamedCheckpoints {
		return nil, prsm.Errorf(prsm.ErrConflict, "too_many_checkpoints", "delete a named checkpoint first",
			"session %s already has %d named checkpoints (the limit)", s.ID, MaxNamedCheckpoints)
	}
	msg := 0
	if last, err := store.ListToolCalls(ctx, ck.DB.Q(), s.ID); err == nil && len(last) > 0 {
		msg = last[len(last)-1].MessageIndex
	}
	return ck.checkpoint(ctx, s, st, prsm.CheckpointManual, req.Name, req.Annotation, msg, "")
}

// autoCheckpointsOn reports whether session s takes automatic
// checkpoints. The session's setting is fixed at its start, so it is read
// once (a query per tool call otherwise); the caller holds the session's
// lock.
func (ck *checkpointer) autoCheckpointsOn(ctx context.Context, s *prsm.Session, st *sessionState) (bool, error) {
	if ck.NoAutoCheckpoints {
		return false, nil
	}
	if st.autoCkpt == nil {
		on, err := store.AutoCheckpoints(ctx, ck.DB.Q(), s.ID)
		if err != nil {
			return false, err
		}
		st.autoCkpt = &on
	}
	return *st.autoCkpt, nil
}

// stateTree builds, in a new batch, the tree of what the tracker knows the
// worktree holds. It starts from the last checkpoint's tree and adds only
// the paths touched since, so its cost follows what changed. Nothing is
// written: the caller stages or writes the batch's objects.
func (ck *checkpointer) stateTree(ctx context.Context, s *prsm.Session, st *sessionState) (*treeState, error) {
	if err := ck.materialize(ctx, st); err != nil {
		return nil, err
	}
	objs, err := ck.Repo.Objects()
	if err != nil {
		return nil, err
	}
	base := st.ckptTree
	all := base == ""
	if all {
		// First checkpoint since start or restart: from the base commit,
		// with every path known to differ.
		if base, err = objs.CommitTreeID(s.BaseCommit); err != nil {
			return nil, err
		}
	}
	changes, err := ck.knownChanges(ctx, st, all)
	if err != nil {
		return nil, err
	}
	ts := &treeState{b: objs.NewBatch(), touched: len(changes)}
	if ts.tree, err = ts.b.BuildTree(base, changes); err != nil {
		return nil, err
	}
	return ts, nil
}

// knownChanges returns, sorted by path, the tree changes that take the
// last checkpoint's tree to what the tracker knows the worktree holds: of
// the paths touched since that checkpoint, or of every path known to
// differ (all) when they go onto the base commit's tree.
func (ck *checkpointer) knownChanges(ctx context.Context, st *sessionState, all bool) ([]worktree.TreeChange, error) {
	t := st.tracker
	paths := t.Touched
	if all {
		paths = map[string]bool{}
		for rel := range t.Known {
			paths[rel] = true
		}
	}
	rels := make([]string, 0, len(paths))
	for rel := range paths {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	changes := make([]worktree.TreeChange, 0, len(rels))
	for _, rel := range rels {
		v, err := t.KnownVersion(rel, ck.capture.blobs(ctx))
		if err != nil {
			return nil, err
		}
		c := worktree.TreeChange{Path: rel}
		if v.Present {
			c.File = &worktree.File{Mode: v.Mode, Content: v.Content}
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// checkpointMessage is the message of checkpoint id's commit.
func checkpointMessage(id, name string) string {
	return fmt.Sprintf("prsm checkpoint %s: %s", id, name)
}

// treeState is a tree of the session's state built in a batch.
type treeState struct {
	b       *worktree.Batch
	tree    string
	touched int
	done    func() // ends the staging of nowTree
}

// nowTree is the tree of what the tracker knows the worktree holds, staged
// for reading (a rewind plan or a diff compares against it) and never
// written unless it becomes a checkpoint; call done when the reads are over.
func (ck *checkpointer) nowTree(ctx context.Context, s *prsm.Session, st *sessionState) (*treeState, error) {
	objs, err := ck.Repo.Objects()
	if err != nil {
		return nil, err
	}
	ts, err := ck.stateTree(ctx, s, st)
	if err != nil {
		return nil, err
	}
	objs.Stage(ts.b.Objects())
	ts.done = func() { objs.Unstage(ts.b.Objects()) }
	return ts, nil
}

// checkpoint records the worktree state as a git tree and commit. Their
// ids are computed in memory, and their objects are committed to the
// store with the checkpoint, in one transaction: the caller (an agent's
// tool call waiting to run) is answered at once. A flusher then writes the
// objects into the repository's object store and points
// refs/prsm/<session>/head (and a named checkpoint's own ref) at the
// commit; until then every read of prsm sees them staged, and after a
// crash the next start writes them (FlushObjects). A checkpoint whose tree
// equals the one before shares its commit: no object at all.
func (ck *checkpointer) checkpoint(ctx context.Context, s *prsm.Session, st *sessionState, kind, name, annotation string, msgIndex int, toolCallID string) (*prsm.Checkpoint, error) {
	ts, err := ck.stateTree(ctx, s, st)
	if err != nil {
		return nil, fmt.Errorf("checkpoint tree: %w", err)
	}
	return ck.saveCheckpoint(ctx, s, st, ts, kind, name, annotation, msgIndex, toolCallID)
}

// saveCheckpoint stores the checkpoint of a state tree built already (the
// tracker's state must not have changed since).
func (ck *checkpointer) saveCheckpoint(ctx context.Context, s *prsm.Session, st *sessionState, ts *treeState, kind, name, annotation string, msgIndex int, toolCallID string) (*prsm.Checkpoint, error) {
	nc, err := ck.prepareCheckpoint(ctx, s, st, ts, kind, name, annotation, msgIndex, toolCallID)
	if err != nil {
		return nil, err
	}
	if err := ck.DB.Tx(ctx, func(q store.Querier) error { return nc.store(ctx, q) }); err != nil {
		nc.drop()
		return nil, err
	}
	ck.checkpointStored(st, nc)
	return nc.c, nil
}

// newCheckpoint is a checkpoint whose ids are known and whose objects are
// staged, to be stored (store, in a transaction), then announced
// (checkpointStored), or dropped.
type newCheckpoint struct {
	c       *prsm.Checkpoint
	objs    *worktree.Objects
	refs    []string
	pending []worktree.Object
}

// prepareCheckpoint computes the checkpoint of a state tree built already
// and stages its objects.
func (ck *checkpointer) prepareCheckpoint(ctx context.Context, s *prsm.Session, st *sessionState, ts *treeState, kind, name, annotation string, msgIndex int, toolCallID string) (*newCheckpoint, error) {
	objs, err := ck.Repo.Objects()
	if err != nil {
		return nil, err
	}
	b, tree, touched := ts.b, ts.tree, ts.touched
	if st.ckptCommit == "" {
		// After a restart the chain continues from the newest checkpoint.
		if last, err := ck.lastCheckpoint(ctx, s.ID); err == nil && last != nil {
			st.ckptCommit = last.Commit
			if st.ckptTree == "" && last.Tree == tree {
				st.ckptTree = tree
			}
		}
	}
	now := time.Now().UTC()
	id := newID()
	var commit string
	var refs []string
	if tree == st.ckptTree && st.ckptCommit != "" {
		commit = st.ckptCommit // nothing changed since: the same commit
		b = objs.NewBatch()
	} else {
		parent := st.ckptCommit
		if parent == "" {
			parent = s.BaseCommit
		}
		if commit, err = b.Commit(tree, parent, checkpointMessage(id, name), now); err != nil {
			return nil, err
		}
		refs = append(refs, headRef(s.ID))
	}
	if kind == prsm.CheckpointManual {
		refs = append(refs, checkpointRef(s.ID, id))
	}
	nc := &newCheckpoint{objs: objs, refs: refs, pending: b.Objects(),
		c: &prsm.Checkpoint{ID: id, SessionID: s.ID, Kind: kind, Name: name, Annotation: annotation,
			MessageIndex: msgIndex, ToolCallID: toolCallID, Tree: tree, Commit: commit, CreatedAt: now,
			FilesChanged: touched}}
	objs.Stage(nc.pending) // before the commit: the flusher may see the row at once
	return nc, nil
}

// stampRecordSeq sets c's record_seq to the newest record in q, of any
// session: the session's records after c are those with a greater seq;
// and its decision_seq to the newest entry of the review history.
func stampRecordSeq(ctx context.Context, q store.Querier, c *prsm.Checkpoint) error {
	seq, err := store.LastRecordSeq(ctx, q)
	if err != nil {
		return err
	}
	c.RecordSeq = seq
	c.DecisionSeq, err = store.LastDecisionSeq(ctx, q)
	return err
}

// store writes the checkpoint, and its objects for the flusher, in the
// transaction q (stampRecordSeq first).
func (nc *newCheckpoint) store(ctx context.Context, q store.Querier) error {
	if err := stampRecordSeq(ctx, q, nc.c); err != nil {
		return err
	}
	if err := store.InsertCheckpoint(ctx, q, nc.c); err != nil {
		return err
	}
	if len(nc.refs) == 0 {
		return nil
	}
	return store.AddPending(ctx, q, &store.Pending{SessionID: nc.c.SessionID, Commit: nc.c.Commit, Refs: nc.refs, Objects: storeObjects(nc.pending)})
}

// drop forgets a checkpoint that was not stored.
func (nc *newCheckpoint) drop() { nc.objs.Unstage(nc.pending) }

// checkpointStored makes a stored checkpoint the start of the next one,
// has its objects written, and announces it.
func (ck *checkpointer) checkpointStored(st *sessionState, nc *newCheckpoint) {
	st.ckptMu.Lock()
	st.ckptTree, st.ckptCommit = nc.c.Tree, nc.c.Commit
	st.ckptMu.Unlock()
	st.lastTurn = nil // Turn sets it again for its own
	st.tracker.Touched = map[string]bool{}
	crashPoint("checkpoint:stored")
	if len(nc.refs) > 0 {
		ck.kickFlush()
	}
	ev := *nc.c
	ck.Events.Publish(api.EventCheckpoint, &ev)
}

func (ck *checkpointer) lastCheckpoint(ctx context.Context, sessionID string) (*prsm.Checkpoint, error) {
	list, err := store.ListCheckpoints(ctx, ck.DB.Q(), sessionID)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	return list[len(list)-1], nil
}

// Checkpoints is Engine.Checkpoints's work.
func (ck *checkpointer) Checkpoints(ctx context.Context, sessionID, grep string) ([]*prsm.Checkpoint, error) {
	s, err := ck.sessions.Session(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if err := ck.materializeSession(ctx, s); err != nil {
		return nil, err
	}
	list, err := store.ListCheckpoints(ctx, ck.DB.Q(), s.ID)
	if err != nil {
		return nil, err
	}
	out := []*prsm.Checkpoint{}
	g := strings.ToLower(grep)
	for _, c := range list {
		if g == "" || strings.Contains(strings.ToLower(c.Name), g) || strings.Contains(strings.ToLower(c.Annotation), g) {
			out = append(out, c)
		}
	}
	return out, nil
}

// Checkpoint is Engine.Checkpoint's work.
func (ck *checkpointer) Checkpoint(ctx context.Context, sessionID, id string) (*prsm.Session, *prsm.Checkpoint, error) {
	s, err := ck.sessions.Session(ctx, sessionID)
	if err != nil {
		return nil, nil, err
	}
	if err := ck.materializeSession(ctx, s); err != nil {
		return nil, nil, err
	}
	c, err := store.ResolveCheckpoint(ctx, ck.DB.Q(), s.ID, id)
	if errors.Is(err, prsm.ErrNotFound) {
		c, err = ck.checkpointNamed(ctx, s, id, err)
	}
	if err != nil {
		var amb *store.AmbiguousError
		switch {
		case errors.As(err, &amb):
			return nil, nil, prsm.Errorf(prsm.ErrAmbiguous, "ambiguous_id", "give more characters of the id",
				"checkpoint id prefix %q matches %s", id, strings.Join(amb.Matches, ", "))
		case errors.Is(err, prsm.ErrNotFound), errors.Is(err, prsm.ErrInvalid):
			return nil, nil, prsm.Errorf(prsm.ErrNotFound, "checkpoint_not_found", "list them with `prsm checkpoint list`",
				"no checkpoint %q in session %s", id, s.ID)
		}
		return nil, nil, err
	}
	return s, c, nil
}

// checkpointNamed returns the one checkpoint of s named name; notFound
// when none is, and an ambiguity error naming their ids when several are.
func (ck *checkpointer) checkpointNamed(ctx context.Context, s *prsm.Session, name string, notFound error) (*prsm.Checkpoint, error) {
	list, err := store.ListCheckpoints(ctx, ck.DB.Q(), s.ID)
	if err != nil {
		return nil, err
	}
	var named []*prsm.Checkpoint
	for _, c := range list {
		if c.Name == name {
			named = append(named, c)
		}
	}
	switch len(named) {
	case 0:
		return nil, notFound
	case 1:
		return named[0], nil
	}
	ids := make([]string, len(named))
	for i, c := range named {
		ids[i] = c.ID
	}
	return nil, prsm.Errorf(prsm.ErrAmbiguous, "ambiguous_name", "give the checkpoint's id",
		"%d checkpoints of session %s are named %q: %s", len(named), s.ID, name, strings.Join(ids, ", "))
}

// Annotate is Engine.Annotate's work.
func (ck *checkpointer) Annotate(ctx context.Context, sessionID, id, annotation string) (*prsm.Checkpoint, error) {
	if err := checkText("annotation", annotation, MaxAnnotation); err != nil {
		return nil, err
	}
	s, c, err := ck.Checkpoint(ctx, sessionID, id)
	if err != nil {
		return nil, err
	}
	if err := store.UpdateCheckpointAnnotation(ctx, ck.DB.Q(), s.ID, c.ID, annotation); err != nil {
		return nil, err
	}
	c.Annotation = annotation
	return c, nil
}

// DeleteCheckpoint is Engine.DeleteCheckpoint's work.
func (ck *checkpointer) DeleteCheckpoint(ctx context.Context, sessionID, id string) (*prsm.Checkpoint, error) {
	s, c, err := ck.Checkpoint(ctx, sessionID, id)
	if err != nil {
		return nil, err
	}
	// Its ref may still be pending: written first, so the flusher does
	// not bring it back after it is deleted.
	if err := ck.FlushObjects(ctx); err != nil {
		return nil, err
	}
	if err := store.DeleteCheckpoint(ctx, ck.DB.Q(), s.ID, c.ID); err != nil {
		return nil, err
	}
	if objs, err := ck.Repo.Objects(); err == nil && c.Kind == prsm.CheckpointManual {
		objs.DeleteRef(checkpointRef(s.ID, c.ID))
	}
	return c, nil
}

// DiffCheckpoints is Engine.DiffCheckpoints's work.
func (ck *checkpointer) DiffCheckpoints(ctx context.Context, sessionID, a, b string) (*api.CheckpointDiff, error) {
	s, ca, err := ck.Checkpoint(ctx, sessionID, a)
	if err != nil {
		return nil, err
	}
	out := &api.CheckpointDiff{From: ca.ID, To: "current"}
	var toTree string
	toSeq := int64(allRecords)
	if b != "" {
		_, cb, err := ck.Checkpoint(ctx, sessionID, b)
		if err != nil {
			return nil, err
		}
		toTree, out.To, toSeq = cb.Tree, cb.ID, cb.RecordSeq
	} else {
		if err := requireActive(s); err != nil {
			return nil, err
		}
		s2, st, unlock, err := ck.sessions.lockSession(ctx, s.ID)
		if err != nil {
			return nil, err
		}
		now, err := ck.nowTree(ctx, s2, st)
		unlock()
		if err != nil {
			return nil, err
		}
		defer now.done()
		toTree = now.tree
	}
	objs, err := ck.Repo.Objects()
	if err != nil {
		return nil, err
	}
	diffs, err := objs.DiffTrees(ca.Tree, toTree)
	if err != nil {
		return nil, err
	}
	// The files as the worktree had them (.gitattributes line ends), while
	// the session has its worktree to convert them in.
	version := func(path string, f *worktree.File, seq int64) (sync.Version, error) { return fileVersion(f), nil }
	if s.Status == prsm.SessionActive {
		st, err := ck.sessions.state(ctx, s)
		if err != nil {
			return nil, err
		}
		version = func(path string, f *worktree.File, seq int64) (sync.Version, error) {
			v, _, err := ck.asCheckout(ctx, st, path, f, ck.unchangedBy(ctx, s, seq))
			return v, err
		}
	}
	out.Files = []api.FileDiff{}
	var patch strings.Builder
	for _, d := range diffs {
		before, err := version(d.Path, d.From, ca.RecordSeq)
		if err != nil {
			return nil, err
		}
		after, err := version(d.Path, d.To, toSeq)
		if err != nil {
			return nil, err
		}
		if d.From != nil && d.To != nil && before.Mode == after.Mode && bytes.Equal(before.Content, after.Content) {
			continue // the same bytes, stored by git and by prsm
		}
		fd := api.FileDiff{Path: d.Path, Status: "modified"}
		switch {
		case d.From == nil:
			fd.Status = "added"
		case d.To == nil:
			fd.Status = "deleted"
		}
		fd.Binary = isBinaryVersion(before) || isBinaryVersion(after)
		r := &prsm.Record{RelPath: d.Path, Binary: fd.Binary, ModeBefore: before.Mode, ModeAfter: after.Mode}
		if !fd.Binary {
			added, removed := lineRanges(before, after)
			for _, x := range added {
				fd.Added += x.EndLine - x.StartLine + 1
			}
			for _, x := range removed {
				fd.Remove += x.EndLine - x.StartLine + 1
			}
		}
		patch.WriteString(diffOne(r, before, after, maxDiffText-patch.Len()))
		out.Files = append(out.Files, fd)
	}
	out.Patch = patch.String()
	return out, nil
}

func fileVersion(f *worktree.File) sync.Version {
	if f == nil {
		return sync.Absent
	}
	return sync.Version{Present: true, Mode: f.Mode, Content: f.Content}
}
