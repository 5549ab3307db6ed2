package client

import (
	"context"

	"github.com/prsm-dev/prsm/api"
)

// Flush asks the server to record at once what changed in the session's
// worktree that no tool call claimed (as a Watch tool call).
func (c *Client) Flush(ctx context.Context, sessionID string) (*api.Records, error) {
	var recs api.Records
	return &recs, c.call(ctx, api.RouteFlush.Path(sessionID), api.RouteFlush, nil, &recs)
}
