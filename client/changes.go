package client

import (
	"context"
	"fmt"
	"io"
	"net/url"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/wire"
)

// doRaw sends a request without a body and returns the raw answer; error
// answers are decoded like Do's.
func (c *Client) doRaw(ctx context.Context, method, path string) ([]byte, error) {
	var data []byte
	err := wire.RetryBusy(ctx, func() error {
		req, err := c.newRequest(ctx, method, path, nil)
		if err != nil {
			return err
		}
		resp, err := c.HTTP.Do(req)
		if err != nil {
			return fmt.Errorf("reach prsm server: %w", err)
		}
		defer resp.Body.Close()
		if data, err = io.ReadAll(resp.Body); err != nil {
			return fmt.Errorf("read answer of %s %s: %w", method, path, err)
		}
		return decodeAnswer(method, path, resp, data, nil)
	})
	if err != nil {
		return nil, err
	}
	return data, nil
}

// withFile appends ?file= when file is set.
func withFile(path, file string) string { return withQuery(path, "file", file) }

// StartToolCall is the pre-tool capture of a tool call.
func (c *Client) StartToolCall(ctx context.Context, sessionID string, req api.ToolCallRequest) (*api.ToolCallAnswer, error) {
	var ans api.ToolCallAnswer
	return &ans, c.Do(ctx, api.RouteStartToolCall.Method(), api.RouteStartToolCall.Path(sessionID), req, &ans)
}

// CompleteToolCall completes a tool call; it answers once the records are
// stored and applied (or marked conflict).
func (c *Client) CompleteToolCall(ctx context.Context, sessionID, toolCallID string, req api.CompleteRequest) (*api.Records, error) {
	var recs api.Records
	path := api.RouteCompleteToolCall.Path(sessionID, toolCallID)
	return &recs, c.Do(ctx, api.RouteCompleteToolCall.Method(), path, req, &recs)
}

// Changes lists a session's records; status and file filter when set.
func (c *Client) Changes(ctx context.Context, sessionID, status, file string) ([]*prsm.Record, error) {
	q := url.Values{}
	if status != "" {
		q.Set("status", status)
	}
	if file != "" {
		q.Set("file", file)
	}
	path := api.RouteListChanges.Path(sessionID)
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var list []*prsm.Record
	if err := c.call(ctx, path, api.RouteListChanges, nil, &list); err != nil {
		return nil, err
	}
	return list, nil
}

// ChangesOf returns the record id, or every record of the tool call id.
func (c *Client) ChangesOf(ctx context.Context, sessionID, id string) (*api.Records, error) {
	var recs api.Records
	return &recs, c.call(ctx, api.RouteGetChange.Path(sessionID, id), api.RouteGetChange, nil, &recs)
}

// Diff returns the unified diff of the record id (or of the tool call id).
func (c *Client) Diff(ctx context.Context, sessionID, id string) (string, error) {
	b, err := c.doRaw(ctx, api.RouteChangeDiff.Method(), api.RouteChangeDiff.Path(sessionID, id))
	return string(b), err
}

// Content returns one side ("before" or "after") of the record id.
func (c *Client) Content(ctx context.Context, sessionID, id, side string) ([]byte, error) {
	path := withQuery(api.RouteChangeContent.Path(sessionID, id), "side", side)
	return c.doRaw(ctx, api.RouteChangeContent.Method(), path)
}

// Accept accepts the record id (or every record of the tool call id); in
// review mode it is refused (needs_earlier) when it would apply earlier
// pending records of the file first (AcceptWith says whether to).
func (c *Client) Accept(ctx context.Context, sessionID, id string) (*api.Records, error) {
	var recs api.Records
	return &recs, c.call(ctx, api.RouteAccept.Path(sessionID, id), api.RouteAccept, nil, &recs)
}

// AcceptWith is Accept with its options: WithEarlier, and DryRun, which
// answers what the accept would take (Records.Earlier) and changes
// nothing.
func (c *Client) AcceptWith(ctx context.Context, sessionID, id string, req api.AcceptRequest) (*api.Records, error) {
	var recs api.Records
	return &recs, c.call(ctx, api.RouteAccept.Path(sessionID, id), api.RouteAccept, req, &recs)
}

