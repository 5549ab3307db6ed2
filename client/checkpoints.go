package client

import (
	"context"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// Turn marks the start of a turn; the server answers with the automatic
// checkpoint it took, nil when the session's automatic checkpoints are off.
func (c *Client) Turn(ctx context.Context, sessionID string, req api.TurnRequest) (*prsm.Checkpoint, error) {
	var cp *prsm.Checkpoint
	if err := c.call(ctx, api.RouteTurn.Path(sessionID), api.RouteTurn, req, &cp); err != nil {
		return nil, err
	}
	return cp, nil
}

// Checkpoints lists a session's checkpoints, oldest first; grep (when set)
// keeps those whose name or annotation contains it, case-insensitively.
func (c *Client) Checkpoints(ctx context.Context, sessionID, grep string) ([]*prsm.Checkpoint, error) {
	path := withQuery(api.RouteListCheckpoints.Path(sessionID), "grep", grep)
	var list []*prsm.Checkpoint
	if err := c.call(ctx, path, api.RouteListCheckpoints, nil, &list); err != nil {
		return nil, err
	}
	return list, nil
}

// CreateCheckpoint makes a named checkpoint.
func (c *Client) CreateCheckpoint(ctx context.Context, sessionID string, req api.CheckpointRequest) (*prsm.Checkpoint, error) {
	var cp prsm.Checkpoint
	return &cp, c.call(ctx, api.RouteCreateCheckpoint.Path(sessionID), api.RouteCreateCheckpoint, req, &cp)
}

// Checkpoint returns one checkpoint by id or unique prefix.
func (c *Client) Checkpoint(ctx context.Context, sessionID, id string) (*prsm.Checkpoint, error) {
	var cp prsm.Checkpoint
	return &cp, c.call(ctx, api.RouteGetCheckpoint.Path(sessionID, id), api.RouteGetCheckpoint, nil, &cp)
}

// Annotate replaces a checkpoint's annotation.
func (c *Client) Annotate(ctx context.Context, sessionID, id, annotation string) (*prsm.Checkpoint, error) {
	var cp prsm.Checkpoint
	body := api.AnnotateRequest{Annotation: &annotation}
	return &cp, c.call(ctx, api.RouteAnnotateCheckpoint.Path(sessionID, id), api.RouteAnnotateCheckpoint, body, &cp)
}

// DeleteCheckpoint deletes a checkpoint and answers with what it was.
func (c *Client) DeleteCheckpoint(ctx context.Context, sessionID, id string) (*prsm.Checkpoint, error) {
	var cp prsm.Checkpoint
	return &cp, c.call(ctx, api.RouteDeleteCheckpoint.Path(sessionID, id), api.RouteDeleteCheckpoint, nil, &cp)
}

// CheckpointDiff compares checkpoint a with checkpoint b, or with the
// worktree's current state when b is empty.
func (c *Client) CheckpointDiff(ctx context.Context, sessionID, a, b string) (*api.CheckpointDiff, error) {
	route, path := api.RouteCheckpointDiff, api.RouteCheckpointDiff.Path(sessionID, a)
	if b != "" {
		route, path = api.RouteCheckpointDiffBetween, api.RouteCheckpointDiffBetween.Path(sessionID, a, b)
	}
	var d api.CheckpointDiff
	return &d, c.call(ctx, path, route, nil, &d)
}

// RewindPreview is the plan of rolling the session back to checkpoint id.
func (c *Client) RewindPreview(ctx context.Context, sessionID, id string) (*api.Plan, error) {
	var p api.Plan
	return &p, c.call(ctx, api.RouteRewindPreview.Path(sessionID, id), api.RouteRewindPreview, nil, &p)
}

// Rewind rolls the session back to checkpoint id (only plans it when
// dryRun). The answer of a rollback that ran names its safety checkpoint.
func (c *Client) Rewind(ctx context.Context, sessionID, id string, dryRun bool) (*api.Plan, error) {
	return c.RewindWith(ctx, sessionID, id, api.RewindRequest{DryRun: dryRun})
}

// RewindWith is Rewind with the whole request (a note: Say).
func (c *Client) RewindWith(ctx context.Context, sessionID, id string, req api.RewindRequest) (*api.Plan, error) {
	var p api.Plan
	return &p, c.call(ctx, api.RouteRewind.Path(sessionID, id), api.RouteRewind, req, &p)
}

// Rollback undoes the records one selector of req picks (only plans it
// when req.DryRun).
func (c *Client) Rollback(ctx context.Context, sessionID string, req api.RollbackRequest) (*api.Plan, error) {
	var p api.Plan
	return &p, c.call(ctx, api.RouteRollback.Path(sessionID), api.RouteRollback, req, &p)
}
