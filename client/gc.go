package client

import (
	"context"

	"github.com/prsm-dev/prsm/api"
)

// GC applies retention and reports what was freed.
func (c *Client) GC(ctx context.Context, req api.GCRequest) (*api.GCReport, error) {
	var rep api.GCReport
	return &rep, c.call(ctx, api.RouteGC.Path(), api.RouteGC, req, &rep)
}