// Reject rejects the record id (or every record of the tool call id) and
// the later pending records of the same file.
func (c *Client) Reject(ctx context.Context, sessionID, id string) (*api.Records, error) {
	return c.RejectWith(ctx, sessionID, id, api.RejectRequest{})
}

// RejectWith is Reject with a note for the agent (req.Say).
func (c *Client) RejectWith(ctx context.Context, sessionID, id string, req api.RejectRequest) (*api.Records, error) {
	var recs api.Records
	return &recs, c.call(ctx, api.RouteReject.Path(sessionID, id), api.RouteReject, req, &recs)
}

// Resolve settles the change id in conflict: how is mine (reject it,
// keep the workspace), agent (the workspace takes the agent's version) or
// markers (both, between conflict markers, for the editor).
func (c *Client) Resolve(ctx context.Context, sessionID, id, how string) (*api.Records, error) {
	return c.ResolveWith(ctx, sessionID, id, api.ResolveRequest{How: how})
}

// ResolveWith is Resolve with the whole request (a note: Say).
func (c *Client) ResolveWith(ctx context.Context, sessionID, id string, req api.ResolveRequest) (*api.Records, error) {
	var recs api.Records
	return &recs, c.call(ctx, api.RouteResolve.Path(sessionID, id), api.RouteResolve, req, &recs)
}

// DecideHunks accepts and rejects hunks of the record id by their
// indexes (a reject cascades to the later hunks it touches: the answer's
// Cascaded).
func (c *Client) DecideHunks(ctx context.Context, sessionID, id string, accept, reject []int) (*api.Records, error) {
	return c.DecideHunksWith(ctx, sessionID, id, api.HunksRequest{Accept: accept, Reject: reject})
}

// DecideHunksWith is DecideHunks with the whole request (WithEarlier).
func (c *Client) DecideHunksWith(ctx context.Context, sessionID, id string, req api.HunksRequest) (*api.Records, error) {
	var recs api.Records
	return &recs, c.call(ctx, api.RouteDecideHunks.Path(sessionID, id), api.RouteDecideHunks, req, &recs)
}

// AcceptAll accepts every pending record of a session (of one file when
// file is set).
func (c *Client) AcceptAll(ctx context.Context, sessionID, file string) (*api.Records, error) {
	return c.BulkWith(ctx, sessionID, true, file, api.BulkRequest{})
}

// RejectAll rejects every pending record of a session (of one file when
// file is set).
func (c *Client) RejectAll(ctx context.Context, sessionID, file string) (*api.Records, error) {
	return c.BulkWith(ctx, sessionID, false, file, api.BulkRequest{})
}

// BulkWith is AcceptAll (accept) or RejectAll with a note for the agent
// (req.Say).
func (c *Client) BulkWith(ctx context.Context, sessionID string, accept bool, file string, req api.BulkRequest) (*api.Records, error) {
	route := api.RouteRejectAll
	if accept {
		route = api.RouteAcceptAll
	}
	var recs api.Records
	return &recs, c.call(ctx, withFile(route.Path(sessionID), file), route, req, &recs)
}

// Comment comments on lines of the record id, without a decision.
func (c *Client) Comment(ctx context.Context, sessionID, id string, req api.CommentRequest) (*prsm.Feedback, error) {
	var f prsm.Feedback
	return &f, c.call(ctx, api.RouteComment.Path(sessionID, id), api.RouteComment, req, &f)
}

// Feedback lists the notes and comments about the record id (every
// record of a tool call id), with what became of each.
func (c *Client) Feedback(ctx context.Context, sessionID, id string) ([]*prsm.Feedback, error) {
	var list []*prsm.Feedback
	return list, c.call(ctx, api.RouteChangeFeedback.Path(sessionID, id), api.RouteChangeFeedback, nil, &list)
}
