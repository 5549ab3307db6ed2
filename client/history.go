package client

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"

	"github.com/prsm-dev/prsm/api"
)

// Blame says who wrote each line of the workspace file path (relative to
// the workspace), lines start to end when they are not 0.
func (c *Client) Blame(ctx context.Context, path string, start, end int) (*api.Blame, error) {
	q := url.Values{"path": {path}}
	if start > 0 {
		q.Set("start", strconv.Itoa(start))
	}
	if end > 0 {
		q.Set("end", strconv.Itoa(end))
	}
	var b api.Blame
	return &b, c.call(ctx, api.RouteBlame.Path()+"?"+q.Encode(), api.RouteBlame, nil, &b)
}

// Commit is prsm commit: the accepted work made commits (or, dry, the
// plan).
func (c *Client) Commit(ctx context.Context, req api.CommitRequest) (*api.CommitReport, error) {
	var rep api.CommitReport
	return &rep, c.call(ctx, api.RouteCommit.Path(), api.RouteCommit, req, &rep)
}

// TraceShow is the trace records of commit rev's note.
func (c *Client) TraceShow(ctx context.Context, rev string) (*api.Traces, error) {
	var t api.Traces
	return &t, c.call(ctx, api.RouteTraceShow.Path(rev), api.RouteTraceShow, nil, &t)
}

// TraceExport is session id's uncommitted work as one Agent Trace record.
func (c *Client) TraceExport(ctx context.Context, id string) (json.RawMessage, error) {
	var t json.RawMessage
	err := c.call(ctx, api.RouteTraceExport.Path(id), api.RouteTraceExport, nil, &t)
	return t, err
}
