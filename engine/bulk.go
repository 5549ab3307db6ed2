package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/engine/workspace"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
)

// A reject of many records (a bulk reject, a discard, the reject of a
// tool call that wrote 200k files) costs about what git's own clean of
// the same files does: it is planned from the records' paths alone
// (store.RecordRef), written down as one intent, and worked a chunk of
// records at a time: one read of their records, one of their contents,
// one transaction for their states, and the created files among them
// (most of such a bulk) taken out of each directory through one open of
// it, renamed into a bin that is emptied after the answer (trashCan),
// synced once (sync.RemoveAll).

// bulkChunk is how many records a chunk holds: each chunk costs a
// transaction and a sync of the file system per side, so that at 1000 a
// reject of 50k created files took 20.5 s, at 5000 12.4 s. (A var: tests
// of several chunks set it lower, SetBulkChunk.)
var bulkChunk = 5000

const (
	// chunkBytes bounds the contents a chunk reads at once: a chunk of
	// large files is worked in smaller parts.
	chunkBytes = 64 << 20
	// answerLimit bounds the records an answer lists; the job counts
	// them all.
	answerLimit = 1000
	// eventLimit: an operation on at most this many records announces
	// each record's new status (file_change_status); a larger one
	// announces its progress (job_progress) and then the session.
	eventLimit = 500
)

// intentReject writes down a reject of many records (bulkPayload),
// one intent for them all; intentAcceptAll an accept of all pending
// records (of a session, or of one file), the same way.
const (
	intentReject    = "reject"
	intentAcceptAll = "accept-all"
)

// bulkPayload is an intentReject or intentAcceptAll: the records to
// decide, in order; End says it is a discard's reject, which ends the
// session once they are out.
type bulkPayload struct {
	Seqs []int64 `json:"seqs"`
	End  bool    `json:"end,omitempty"`
}

// bulker decides many records at once: a session's pending records, or
// every session's (bulkstart.go), planned from their paths, written down
// as one intent and worked a chunk at a time as a job (jobRunner).
type bulker struct{ *Engine }

// errStopping stops a job between two chunks when the server stops: its
// intent stays, and the next start finishes it.
var errStopping = errors.New("the server is stopping; the next start finishes the rest")

func refOf(r *prsm.Record) store.RecordRef {
	return store.RecordRef{Seq: r.Seq, ID: r.ID, RelPath: r.RelPath, ChangeType: r.ChangeType}
}

// rejectPlan is what rejecting roots takes out, in order: each root with
// the later pending records of its file (the cascade), newest first, in
// path order where paths nest (removalsFirst). pend holds the pending
// records of the roots' files, at least.
func rejectPlan(pend, roots []store.RecordRef) []store.RecordRef {
	byPath := map[string][]store.RecordRef{}
	for _, p := range pend {
		byPath[p.RelPath] = append(byPath[p.RelPath], p)
	}
	targets := map[int64]store.RecordRef{}
	for _, r := range roots {
		targets[r.Seq] = r
		for _, l := range byPath[r.RelPath] {
			if l.Seq > r.Seq {
				targets[l.Seq] = l
			}
		}
	}
	order := make([]store.RecordRef, 0, len(targets))
	for _, r := range targets {
		order = append(order, r)
	}
	sort.Slice(order, func(i, j int) bool { return order[i].Seq > order[j].Seq })
	// Undoing a create removes its path.
	return workspace.PathOrdered(order, func(r store.RecordRef) string { return r.RelPath },
		func(r store.RecordRef) bool { return r.ChangeType == prsm.ChangeCreate })
}

