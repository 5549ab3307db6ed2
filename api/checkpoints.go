package api

import "encoding/json"

// TurnRequest is the body of POST /sessions/{id}/turns.
type TurnRequest struct {
	MessageIndex int    `json:"message_index"`
	Prompt       string `json:"prompt"`
}

// CheckpointRequest is the body of POST /sessions/{id}/checkpoints.
type CheckpointRequest struct {
	Name       string `json:"name"`
	Annotation string `json:"annotation"`
}

// AnnotateRequest is the body of PUT /sessions/{id}/checkpoints/{cid}.
// Annotation is required (nil: the field is missing); "" clears it.
type AnnotateRequest struct {
	Annotation *string `json:"annotation"`
}

// RewindRequest is the body of POST /sessions/{id}/checkpoints/{cid}/rewind;
// it may be empty. ?dry_run=true in the query does the same as DryRun.
type RewindRequest struct {
	DryRun bool `json:"dry_run"`
	// Say and Author: the user's note on the rewind (RejectRequest).
	Say    string `json:"say,omitempty"`
	Author string `json:"author,omitempty"`
}

// FileDiff is one file of a checkpoint diff.
type FileDiff struct {
	Path   string `json:"path"`
	Status string `json:"status"` // added, deleted, modified
	Binary bool   `json:"binary"`
	Added  int    `json:"added"`
	Remove int    `json:"removed"`
}

// CheckpointDiff is the answer of GET .../checkpoints/{cid}/diff[/{other}].
type CheckpointDiff struct {
	From  string     `json:"from"`
	To    string     `json:"to"`
	Files []FileDiff `json:"files"`
	Patch string     `json:"patch"`
}

// MarshalJSON writes Files as [] when there are none, never null.
func (d CheckpointDiff) MarshalJSON() ([]byte, error) {
	type plain CheckpointDiff
	p := plain(d)
	p.Files = nonNil(p.Files)
	return json.Marshal(p)
}

// Operation is one file a rollback changes in the worktree.
type Operation struct {
	Type      string   `json:"type"` // restore, delete or create
	Path      string   `json:"path"`
	RecordIDs []string `json:"record_ids"`
}

// MarshalJSON writes RecordIDs as [] when there are none, never null.
func (o Operation) MarshalJSON() ([]byte, error) {
	type plain Operation
	p := plain(o)
	p.RecordIDs = nonNil(p.RecordIDs)
	return json.Marshal(p)
}

// Conflict is a workspace file whose user edits overlap a change the
// rollback undoes; it is left as it is.
type Conflict struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Plan is a rollback's preview, and the answer of a rollback that ran.
type Plan struct {
	CheckpointID       string      `json:"checkpoint_id"`
	Operations         []Operation `json:"operations"`
	AffectedFiles      []string    `json:"affected_files"`
	Conflicts          []Conflict  `json:"conflicts"`
	Warnings           []string    `json:"warnings"`
	DryRun             bool        `json:"dry_run"`
	SafetyCheckpointID string      `json:"safety_checkpoint_id,omitempty"`
	// Decisions (a rewind) are the records whose status the rewind
	// changes: made after the checkpoint (to rewound), or decided since
	// (back to the status they had then).
	Decisions []PlanDecision `json:"decisions"`
	// Summary says in plain sentences what the rollback brings back, what
	// goes away and which decisions it undoes.
	Summary []string `json:"summary"`
}

// PlanDecision is one record whose status a rewind changes.
type PlanDecision struct {
	RecordID string `json:"record_id"`
	RelPath  string `json:"rel_path"`
	ToolName string `json:"tool_name"`
	From     string `json:"from"`
	To       string `json:"to"`
}

// MarshalJSON writes the plan's lists as [] when they are empty, never
// null.
func (p Plan) MarshalJSON() ([]byte, error) {
	type plain Plan
	q := plain(p)
	q.Operations, q.AffectedFiles = nonNil(q.Operations), nonNil(q.AffectedFiles)
	q.Conflicts, q.Warnings = nonNil(q.Conflicts), nonNil(q.Warnings)
	q.Decisions, q.Summary = nonNil(q.Decisions), nonNil(q.Summary)
	return json.Marshal(q)
}

// RollbackRequest is the body of POST /sessions/{id}/rollback: exactly one
// selector.
type RollbackRequest struct {
	AgentID string `json:"agent_id"`
	After   string `json:"after"`
	File    string `json:"file"`
	Last    int    `json:"last"`
	DryRun  bool   `json:"dry_run"`
	// Say and Author: the user's note on the rollback (RejectRequest).
	Say    string `json:"say,omitempty"`
	Author string `json:"author,omitempty"`
}
