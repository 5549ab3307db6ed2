package client

import (
	"context"
	"net/http"

	"github.com/prsm-dev/prsm/engine"
)

// GC applies retention and reports what was freed.
func (c *Client) GC(ctx context.Context, req engine.GCRequest) (*engine.GCReport, error) {
	var rep engine.GCReport
	return &rep, c.Do(ctx, http.MethodPost, "/gc", req, &rep)
}