// pendingOf is the pending records of the files of roots: read file by
// file when they are few, else all of the session's at once.
func (bk *bulker) pendingOf(ctx context.Context, sessionID string, roots []store.RecordRef) ([]store.RecordRef, error) {
	files := map[string]bool{}
	for _, r := range roots {
		files[r.RelPath] = true
	}
	if len(files) > 64 {
		return store.PendingRefs(ctx, bk.DB.Q(), sessionID, "")
	}
	var pend []store.RecordRef
	for rel := range files {
		refs, err := store.PendingRefs(ctx, bk.DB.Q(), sessionID, rel)
		if err != nil {
			return nil, err
		}
		pend = append(pend, refs...)
	}
	return pend, nil
}

// intendBulk writes down a bulk decision of kind on the records seqs, in
// that order (a discard's reject when end).
func (bk *bulker) intendBulk(ctx context.Context, sessionID, kind string, seqs []int64, end bool) (int64, error) {
	b, err := json.Marshal(bulkPayload{Seqs: seqs, End: end})
	if err != nil {
		return 0, err
	}
	return store.AddIntent(ctx, bk.DB.Q(), sessionID, kind, b)
}

// rejectRun is a planned reject, written down: run runs it.
type rejectRun struct {
	s      *prsm.Session
	st     *sessionState
	seqs   []int64
	intent int64 // 0: none (nothing to do)
	// end: a discard's, whose intent the session's end lets go.
	end bool
}

// planReject plans the reject of order for session s and writes it down:
// nothing is changed before (checkParents refuses a reject that cannot
// be done). end marks a discard's.
func (bk *bulker) planReject(ctx context.Context, s *prsm.Session, st *sessionState, order []store.RecordRef, end bool) (*rejectRun, error) {
	run := &rejectRun{s: s, st: st, seqs: make([]int64, len(order)), end: end}
	for i, r := range order {
		run.seqs[i] = r.Seq
	}
	if len(order) == 0 {
		return run, nil
	}
	if err := bk.review.checkParents(ctx, s, order); err != nil {
		return nil, err
	}
	var err error
	if run.intent, err = bk.intendBulk(ctx, s.ID, intentReject, run.seqs, end); err != nil {
		return nil, err
	}
	return run, nil
}

// runReject reverts the planned records, a chunk at a time (inChunks),
// and lets the intent go once all are out (a discard's end does). It
// runs to its end whatever becomes of ctx; a failure, or the server
// stopping, leaves the intent for the next start (or the same reject
// again) to finish.
func (bk *bulker) runReject(ctx context.Context, run *rejectRun, j *job) ([]*prsm.Record, error) {
	intent := run.intent
	if run.end {
		intent = 0
	}
	return bk.inChunks(ctx, run.s.ID, run.seqs, intent, "reject:chunk", func(ctx context.Context, seqs []int64, events bool, prev func() error) (commitFn, error) {
		return bk.revertChunk(ctx, run.s, run.st, seqs, events, j, prev)
	})
}

// A commitFn stores what a chunk's file work did (its records' states),
// and returns the records it decided.
type commitFn func() ([]*prsm.Record, error)

// A chunkFn does the file work of the chunk seqs (events: announce each
// record's status) and returns the commit that stores it. It calls prev,
// which waits for the previous chunk's commit, before any of its own work
// that must come after that commit (a store of its own, a file whose
// state the commit holds).
type chunkFn func(ctx context.Context, seqs []int64, events bool, prev func() error) (commitFn, error)

