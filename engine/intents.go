package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/store"
)

// Kinds of intents (SPEC rule 6): each is written to the store before the
// step it names starts, in the same transaction as whatever makes the step
// necessary where there is one, and deleted once the step is done. A crash
// in between leaves it open, and the next start runs the step again. Every
// step is idempotent (3-way merges that find the result already in place
// write nothing; a rewind writes exact targets), so finishing means
// running it once more.
const (
	intentSync     = "sync"     // apply a new record to the workspace (older stores; see recoverSyncs)
	intentAccept   = "accept"   // accept a record (review mode: apply it)
	intentRevert   = "revert"   // take a record's delta out of worktree and workspace
	intentSelector = "rollback" // a selector rewind (selectorPayload), by the word stores hold; a rewind to a checkpoint's is intentRewind (rewind.go)
	// and intentHunks (hunks.go): reject hunks of a record (hunkIntent);
	// intentReject (bulk.go): reject many records, a discard's too
	// (bulkPayload); intentAcceptAll (bulk.go): accept many records
)

// intentLog writes down, before the first write, what a multi-step
// operation will do (intend, intendAll), and finishes at a start what a
// crash cut off (RecoverIntents). Its state is the store's intents table.
type intentLog struct{ *Engine }

// crashHook, when set (by tests only, through export_test.go), is called
// at the named points of multi-step operations where a crash would leave
// work half done; a test stops the operation there (it panics) to play a
// kill -9 and then checks that the next start finishes the work.
var crashHook atomic.Pointer[func(point string)]

// crashPoint calls the crash hook, if any.
func crashPoint(point string) {
	if f := crashHook.Load(); f != nil {
		(*f)(point)
	}
}

type intentPayload struct {
	Record string `json:"record"`
}

// intend writes down, before it starts, that r is about to go through kind.
// q is the database or the transaction the intent must commit with.
func (il *intentLog) intend(ctx context.Context, q store.Querier, kind string, r *prsm.Record) (int64, error) {
	b, _ := json.Marshal(intentPayload{Record: r.ID})
	return store.AddIntent(ctx, q, r.SessionID, kind, b)
}

