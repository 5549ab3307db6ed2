package engine

import (
	"context"
	"errors"
	"fmt"
	stdsync "sync"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// A job is a long operation (a bulk accept or reject, a discard) run
// apart from the request that started it. Its plan is made and written
// down (an intent) while the request waits, so a bad request changes
// nothing and gets its error; the rest runs in the background, holding
// the session's lock, to its end whether or not the request's client
// stays: a client that leaves, or a CLI past its deadline, cancels
// nothing. It announces its progress (job_progress events), GET /jobs/{id}
// reads it, and a crash midway leaves its intent, which the next start
// finishes (RecoverIntents).

// jobRunner runs jobs and keeps them readable: it owns the registry of
// those running and just ended.
type jobRunner struct {
	*Engine
	reg jobRegistry
}

// jobKeep is how many ended jobs stay readable (GET /jobs/{id}).
const jobKeep = 64

// progressEvery is how often a running job announces its progress at
// most.
const progressEvery = 200 * time.Millisecond

// job is one job, running or ended.
type job struct {
	mu   stdsync.Mutex
	info api.Job
	// quiet: a job of at most eventLimit records announces nothing of
	// its own (its records' statuses are announced).
	quiet bool
	last  time.Time // when its progress was last announced
	done  chan struct{}
	// recs are the records it decided, up to answerLimit (nil past it);
	// err why it stopped. Both are set before done closes.
	recs []*prsm.Record
	err  error
}

// jobRegistry holds the running jobs and the last jobKeep ended ones.
type jobRegistry struct {
	mu    stdsync.Mutex
	byID  map[string]*job
	ended []string // oldest first
}

// startJob runs fn as a job of kind for session sessionID that decides
// total records, and returns it ended; with async it returns at once, and
// fn runs in the background (Close waits for it: e.background). The
// caller hands over what fn needs held (the session's lock) for fn to
// let go. A job run here is the caller's work: a panic in it is the
// caller's (a test's crash point); one in the background fails the job.
func (jr *jobRunner) startJob(kind, sessionID string, total int, async bool, fn func(j *job) ([]*prsm.Record, error)) *job {
	j := jr.newJob(kind, sessionID, total)
	if !async {
		recs, err := fn(j)
		jr.endJob(j, recs, err)
		return j
	}
	jr.background(func() {
		var recs []*prsm.Record
		err := fmt.Errorf("job %s stopped by a panic", j.info.ID)
		defer func() {
			if p := recover(); p != nil {
				jr.Log.Error("job panicked", "job", j.info.ID, "panic", p)
			}
			jr.endJob(j, recs, err)
		}()
		recs, err = fn(j)
	})
	return j
}

// newJob registers a job of kind for session sessionID that decides (or
// records) total records, and announces it; the caller ends it (endJob).
func (jr *jobRunner) newJob(kind, sessionID string, total int) *job {
	j := &job{done: make(chan struct{}), quiet: total <= eventLimit, info: api.Job{ID: newID(), Kind: kind, SessionID: sessionID,
		State: api.JobRunning, Total: total, StartedAt: time.Now().UTC()}}
	jr.reg.add(j)
	if !j.quiet {
		jr.Events.Publish(api.EventJobProgress, j.snapshot())
	}
	return j
}

// endJob ends j with its records and error, announces it, and lets the
// oldest ended jobs go.
func (jr *jobRunner) endJob(j *job, recs []*prsm.Record, err error) {
	j.mu.Lock()
	j.recs, j.err = recs, err
	j.info.State = api.JobDone
	if err != nil {
		j.info.State = api.JobFailed
		j.info.Error = errorBody(err)
		jr.Log.Error("job stopped", "job", j.info.ID, "kind", j.info.Kind, "session", j.info.SessionID, "done", j.info.Done, "of", j.info.Total, "err", err)
	}
	info := j.info
	j.mu.Unlock()
	close(j.done)
	if !j.quiet {
		jr.Events.Publish(api.EventJobProgress, info)
	}
	jr.reg.retire(info.ID)
}

// errorBody is err as an answer's error body.
func errorBody(err error) *api.ErrorBody {
	var pe *prsm.Error
	if errors.As(err, &pe) {
		return &api.ErrorBody{Error: pe.Msg, Code: pe.Code, Hint: pe.Hint}
	}
	return &api.ErrorBody{Error: err.Error(), Code: "job_failed"}
}

// snapshot is the job as it stands.
func (j *job) snapshot() api.Job {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.info
}

// leave counts n pending records the job leaves pending (in conflict);
// with ofTotal they were counted in its total, and leave it.
func (j *job) leave(n int, ofTotal bool) {
	j.mu.Lock()
	j.info.Left += n
	if ofTotal {
		j.info.Total -= n
	}
	j.mu.Unlock()
}

// add counts done more records decided, conflicts of them left in
// conflict, and announces the progress (at most every progressEvery).
// A nil job counts nothing.
func (jr *jobRunner) progress(j *job, done, conflicts int) {
	if j == nil {
		return
	}
	j.mu.Lock()
	j.info.Done += done
	j.info.Conflicts += conflicts
	info, now := j.info, time.Now()
	due := !j.quiet && now.Sub(j.last) >= progressEvery
	if due {
		j.last = now
	}
	j.mu.Unlock()
	if due {
		jr.Events.Publish(api.EventJobProgress, info)
	}
}

// add registers j, running.
func (r *jobRegistry) add(j *job) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byID == nil {
		r.byID = map[string]*job{}
	}
	r.byID[j.info.ID] = j
}

// retire counts job id among the ended ones and lets the oldest past
// jobKeep go.
func (r *jobRegistry) retire(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = append(r.ended, id)
	for len(r.ended) > jobKeep {
		delete(r.byID, r.ended[0])
		r.ended = r.ended[1:]
	}
}

// find is the job id, running or among the last ended.
func (r *jobRegistry) find(id string) (*job, error) {
	r.mu.Lock()
	j := r.byID[id]
	r.mu.Unlock()
	if j == nil {
		return nil, prsm.Errorf(prsm.ErrNotFound, "job_not_found", "a job is kept a while after it ends; look at the session's changes instead",
			"no job %q", id)
	}
	return j, nil
}

// Job is Engine.Job's work.
func (jr *jobRunner) Job(id string) (*api.Job, error) {
	j, err := jr.reg.find(id)
	if err != nil {
		return nil, err
	}
	info := j.snapshot()
	return &info, nil
}

// jobAnswer is what the ended job j decided, as an answer, or its error.
func (jr *jobRunner) jobAnswer(ctx context.Context, j *job) (*api.Records, error) {
	if j.err != nil {
		return nil, j.err
	}
	// Copies: the contents filled in are this answer's.
	recs := make([]*prsm.Record, len(j.recs))
	for i, r := range j.recs {
		c := *r
		recs[i] = &c
	}
	ans, err := jr.rec.answer(ctx, recs)
	if err != nil {
		return nil, err
	}
	info := j.snapshot()
	ans.Job = &info
	return ans, nil
}
