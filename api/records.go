package api

import (
	"encoding/json"

	"github.com/prsm-dev/prsm"
)

// Event types of GET /events, each with the type of its data: a
// prsm.Session, a prsm.Record, a StatusEvent and a prsm.Checkpoint.
const (
	EventSessionUpdated   = "session_updated"
	EventFileChanged      = "file_changed"
	EventFileChangeStatus = "file_change_status"
	EventCheckpoint       = "checkpoint_created"
)

// ToolCallRequest is the body of POST /sessions/{id}/tool-calls, the
// pre-tool capture.
type ToolCallRequest struct {
	ToolCallID   string          `json:"tool_call_id"`
	ToolName     string          `json:"tool_name"`
	Args         json.RawMessage `json:"args"`
	AgentID      string          `json:"agent_id"`
	Cwd          string          `json:"cwd"`
	MessageIndex int             `json:"message_index"`
}

// CompleteRequest is the body of POST .../tool-calls/{id}/complete. The
// fields after Result are used only when the pre-tool capture never
// arrived.
type CompleteRequest struct {
	Result       json.RawMessage `json:"result"`
	ToolName     string          `json:"tool_name"`
	Args         json.RawMessage `json:"args"`
	AgentID      string          `json:"agent_id"`
	Cwd          string          `json:"cwd"`
	MessageIndex int             `json:"message_index"`
}

// ToolCallAnswer is the answer of a pre-tool capture.
type ToolCallAnswer struct {
	ToolCallID string `json:"tool_call_id"`
	ToolName   string `json:"tool_name"`
	Candidates int    `json:"candidates"`
}

// Records is the answer of complete and of the record lookups.
type Records struct {
	Records []*prsm.Record `json:"records"`
	// Warnings (complete only) name what the call changed that prsm could
	// not record: a path too long for the system, say.
	Warnings []string `json:"warnings,omitempty"`
	// Cascaded (a hunk's reject only) are the hunks of later changes
	// rejected with it: their base was gone.
	Cascaded []HunkRef `json:"cascaded,omitempty"`
	// Job (a bulk decision, or a reject of many changes) is the job that
	// made the decision, ended: its counts. Records then lists the
	// changes it decided up to a bound (1000); Job.Total counts them all.
	Job *Job `json:"job,omitempty"`
	// Earlier (an accept in review mode only) are the earlier pending
	// changes of the same files that the accept applied first, or, for
	// a dry run, would apply.
	Earlier []*prsm.Record `json:"earlier,omitempty"`
}

// AcceptRequest is the body of POST .../file-changes/{id}/accept, and of
// .../hunks/{n}/accept (with_earlier only); it may be left out. In review
// mode, an accept applies the earlier pending changes of the same file
// first: it does so only with WithEarlier, and is otherwise refused with
// code needs_earlier, changing nothing. DryRun changes nothing and
// answers what the accept would take (Records.Earlier).
type AcceptRequest struct {
	WithEarlier bool `json:"with_earlier,omitempty"`
	DryRun      bool `json:"dry_run,omitempty"`
	// Say and Author: the user's note on the decision (RejectRequest).
	Say    string `json:"say,omitempty"`
	Author string `json:"author,omitempty"`
}

// ResolveRequest is the body of POST .../file-changes/{id}/resolve: how
// to settle a change in conflict (mine, agent or markers).
type ResolveRequest struct {
	How string `json:"how"`
	// Say and Author: the user's note on the decision (RejectRequest).
	Say    string `json:"say,omitempty"`
	Author string `json:"author,omitempty"`
}

// HunkRef names one hunk of one record.
type HunkRef struct {
	ID    string `json:"id"`
	Index int    `json:"index"`
}

// HunksRequest decides several hunks of one record at once
// (POST .../file-changes/{id}/hunks), by their indexes.
type HunksRequest struct {
	Accept []int `json:"accept,omitempty"`
	Reject []int `json:"reject,omitempty"`
	// WithEarlier lets a decision that settles a review-mode change as
	// accepted apply the earlier pending changes of its file first (see
	// AcceptRequest); without it such a decision is refused.
	WithEarlier bool `json:"with_earlier,omitempty"`
	// Say and Author: the user's note on the decision (RejectRequest).
	Say    string `json:"say,omitempty"`
	Author string `json:"author,omitempty"`
}

// MarshalJSON writes Records as [] when there are none, never null.
func (r Records) MarshalJSON() ([]byte, error) {
	type plain Records
	p := plain(r)
	p.Records = nonNil(p.Records)
	return json.Marshal(p)
}

// StatusEvent is the data of a file_change_status event.
type StatusEvent struct {
	SessionID  string `json:"session_id"`
	ID         string `json:"id"`
	ToolCallID string `json:"tool_call_id"`
	RelPath    string `json:"rel_path"`
	FilePath   string `json:"file_path"`
	Status     string `json:"status"`
	SyncState  string `json:"sync_state"`
	// Hunks are the record's hunks with their statuses as shown (none
	// for a record without hunks): a hunk decision that leaves the
	// record pending changes only these.
	Hunks []prsm.Hunk `json:"hunks,omitempty"`
	// Note is the record's note, when it has one (a conflict left to the
	// editor, and then resolved there).
	Note string `json:"note,omitempty"`
}

// nonNil is s, or an empty slice for nil: the lists of an answer are
// JSON arrays, never null, so that clients need no null check.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