// inChunks decides the records seqs of session sessionID, bulkChunk at a
// time (fn), then lets intent go (0: none) and announces the session.
// Each chunk's commit runs beside the next chunk's file work: the one is
// the store's work (CPU), the other mostly the disk's. Commits run one at
// a time, in order. It returns the records the commits decided, oldest
// first, when there are at most answerLimit (nil past it). It runs to its
// end whatever becomes of ctx; a failure, or the server stopping (between
// two chunks), returns before the intent goes.
func (bk *bulker) inChunks(ctx context.Context, sessionID string, seqs []int64, intent int64, point string, fn chunkFn) ([]*prsm.Record, error) {
	ctx = context.WithoutCancel(ctx)
	defer bk.trash.pause()()
	keep := len(seqs) <= answerLimit
	events := len(seqs) <= eventLimit
	var out []*prsm.Record
	// running is closed when the commit of the chunk before is done,
	// with its records (done) and error (cerr).
	var running chan struct{}
	var done []*prsm.Record
	var cerr error
	defer func() {
		// A panic in fn (a crash point's, in tests) leaves no commit
		// running behind it.
		if running != nil {
			<-running
		}
	}()
	prev := func() error {
		if running == nil {
			return nil
		}
		<-running
		running = nil
		if keep {
			out = append(out, done...)
		}
		if cerr != nil {
			return cerr
		}
		crashPoint(point)
		return nil
	}
	for lo := 0; lo < len(seqs); lo += bulkChunk {
		if lo > 0 && bk.closing() {
			if err := prev(); err != nil {
				return nil, err
			}
			return nil, errStopping
		}
		commit, err := fn(ctx, seqs[lo:min(lo+bulkChunk, len(seqs))], events, prev)
		if perr := prev(); perr != nil {
			return nil, perr
		}
		if err != nil {
			return nil, err
		}
		running = make(chan struct{})
		go func(finished chan struct{}) {
			defer close(finished)
			done, cerr = commit()
		}(running)
	}
	if err := prev(); err != nil {
		return nil, err
	}
	if intent != 0 {
		if err := store.DoneIntent(ctx, bk.DB.Q(), intent); err != nil {
			return nil, err
		}
	}
	if len(seqs) > 0 {
		bk.publishSession(ctx, sessionID)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, nil
}

// revertStep is one record of a chunk: the delta from -> to (its change
// read backwards) to take out, and how it went.
type revertStep struct {
	r        *prsm.Record
	from, to sync.Version
	fast     bool   // through sync.RemoveAll
	state    string // its sync state once rejected
	done     bool   // out of both sides: its state is stored
	stored   bool   // a one-at-a-time step's state, stored as it went
	wtLearnt bool   // the worktree side went: its file state is stored
	learned  sync.Version
	err      error
}

// revertChunk reverts the records seqs (those not rejected yet), in
// order, and stores their states in one transaction. It returns the
// records it rejected. A step that fails stops the steps after it on the
// same path; those and it stay pending, and the error is returned once
// the others are stored.
func (bk *bulker) revertChunk(ctx context.Context, s *prsm.Session, st *sessionState, seqs []int64, events bool, j *job, prev func() error) (commitFn, error) {
	all, err := store.RecordsBySeq(ctx, bk.DB.Q(), s.ID, seqs)
	if err != nil {
		return nil, err
	}
	var recs []*prsm.Record
	for _, r := range all {
		if r.Status != prsm.StatusRejected { // rejected: done before a crash
			recs = append(recs, r)
		}
	}
	bk.jobs.progress(j, len(all)-len(recs), 0)
	var out []*prsm.Record
	for lo := 0; lo < len(recs); {
		hi, bytes := lo+1, recs[lo].SizeBefore+recs[lo].SizeAfter
		for hi < len(recs) && bytes+recs[hi].SizeBefore+recs[hi].SizeAfter <= chunkBytes {
			bytes += recs[hi].SizeBefore + recs[hi].SizeAfter
			hi++
		}
		commit, err := bk.revertPart(ctx, s, st, recs[lo:hi], events, j, prev)
		if err != nil {
			return nil, err
		}
		if hi == len(recs) { // the last part's commit is the chunk's
			return func() ([]*prsm.Record, error) {
				done, err := commit()
				return append(out, done...), err
			}, nil
		}
		if err := prev(); err != nil {
			return nil, err
		}
		done, err := commit()
		out = append(out, done...)
		if err != nil {
			return nil, err
		}
		lo = hi
	}
	return func() ([]*prsm.Record, error) { return out, nil }, nil
}

// revertPart is revertChunk's work on records whose contents fit in
// memory at once: it takes them out and returns the commit that stores
// their states.
func (bk *bulker) revertPart(ctx context.Context, s *prsm.Session, st *sessionState, recs []*prsm.Record, events bool, j *job, prev func() error) (commitFn, error) {
	var hashes []string
	seen := map[string]bool{}
	for _, r := range recs {
		for _, h := range []string{r.OldHash, r.NewHash} {
			if h != "" && !seen[h] {
				seen[h] = true
				hashes = append(hashes, h)
			}
		}
	}
	contents, err := store.GetBlobs(ctx, bk.DB.Q(), hashes)
	if err != nil {
		return nil, err
	}
	blobs := func(hash string) ([]byte, error) {
		if b, ok := contents[hash]; ok {
			return b, nil
		}
		return bk.capture.blobs(ctx)(hash)
	}
	steps := make([]revertStep, len(recs))
	for i, r := range recs {
		before, after, err := versionsFrom(r, blobs)
		if err != nil {
			return nil, err
		}
		steps[i] = revertStep{r: r, from: after, to: before, state: prsm.SyncSynced}
	}
	markFast(steps)
	// One at a time, in order, each file synced, as a single reject
	// does; the first failure stops the rest of them (they may share
	// its path). Each stores its own state, and may undo a file whose
	// state the commit before stores: that commit goes first.
	if slices.ContainsFunc(steps, func(p revertStep) bool { return !p.fast }) {
		if err := prev(); err != nil {
			return nil, err
		}
	}
	for i := range steps {
		p := &steps[i]
		if p.fast {
			continue
		}
		state, err := bk.review.revertDelta(ctx, s, st, p.r, p.from, p.to)
		if err != nil {
			p.err = err
			break
		}
		p.state, p.done = rejectedState(p.r, state), true
		// Stored before the next step: a cascade's steps share a path,
		// and a crash between two of them must find the first one
		// rejected. Run again, it would take its delta out of a file
		// the next step changed already (a conflict, where there was
		// none). Created files (RemoveAll) are one to a path.
		if err := bk.DB.Tx(ctx, func(q store.Querier) error {
			return store.SetRecordStates(ctx, q, s.ID, []store.StateChange{{ID: p.r.ID, Status: prsm.StatusRejected, SyncState: p.state, Rejected: true}}, time.Now().UTC())
		}); err != nil {
			p.err, p.done = err, false
			break
		}
		p.stored = true
		crashPoint("reject:reverted")
	}
	bk.removeCreated(ctx, s, st, steps, blobs)
	return func() ([]*prsm.Record, error) { return bk.storeReverted(ctx, s, steps, events, j) }, nil
}

// storeReverted stores the states of a part's steps, and the file states
// the fast steps learned, in one transaction, and returns the records it
// rejected.
func (bk *bulker) storeReverted(ctx context.Context, s *prsm.Session, steps []revertStep, events bool, j *job) ([]*prsm.Record, error) {
	var changes []store.StateChange
	var errs []error
	conflicts := 0
	for _, p := range steps {
		if p.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.r.RelPath, p.err))
		}
		if p.done && !p.stored {
			changes = append(changes, store.StateChange{ID: p.r.ID, Status: prsm.StatusRejected, SyncState: p.state, Rejected: true})
		}
		if p.done {
			if p.state == prsm.SyncConflict {
				conflicts++
			}
		}
	}
	now := time.Now().UTC()
	err := bk.DB.Tx(ctx, func(q store.Querier) error {
		for _, p := range steps {
			if p.wtLearnt {
				if err := store.PutFileState(ctx, q, s.ID, p.r.RelPath, trackerState(p.learned)); err != nil {
					return err
				}
			}
		}
		return store.SetRecordStates(ctx, q, s.ID, changes, now)
	})
	if err != nil {
		return nil, err
	}
	var out []*prsm.Record
	for _, p := range steps {
		if !p.done {
			continue
		}
		r := p.r
		r.Status, r.SyncState = prsm.StatusRejected, p.state
		if r.RejectedAt.IsZero() {
			r.RejectedAt = now
		}
		if events {
			bk.review.publishStatus(r)
		}
		out = append(out, r)
	}
	bk.jobs.progress(j, len(out), conflicts)
	if len(errs) > 0 {
		return out, fmt.Errorf("reject: %d of %d changes not taken out: %w", len(errs), len(steps), errors.Join(errs...))
	}
	return out, nil
}

