// Package client is the typed Go client of prsm's HTTP API. The CLI, the hook
// adapter and the tests talk to a server only through it, so every route has
// one caller-side shape.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// Client calls one prsm server.
type Client struct {
	BaseURL string
	Token   string
	HTTP    *http.Client
	// hot keeps the connection of the tool-call requests (see doHot);
	// nil: they go through HTTP like the others.
	hot *hotConns
}

// New returns a client for the server described by info.
func New(info *api.Info) *Client {
	return &Client{BaseURL: "http://" + info.Addr, Token: info.Token, HTTP: &http.Client{Timeout: 10 * time.Minute},
		hot: &hotConns{}}
}

// APIError is an error answer of the server (an api.ErrorBody), with its
// status.
type APIError struct {
	Status int
	Code   string
	Msg    string
	Hint   string
	// RetryAfter is what the answer's Retry-After header said (in
	// seconds); zero without one.
	RetryAfter time.Duration
}

func (e *APIError) Error() string { return e.Msg }

// Busy reports whether the answer is a busy store's: its database stayed
// locked past the server's wait, nothing was done, and the same request
// may be sent again (the client does, see retryBusy).
func (e *APIError) Busy() bool {
	return e.Status == http.StatusServiceUnavailable && e.Code == "busy"
}

// How the client sends a request again after a busy store's answer: it
// waits what the answer's Retry-After says (firstBusyWait without one),
// twice as long after each further busy answer, maxBusyWait at most, and
// gives up, returning the busy answer, when another wait would end past
// busyBudget after the first request or past the context's deadline (the
// hook's is a few seconds). The server answers busy only after its own
// wait for the lock, five seconds of sqlite's busy_timeout.
const (
	firstBusyWait = 250 * time.Millisecond
	maxBusyWait   = 4 * time.Second
	busyBudget    = 30 * time.Second
)

// retryBusy runs send, and again while it returns a busy store's answer
// and the time allows (busyWait).
func retryBusy(ctx context.Context, send func() error) error {
	start := time.Now()
	for n := 0; ; n++ {
		err := send()
		var ae *APIError
		if !errors.As(err, &ae) || !ae.Busy() {
			return err
		}
		deadline, _ := ctx.Deadline()
		wait, ok := busyWait(ae.RetryAfter, n, start, time.Now(), deadline)
		if !ok {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// busyWait is the wait before the request is sent again after its n-th
// busy answer (from 0), which said retryAfter, when the first was sent at
// start and it is now now; false when the client gives up instead: the
// wait would end past busyBudget after start or at or past deadline (zero
// for none).
func busyWait(retryAfter time.Duration, n int, start, now, deadline time.Time) (time.Duration, bool) {
	wait := retryAfter
	if wait <= 0 {
		wait = firstBusyWait
	}
	for i := 0; i < n && wait < maxBusyWait; i++ {
		wait *= 2
	}
	wait = min(wait, maxBusyWait)
	end := now.Add(wait)
	if end.Sub(start) > busyBudget || (!deadline.IsZero() && !end.Before(deadline)) {
		return 0, false
	}
	return wait, true
}

// Do sends a request with an optional JSON body and decodes a JSON answer
// into out (when non-nil).
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return err
		}
	}
	return retryBusy(ctx, func() error {
		req, err := c.newRequest(ctx, method, path, b)
		if err != nil {
			return err
		}
		resp, err := c.HTTP.Do(req)
		if err != nil {
			return fmt.Errorf("reach prsm server: %w", err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			return fmt.Errorf("read answer of %s %s: %w", method, path, err)
		}
		return decodeAnswer(method, path, resp, data, out)
	})
}

// newRequest builds a request to the server with the client's token; a
// non-nil body is sent as JSON.
func (c *Client) newRequest(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	return req, nil
}

// decodeAnswer turns an answer's status and body into an *APIError, or
// decodes the body into out (when non-nil).
func decodeAnswer(method, path string, resp *http.Response, data []byte, out any) error {
	if resp.StatusCode >= 400 {
		ae := &APIError{Status: resp.StatusCode}
		var body api.ErrorBody
		if json.Unmarshal(data, &body) == nil {
			ae.Code, ae.Msg, ae.Hint = body.Code, body.Error, body.Hint
		}
		if ae.Msg == "" {
			ae.Msg = fmt.Sprintf("%s %s: %s", method, path, resp.Status)
		}
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			ae.RetryAfter = time.Duration(secs) * time.Second
		}
		return ae
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("decode answer of %s %s: %w", method, path, err)
		}
	}
	return nil
}

// Healthz checks that the server answers.
func (c *Client) Healthz(ctx context.Context) error {
	return c.Do(ctx, http.MethodGet, "/healthz", nil, nil)
}

// Status returns the server's summary.
func (c *Client) Status(ctx context.Context) (*api.StatusResponse, error) {
	var st api.StatusResponse
	return &st, c.Do(ctx, http.MethodGet, "/status", nil, &st)
}

// Shutdown asks the server to stop.
func (c *Client) Shutdown(ctx context.Context) error {
	return c.Do(ctx, http.MethodPost, "/shutdown", nil, nil)
}

// Sessions lists sessions; status may be "", "active" or "ended".
func (c *Client) Sessions(ctx context.Context, status string) ([]prsm.Session, error) {
	var list []prsm.Session
	path := "/sessions"
	if status != "" {
		path += "?status=" + url.QueryEscape(status)
	}
	return list, c.Do(ctx, http.MethodGet, path, nil, &list)
}

// StartSession starts a session.
func (c *Client) StartSession(ctx context.Context, req api.StartRequest) (*prsm.Session, error) {
	var s prsm.Session
	return &s, c.Do(ctx, http.MethodPost, "/sessions", req, &s)
}

// Session returns a session by id or unique prefix.
func (c *Client) Session(ctx context.Context, id string) (*prsm.Session, error) {
	var s prsm.Session
	return &s, c.Do(ctx, http.MethodGet, "/sessions/"+url.PathEscape(id), nil, &s)
}

// EndSession ends a session; discard drops unreviewed work.
func (c *Client) EndSession(ctx context.Context, id string, discard bool) (*prsm.Session, error) {
	var s prsm.Session
	path := "/sessions/" + url.PathEscape(id)
	if discard {
		path += "?discard=true"
	}
	return &s, c.Do(ctx, http.MethodDelete, path, nil, &s)
}
