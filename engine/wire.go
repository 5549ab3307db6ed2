package engine

import "github.com/prsm-dev/prsm/api"

// The request and response types of the HTTP API live in package api; these
// aliases keep engine's own code as it was.
type (
	StartRequest      = api.StartRequest
	ToolCallRequest   = api.ToolCallRequest
	CompleteRequest   = api.CompleteRequest
	ToolCallAnswer    = api.ToolCallAnswer
	Records           = api.Records
	StatusEvent       = api.StatusEvent
	TurnRequest       = api.TurnRequest
	CheckpointRequest = api.CheckpointRequest
	FileDiff          = api.FileDiff
	CheckpointDiff    = api.CheckpointDiff
	Operation         = api.Operation
	Conflict          = api.Conflict
	Plan              = api.Plan
	RollbackRequest   = api.RollbackRequest
	GCRequest         = api.GCRequest
	GCReport          = api.GCReport
)

// Event types sent on GET /events.
const (
	EventSessionUpdated   = api.EventSessionUpdated
	EventFileChanged      = api.EventFileChanged
	EventFileChangeStatus = api.EventFileChangeStatus
	EventCheckpoint       = api.EventCheckpoint
)
