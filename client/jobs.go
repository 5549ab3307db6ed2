package client

import (
	"context"
	"net/http"
	"time"

	"github.com/prsm-dev/prsm/api"
)

// async asks for the answer a job gives as it starts (202 and the job),
// not the one at its end.
var async = http.Header{"Prefer": {"respond-async"}}

// StartBulk starts accepting or rejecting every pending change of a
// session (of one file when file is set) and returns its job as soon as
// it runs; WaitJob follows it.
func (c *Client) StartBulk(ctx context.Context, sessionID string, accept bool, file string) (*api.Job, error) {
	return c.StartBulkWith(ctx, sessionID, accept, file, api.BulkRequest{})
}

// StartBulkWith is StartBulk with a note for the agent (req.Say).
func (c *Client) StartBulkWith(ctx context.Context, sessionID string, accept bool, file string, req api.BulkRequest) (*api.Job, error) {
	route := api.RouteRejectAll
	if accept {
		route = api.RouteAcceptAll
	}
	var job api.Job
	return &job, c.do(ctx, route.Method(), withFile(route.Path(sessionID), file), async, req, &job)
}

// StartDiscard starts ending a session with its unreviewed work
// discarded and returns the job as soon as it runs.
func (c *Client) StartDiscard(ctx context.Context, sessionID string) (*api.Job, error) {
	var job api.Job
	return &job, c.do(ctx, api.RouteEndSession.Method(), withQuery(api.RouteEndSession.Path(sessionID), "discard", "true"), async, nil, &job)
}

// Job reads a job as it stands.
func (c *Client) Job(ctx context.Context, id string) (*api.Job, error) {
	var job api.Job
	return &job, c.call(ctx, api.RouteGetJob.Path(id), api.RouteGetJob, nil, &job)
}

// WaitJob reads job id every interval until it ends, and hands each
// reading to progress (when not nil); it returns the ended job. A failed
// job is returned with its Error, not as an error: what it decided stays
// decided.
func (c *Client) WaitJob(ctx context.Context, id string, every time.Duration, progress func(*api.Job)) (*api.Job, error) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		job, err := c.Job(ctx, id)
		if err != nil {
			return nil, err
		}
		if progress != nil {
			progress(job)
		}
		if job.State != api.JobRunning {
			return job, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}
