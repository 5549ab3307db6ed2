package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine/workspace"
	"github.com/prsm-dev/prsm/internal/bigfile"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/tracker"
)

// recorder makes and stores the records of a tool call's changes
// (record.go), places them in the workspace through the workspace
// writer, and reads records and their contents back (records.go).
type recorder struct {
	*Engine
	ws *workspace.Writer
	// earlyParts counts records made with an early write's parts.
	earlyParts atomic.Int64
}

// putBlob stores data for a record, in the transaction running now,
// unless a capture stored it and no sweep of unreferenced blobs ran since
// (an insert complete's transaction need not repeat); it returns the
// blob's hash.
func (rc *recorder) putBlob(ctx context.Context, q store.Querier, st *sessionState, data []byte) (string, error) {
	hash := store.HashBlob(data)
	if sweeps, ok := st.stored[hash]; ok {
		delete(st.stored, hash)
		if sweeps == rc.DB.BlobSweeps() {
			return hash, nil
		}
	}
	return store.PutBlob(ctx, q, data)
}

// record stores the records of changes for tool call tc (with the new
// known state, and the tool call completed, in one transaction), then
// applies them to the workspace (auto mode). The records come back with
// the sync states sync gave them, the first answerLimit of them (and any
// a workspace shell write needs): a record of 200k files holds no more
// in memory, and is announced as a job. finish stores those states and
// announces the records. The caller runs finish (never nil) once, after
// its answer and before it lets go of the session. exists false means
// the tool call row is stored with the records.
func (rc *recorder) record(ctx context.Context, s *prsm.Session, st *sessionState, tc *prsm.ToolCall, changes []tracker.Change, snap snapshot, early *earlyWrite, id func(int) string, result []byte, exists bool) (recs []*prsm.Record, finish func(), err error) {
	finish = func() {}
	now := time.Now().UTC()
	auto := s.Mode == prsm.ModeAuto
	// The early write made the record's costly parts already if it read
	// the one change.
	var parts *recordParts
	if early != nil && len(changes) == 1 {
		if parts = early.partsOf(changes[0]); parts != nil {
			rc.earlyParts.Add(1)
		}
	}
	var writes *workspace.Batch
	if auto && len(changes) > 0 {
		var ew workspace.Early // nil, not a nil *earlyWrite
		if early != nil {
			ew = early
		}
		writes = rc.ws.Batch(s.ID, changes, ew)
	} else if early != nil {
		early.Drop()
	}
	// A record of many files (an agent's npm install) is announced as a
	// job, with its writes' progress, and no event per record.
	var j *job
	if len(changes) > eventLimit {
		defer rc.trash.pause()() // its sync would wait for the bins' emptying
		j = rc.jobs.newJob(api.JobRecord, s.ID, len(changes))
		if writes != nil {
			writes.OnProgress(func(n int) { rc.jobs.progress(j, n, 0) })
		}
	}
	// The records kept past their insert (kept, by change index): the
	// answer's, up to answerLimit, and those a workspace shell write
	// needs (their notes); a record of 200k files keeps no more.
	var kept []int
	tx := rc.DB.Tx
	if len(changes) > eventLimit {
		tx = rc.DB.TxMany // an npm install's thousands of records
	}
	err = tx(ctx, func(q store.Querier) error {
		recs, kept = recs[:0], kept[:0]
		if !exists {
			if err := insertToolCall(ctx, q, st, tc); err != nil {
				return err
			}
		}
		for i, ch := range changes {
			r, err := rc.newRecord(ctx, q, s, st, tc, ch, snap, parts, id(i), now)
			if err != nil {
				return err
			}
			if err := store.InsertRecord(ctx, q, r); err != nil {
				return err
			}
			if err := store.PutFileState(ctx, q, s.ID, ch.Rel, tracker.StateOf(ch.After)); err != nil {
				return err
			}
			// In auto mode the record's sync state, pending_review until
			// the sync below stores another, is its intent (SPEC rule 6):
			// a crash before leaves it to the next start
			// (recoverSyncs), never a stored record nobody applies.
			if len(recs) < answerLimit || st.notes[ch.Rel] != "" {
				recs = append(recs, r)
				kept = append(kept, i)
			}
		}
		return store.CompleteToolCall(ctx, q, s.ID, tc.ID, result, now)
	})
	if err != nil {
		if writes != nil {
			writes.Discard()
		}
		if j != nil {
			rc.jobs.endJob(j, nil, err)
		}
		return nil, finish, err
	}
	// Stored: from here on the work runs to its end even if the caller
	// goes away (a canceled request is not a crash to recover from).
	ctx = context.WithoutCancel(ctx)
	for _, ch := range changes {
		st.tracker.Learn(ch.Rel, ch.After)
	}
	crashPoint("record:stored")
	// One record per file, placed in the workspace now that it is stored.
	var states []string
	var syncErrs []error
	if writes != nil {
		states, syncErrs = writes.Place()
	} else {
		rc.jobs.progress(j, len(changes), 0)
	}
	var failed []error
	var finished []syncDone
	for i, ch := range changes {
		if !auto {
			continue
		}
		state, err := states[i], syncErrs[i]
		if err != nil && transient(err) {
			// Nothing was written (writes are atomic). The record stays
			// unsynced: accepting it, or the next start, applies it.
			rc.Log.Error("sync failed", "session", s.ID, "record", id(i), "err", err)
			failed = append(failed, fmt.Errorf("%s: %w", ch.Rel, err))
			continue
		}
		if err != nil {
			// A path prsm may never write (a symlink leading out, a
			// directory): the workspace stays as it is.
			rc.Log.Error("sync refused: workspace file left as it is", "session", s.ID, "record", id(i), "err", err)
		}
		finished = append(finished, syncDone{id: id(i), status: prsm.StatusPending, state: state})
	}
	if auto {
		for k, r := range recs {
			if err := syncErrs[kept[k]]; err == nil || !transient(err) {
				r.SyncState = states[kept[k]]
			}
		}
	}
	// The records are announced once, with the states sync gave them,
	// once those are stored for all of them in one transaction: by
	// finish, which the caller runs after its answer. The hub gets
	// copies, taken now: the caller fills contents into recs while SSE
	// writers encode the events.
	var evs []prsm.Record
	if j == nil {
		evs = make([]prsm.Record, len(recs))
		for i, r := range recs {
			evs[i] = *r
		}
	}
	finish = func() {
		if err := rc.intents.finishSyncs(ctx, s.ID, finished); err != nil {
			// The workspace has the changes; their records stay
			// pending_review, and the next start settles their states.
			rc.Log.Error("store sync states", "session", s.ID, "tool_call", tc.ID, "err", err)
		}
		rc.statsChanged(st) // the stat cache's news are stored apart
		cmd := commandOf(tc.Args)
		for i := range evs {
			evs[i].Summary = cmd
			if cmd == "" {
				evs[i].Summary = rc.changedLine(ctx, &evs[i])
			}
			rc.Events.Publish(api.EventFileChanged, &evs[i])
		}
		if j != nil {
			rc.jobs.endJob(j, nil, nil) // its end tells the page to read the session again
		}
		if len(recs) > 0 {
			rc.publishSession(ctx, s.ID)
		}
	}
	// The answer carries the contents, which are at hand: no reads of
	// the blobs just stored.
	for k, r := range recs {
		if r.Binary {
			continue
		}
		inline := func(v sync.Version) *string {
			if !v.Present {
				return nil
			}
			return inlined(v.Content)
		}
		ch := changes[kept[k]]
		r.OldContent, r.NewContent = inline(ch.Before), inline(ch.After)
		if r.PreToolHash == r.OldHash {
			r.PreToolContent = r.OldContent
		}
	}
	if len(failed) > 0 {
		return recs, finish, &syncError{errs: failed}
	}
	return recs, finish, nil
}