// markFast marks the steps that can go through sync.RemoveAll: undoing
// a create, the only step on its path, where no paths nest. The others
// go one at a time, in order; the two sets touch different paths, so
// either may go first.
func markFast(steps []revertStep) {
	n := map[string]int{}
	for _, p := range steps {
		n[p.r.RelPath]++
	}
	if workspace.PathOrder(len(steps), func(i int) string { return steps[i].r.RelPath }, func(int) bool { return false }) != nil {
		return // paths nest: one at a time, in order
	}
	for i := range steps {
		p := &steps[i]
		p.fast = !p.to.Present && p.from.Present && n[p.r.RelPath] == 1
	}
}

// removeCreated takes the fast steps' created files out of the worktree
// (an active session's) and, where they reached it, the workspace, as
// revertDelta would one by one: a file goes only if it still holds what
// the agent wrote, and what prsm knew of it loses the file.
func (bk *bulker) removeCreated(ctx context.Context, s *prsm.Session, st *sessionState, steps []revertStep, blobs func(string) ([]byte, error)) {
	var idx []int
	for i := range steps {
		if steps[i].fast {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return
	}
	// The files go into one bin, emptied after (trashCan).
	bin := bk.trash.bin()
	defer bk.trash.throw(bin)
	conflicts := 0
	if s.Status == prsm.SessionActive {
		known := make([]sync.Version, len(idx))
		items := make([]sync.Removal, 0, len(idx))
		for k, i := range idx {
			p := &steps[i]
			v, err := st.tracker.KnownVersion(p.r.RelPath, blobs)
			if err != nil {
				p.err = err
				continue
			}
			known[k] = v
			items = append(items, sync.Removal{Rel: p.r.RelPath, Base: p.from})
		}
		outs, errs := sync.RemoveAll(s.WorktreePath, items, bin)
		n := 0
		for k, i := range idx {
			p := &steps[i]
			if p.err != nil {
				continue
			}
			out, err := outs[n], errs[n]
			n++
			if err != nil {
				p.err = err
				continue
			}
			if out == sync.Conflict {
				conflicts++
				p.state = prsm.SyncConflict
				continue
			}
			// As revertDelta: what prsm knew loses the delta; a change
			// in the file no record has yet stays a change.
			p.learned = sync.Absent
			if v, ok := sync.Merge(p.from, known[k], p.to); ok {
				p.learned = v
			}
			st.tracker.Learn(p.r.RelPath, p.learned)
			p.wtLearnt = true
		}
		if conflicts > 0 {
			bk.Log.Warn("reject: worktree files changed since; left as they are", "session", s.ID, "files", conflicts)
		}
	}
	// Only a change that reached the workspace is taken out of it.
	var ws []int
	for _, i := range idx {
		if steps[i].err == nil && mayHaveReached(s, steps[i].r) {
			ws = append(ws, i)
		}
	}
	items := make([]sync.Removal, len(ws))
	for k, i := range ws {
		items[k] = sync.Removal{Rel: steps[i].r.RelPath, Base: steps[i].from}
	}
	outs, errs := bk.ws.RemoveAll(items, bin)
	wsConflicts := 0
	for k, i := range ws {
		p := &steps[i]
		if errs[k] != nil {
			p.err = errs[k]
			continue
		}
		if outs[k] == sync.Conflict {
			wsConflicts++
			p.state = prsm.SyncConflict
		}
	}
	if wsConflicts > 0 {
		bk.Log.Warn("conflict: workspace files left as they are", "session", s.ID, "files", wsConflicts)
	}
	for _, i := range idx {
		p := &steps[i]
		if p.err == nil {
			p.state, p.done = rejectedState(p.r, p.state), true
			crashPoint("reject:reverted")
		}
	}
}

// acceptRun is a planned accept of many records, written down: their
// seqs, in order.
type acceptRun struct {
	s      *prsm.Session
	seqs   []int64
	intent int64 // 0: none (nothing to do)
}

// planAccept plans the accept of the pending records refs (removals
// first where paths nest, as Accept orders a tool call's) and writes it
// down.
func (bk *bulker) planAccept(ctx context.Context, s *prsm.Session, refs []store.RecordRef) (*acceptRun, error) {
	refs = workspace.PathOrdered(refs, func(r store.RecordRef) string { return r.RelPath },
		func(r store.RecordRef) bool { return r.ChangeType == prsm.ChangeDelete })
	run := &acceptRun{s: s, seqs: make([]int64, len(refs))}
	for i, r := range refs {
		run.seqs[i] = r.Seq
	}
	if len(refs) == 0 {
		return run, nil
	}
	var err error
	run.intent, err = bk.intendBulk(ctx, s.ID, intentAcceptAll, run.seqs, false)
	return run, err
}

// runAccept accepts the planned records still pending, a chunk at a
// time, and lets the intent go once all are. A record that only changes
// its status (auto mode: it reached the workspace, no hunk of it
// rejected) is stored with its chunk in one transaction; any other (one
// to apply to the workspace, a partial one) goes through accept, one at
// a time. It returns the records it accepted (up to answerLimit). A
// failure, or the server stopping, leaves the intent for the next start.
func (bk *bulker) runAccept(ctx context.Context, run *acceptRun, j *job) ([]*prsm.Record, error) {
	return bk.inChunks(ctx, run.s.ID, run.seqs, run.intent, "accept:chunk", func(ctx context.Context, seqs []int64, events bool, prev func() error) (commitFn, error) {
		// An accept does all of its work here, in order; its commit only
		// hands the records on.
		if err := prev(); err != nil {
			return nil, err
		}
		done, err := bk.acceptChunk(ctx, run, seqs, events, j)
		return func() ([]*prsm.Record, error) { return done, err }, nil
	})
}

// acceptChunk accepts the records seqs of run still pending (runAccept).
func (bk *bulker) acceptChunk(ctx context.Context, run *acceptRun, seqs []int64, events bool, j *job) ([]*prsm.Record, error) {
	recs, err := store.RecordsBySeq(ctx, bk.DB.Q(), run.s.ID, seqs)
	if err != nil {
		return nil, err
	}
	var changes []store.StateChange
	var plain, done []*prsm.Record
	for _, r := range recs {
		switch {
		case r.Status != prsm.StatusPending:
			// Decided before a crash, or by an earlier chain.
		case r.SyncState != prsm.SyncPendingReview && decidedStatus(r) == prsm.StatusAccepted:
			changes = append(changes, store.StateChange{ID: r.ID, Status: prsm.StatusAccepted, SyncState: r.SyncState})
			plain = append(plain, r)
		default:
			chain, err := bk.review.accept(ctx, run.s, r)
			if err != nil {
				return done, err
			}
			done = append(done, chain...)
		}
	}
	err = bk.DB.Tx(ctx, func(q store.Querier) error {
		return store.SetRecordStates(ctx, q, run.s.ID, changes, time.Time{})
	})
	if err != nil {
		return done, err
	}
	for _, r := range plain {
		r.Status = prsm.StatusAccepted
		if events {
			bk.review.publishStatus(r)
		}
	}
	bk.jobs.progress(j, len(recs), 0)
	return append(done, plain...), nil
}