// intendAll writes down, in one transaction, that every record of recs is
// about to go through kind, in that order: a crash after the first step
// leaves the rest to the next start, not undone and forgotten.
func (il *intentLog) intendAll(ctx context.Context, kind string, recs []*prsm.Record) ([]int64, error) {
	ids := make([]int64, 0, len(recs))
	err := il.DB.Tx(ctx, func(q store.Querier) error {
		ids = ids[:0]
		for _, r := range recs {
			id, err := il.intend(ctx, q, kind, r)
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	})
	return ids, err
}

// syncDone is a record's sync, done: its new sync state (its status
// kept).
type syncDone struct {
	id, status, state string
}

// finishSyncs stores the sync states that the syncs of session
// sessionID's records gave them, in one transaction, each kept in the
// history first as UpdateRecordState does. The records themselves are
// the caller's to set.
func (il *intentLog) finishSyncs(ctx context.Context, sessionID string, done []syncDone) error {
	if len(done) == 0 {
		return nil
	}
	changes := make([]store.StateChange, len(done))
	for i, d := range done {
		changes[i] = store.StateChange{ID: d.id, Status: d.status, SyncState: d.state}
	}
	return il.DB.Tx(ctx, func(q store.Querier) error {
		return store.SetRecordStates(ctx, q, sessionID, changes, time.Time{})
	})
}

// syncError says that records were stored but some did not reach the
// workspace: they stay unsynced (sync_state pending_review), so accepting
// them, or the next start (recoverSyncs), applies them.
type syncError struct {
	errs []error
}

func (e *syncError) Error() string {
	return fmt.Sprintf("the change is recorded but could not be applied to the workspace (%v); accept it to try again, or restart the server",
		errors.Join(e.errs...))
}

// Unwrap gives the file system's errors and, for the API's answer (a 500
// with code sync_failed), a prsm.Error.
func (e *syncError) Unwrap() []error {
	api := &prsm.Error{Code: "sync_failed", Msg: e.Error(), Hint: "free the disk (or fix what failed), then accept the change; the next server start also applies it"}
	return append([]error{api}, e.errs...)
}

// transient reports whether a failed workspace write may succeed when tried
// again: the disk is full, read-only or failing, or the process ran out of
// files. Anything else (a path leading out of the workspace, a directory
// where a file was expected) will fail the same way again.
func transient(err error) bool {
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EIO, syscall.EROFS,
		syscall.EACCES, syscall.EPERM, syscall.EMFILE, syscall.ENFILE, syscall.EAGAIN, syscall.EINTR,
		syscall.EBUSY, syscall.ETXTBSY, syscall.ENOMEM} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

// RecoverIntents is Engine.RecoverIntents's work.
func (il *intentLog) RecoverIntents(ctx context.Context) (int, error) {
	open, err := store.OpenIntents(ctx, il.DB.Q())
	if err != nil {
		return 0, err
	}
	done := 0
	for _, in := range open {
		if err := il.recoverIntent(ctx, in); err != nil {
			il.Log.Error("finish interrupted operation", "kind", in.Kind, "session", in.SessionID, "err", err)
			continue
		}
		if discarding(in) {
			// A discard's rejects are done: its end comes next, as
			// EndSession would have gone on (ending twice is a no-op).
			if _, err := il.sessions.EndSession(ctx, in.SessionID, true); err != nil && !errors.Is(err, prsm.ErrNotFound) {
				il.Log.Error("finish interrupted discard", "session", in.SessionID, "err", err)
				continue
			}
		}
		if err := store.DoneIntent(ctx, il.DB.Q(), in.ID); err != nil {
			return done, err
		}
		done++
	}
	synced, err := il.recoverSyncs(ctx)
	if err != nil {
		return done, err
	}
	done += synced
	if done > 0 {
		il.Log.Info("finished operations interrupted by a crash", "count", done)
	}
	return done, nil
}

// recoverSyncs applies the records of auto-mode sessions that were stored
// and never synced: their sync state is still pending_review, as a crash
// came between the record and its sync, or the sync failed in a way that
// may pass (a full disk). In auto mode that state is the sync's intent.
func (il *intentLog) recoverSyncs(ctx context.Context) (int, error) {
	sessions, err := store.ListSessions(ctx, il.DB.Q(), prsm.SessionActive)
	if err != nil {
		return 0, err
	}
	done := 0
	for _, s := range sessions {
		if s.Mode != prsm.ModeAuto {
			continue
		}
		recs, err := store.ListRecords(ctx, il.DB.Q(), store.RecordFilter{SessionID: s.ID, Status: prsm.StatusPending})
		if err != nil {
			return done, err
		}
		for _, r := range recs {
			if r.SyncState != prsm.SyncPendingReview {
				continue
			}
			if err := il.syncStored(ctx, s.ID, r); err != nil {
				il.Log.Error("apply a record stored before a crash", "session", s.ID, "record", r.ID, "err", err)
				continue
			}
			done++
		}
	}
	return done, nil
}

// syncStored applies the stored record r of session id, under its lock.
func (il *intentLog) syncStored(ctx context.Context, id string, r *prsm.Record) error {
	s, _, unlock, err := il.sessions.lockSession(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	return il.syncUnsynced(ctx, s, r)
}

// syncUnsynced applies record r to the workspace if it never got its
// sync state: one that was synced, or found in conflict, is settled
// (applying it again could bring back what the user took out since).
func (il *intentLog) syncUnsynced(ctx context.Context, s *prsm.Session, r *prsm.Record) error {
	if r.Status == prsm.StatusRejected || r.SyncState != prsm.SyncPendingReview {
		return nil
	}
	before, after, err := il.rec.versions(ctx, r)
	if err != nil {
		return err
	}
	state, err := il.ws.Sync(s.ID, r.RelPath, before, after)
	if err != nil {
		return err
	}
	return il.rec.setState(ctx, r, r.Status, state)
}

// discarding reports whether in is a discard's reject, which the
// session's end follows.
func discarding(in store.Intent) bool {
	var p bulkPayload
	return in.Kind == intentReject && json.Unmarshal(in.Payload, &p) == nil && p.End
}

func (il *intentLog) recoverIntent(ctx context.Context, in store.Intent) error {
	s, st, unlock, err := il.sessions.lockSession(ctx, in.SessionID)
	if errors.Is(err, prsm.ErrNotFound) {
		return nil // the session is gone: nothing left to finish
	}
	if err != nil {
		return err
	}
	defer unlock()
	if in.Kind == intentSelector || in.Kind == intentRewind {
		if s.Status != prsm.SessionActive {
			return nil // the worktree is gone; its records stay as they are
		}
		var rb selectorPayload
		var rw rewindPayload
		target, apply := any(&rb), func() error { return il.rewind.applySelector(ctx, s, st, &rb) }
		if in.Kind == intentRewind {
			target, apply = &rw, func() error { return il.rewind.applyRewind(ctx, s, st, &rw) }
		}
		if err := json.Unmarshal(in.Payload, target); err != nil {
			return fmt.Errorf("intent %d: %w", in.ID, err)
		}
		if err := apply(); err != nil {
			return err
		}
		il.publishSession(ctx, s.ID)
		return nil
	}
	if in.Kind == intentHunks {
		return il.review.recoverHunks(ctx, s, st, in.Payload)
	}
	if in.Kind == intentAcceptAll {
		var p bulkPayload
		if err := json.Unmarshal(in.Payload, &p); err != nil {
			return fmt.Errorf("intent %d: %w", in.ID, err)
		}
		// Those decided already are skipped; the caller lets it go.
		_, err := il.bulk.runAccept(ctx, &acceptRun{s: s, seqs: p.Seqs}, nil)
		return err
	}
	if in.Kind == intentReject {
		var p bulkPayload
		if err := json.Unmarshal(in.Payload, &p); err != nil {
			return fmt.Errorf("intent %d: %w", in.ID, err)
		}
		// Those already rejected are skipped; the rest go in order. The
		// caller lets the intent go (and ends a discard's session).
		_, err := il.bulk.runReject(ctx, &rejectRun{s: s, st: st, seqs: p.Seqs, end: true}, nil)
		return err
	}
	var p intentPayload
	if err := json.Unmarshal(in.Payload, &p); err != nil {
		return fmt.Errorf("intent %d: %w", in.ID, err)
	}
	r, err := store.GetRecord(ctx, il.DB.Q(), s.ID, p.Record)
	if errors.Is(err, prsm.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	switch in.Kind {
	case intentSync:
		return il.syncUnsynced(ctx, s, r)
	case intentAccept:
		_, err := il.review.accept(ctx, s, r)
		return err
	case intentRevert:
		if r.Status == prsm.StatusRejected {
			return nil
		}
		return il.review.revert(ctx, s, st, r)
	}
	return fmt.Errorf("intent %d: unknown kind %q", in.ID, in.Kind)
}