// recordParts are the parts of a change's record that cost CPU: whether
// it is binary, its line ranges and hunks (with the note of a change
// past the diff's bounds, kept as one hunk of the whole file), and its
// new content hashed and compressed for the store (blob, nil: newRecord
// stores it). An early write makes them all while the complete request
// is on its way; newRecord makes the others itself otherwise.
type recordParts struct {
	made           bool
	binary         bool
	added, removed []prsm.Range
	hunks          []prsm.Hunk
	note           string
	blob           *store.Encoded
}

func makeRecordParts(before, after sync.Version) recordParts {
	p := recordParts{made: true, binary: isBinaryVersion(before) || isBinaryVersion(after), hunks: []prsm.Hunk{}}
	if !p.binary {
		var hunks []prsm.Hunk
		var note string
		p.added, p.removed, hunks, note = rangesAndHunks(before, after)
		if hasHunks(before) && hasHunks(after) {
			p.hunks, p.note = hunks, note
		}
	}
	return p
}

// hasHunks says whether a side of a text change can take part in hunks:
// absent, or a file whose bytes prsm holds. A symlink's target and a big
// file's stub are not lines.
func hasHunks(v sync.Version) bool {
	if !v.Present {
		return true
	}
	_, big := v.Big()
	return !v.IsLink() && !big
}

