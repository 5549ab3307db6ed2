package api

import "time"

// EventJobProgress is the event of a job's progress, with a Job as its
// data: sent as a job starts, about every fifth of a second while it
// runs, and once as it ends.
const EventJobProgress = "job_progress"

// Kinds of jobs.
const (
	JobRejectAll = "reject_all" // every pending change of a session (of one file), or of every session
	JobAcceptAll = "accept_all" // the same, accepted
	JobReject    = "reject"     // a change or a tool call's, with its cascade
	JobDiscard   = "discard"    // a session's end with --discard: its pending changes rejected, then the end
	JobRecord    = "record"     // the records of a tool call (or of the watcher) that changed many files, and their writes to the workspace
)

// States of a job.
const (
	JobRunning = "running"
	JobDone    = "done"
	JobFailed  = "failed"
)

// Job is a long operation the server runs apart from the request that
// started it: a bulk accept or reject, or a discard. It is written down
// before it starts, so it goes on when its client leaves or gives up, and
// a crash midway is finished at the next start. GET /jobs/{id} reads it;
// a request with `Prefer: respond-async` is answered 202 with it as soon
// as it starts. The recording of many files (an npm install's) is
// announced as a job too (kind record), whose records are stored before
// its writes begin.
type Job struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	SessionID string `json:"session_id,omitempty"`
	State     string `json:"state"`
	// Total is how many changes the job decides; Done how many it has
	// decided so far, Conflicts how many of those were left in conflict.
	Total     int `json:"total"`
	Done      int `json:"done"`
	Conflicts int `json:"conflicts"`
	// Left (an accept or reject of all) is how many pending changes it
	// left pending: those in conflict with your edits, and the others of
	// their files. A conflict is resolved (prsm changes resolve), never
	// decided in bulk.
	Left      int       `json:"left"`
	StartedAt time.Time `json:"started_at"`
	// Error is why a failed job stopped (what it decided stays decided;
	// the rest is tried again at the next start).
	Error *ErrorBody `json:"error,omitempty"`
}

// JobPath is the route of job id.
func JobPath(id string) string { return RouteGetJob.Path(id) }