// newRecord builds the record of one change and stores its contents;
// parts, when given, are those of ch (see recordParts).
func (rc *recorder) newRecord(ctx context.Context, q store.Querier, s *prsm.Session, st *sessionState, tc *prsm.ToolCall, ch tracker.Change, snap snapshot, parts *recordParts, id string, now time.Time) (*prsm.Record, error) {
	r := &prsm.Record{
		ID: id, SessionID: s.ID, FilePath: filepath.Join(rc.Repo.Root, filepath.FromSlash(ch.Rel)), RelPath: ch.Rel,
		AgentID: tc.AgentID, ToolCallID: tc.ID, ToolName: tc.ToolName, MessageIndex: tc.MessageIndex,
		Timestamp: now, Status: prsm.StatusPending, SyncState: prsm.SyncPendingReview,
		AddedRanges: []prsm.Range{}, RemovedRanges: []prsm.Range{},
	}
	switch {
	case !ch.Before.Present:
		r.ChangeType = prsm.ChangeCreate
	case !ch.After.Present:
		r.ChangeType = prsm.ChangeDelete
	default:
		r.ChangeType = prsm.ChangeModify
	}
	put := func(v sync.Version) (string, error) {
		if !v.Present {
			return "", nil
		}
		return rc.putBlob(ctx, q, st, v.Content)
	}
	if parts == nil {
		p := makeRecordParts(ch.Before, ch.After)
		parts = &p
	}
	var err error
	if r.OldHash, err = put(ch.Before); err != nil {
		return nil, err
	}
	if parts.blob != nil {
		if err := store.PutEncoded(ctx, q, *parts.blob); err != nil {
			return nil, err
		}
		r.NewHash = parts.blob.Hash
	} else if r.NewHash, err = put(ch.After); err != nil {
		return nil, err
	}
	r.PreToolHash = r.OldHash
	if fs, ok := snap[ch.Rel]; ok {
		r.PreToolHash = fs.Hash
	}
	r.ModeBefore, r.ModeAfter = ch.Before.Mode, ch.After.Mode
	r.SizeBefore, r.SizeAfter = ch.Before.Size(), ch.After.Size()
	r.Note = bigNote(ch.Before, ch.After)
	if n := st.notes[ch.Rel]; n != "" && r.Note == "" {
		r.Note = n
	}
	r.Note = joinNotes(r.Note, parts.note)
	r.Binary = parts.binary
	r.Hunks = []prsm.Hunk{}
	if !r.Binary {
		r.AddedRanges, r.RemovedRanges = parts.added, parts.removed
		if parts.hunks != nil {
			r.Hunks = parts.hunks
		}
	}
	return r, nil
}

// bigNote is the note of a record with a side kept as a big file's stub:
// over the size limit, or past what one look reads into memory.
func bigNote(before, after sync.Version) string {
	var sizes []string
	over := false
	for _, v := range []sync.Version{before, after} {
		if in, ok := v.Big(); ok {
			sizes = append(sizes, prsm.Size(in.Size))
			over = over || in.Size > bigfile.Limit()
		}
	}
	if len(sizes) == 0 {
		return ""
	}
	why := fmt.Sprintf("over prsm's size limit of %s (PRSM_MAX_FILE_SIZE)", prsm.Size(bigfile.Limit()))
	if !over {
		why = fmt.Sprintf("past the %s of content prsm reads at once, in a tool call that changed more", prsm.Size(tracker.LookBudget()))
	}
	return fmt.Sprintf("too large: %s, %s; prsm compares it by its size and a hash and keeps no copy of its content",
		strings.Join(sizes, " and "), why)
}

// joinNotes is a record's notes, those that are not "", as one.
func joinNotes(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}

// setState stores a record's status and sync state and announces it.
func (rc *recorder) setState(ctx context.Context, r *prsm.Record, status, syncState string) error {
	return rc.review.setStates(ctx, []stateChange{{r: r, status: status, syncSt: syncState}}, "")
}

func trackerState(v sync.Version) store.FileState { return tracker.StateOf(v) }

// isBinaryVersion: a regular file whose content is not text.
func isBinaryVersion(v sync.Version) bool {
	return v.Present && !v.IsLink() && sync.IsBinary(v.Content)
}

// rangesAndHunks are the record ranges and hunks of a text change, from
// one bounded diff, and the note of a change past its bounds.
func rangesAndHunks(before, after sync.Version) (added, removed []prsm.Range, hunks []prsm.Hunk, note string) {
	var old, new []byte
	if before.Present {
		old = before.Content
	}
	if after.Present {
		new = after.Content
	}
	return sync.RangesAndHunks(old, new)
}

// lineRanges are the record ranges of a text change.
func lineRanges(before, after sync.Version) (added, removed []prsm.Range) {
	var old, new []byte
	if before.Present {
		old = before.Content
	}
	if after.Present {
		new = after.Content
	}
	added, removed = sync.LineRanges(old, new)
	if added == nil {
		added = []prsm.Range{}
	}
	if removed == nil {
		removed = []prsm.Range{}
	}
	return added, removed
}
