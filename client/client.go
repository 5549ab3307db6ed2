// Package client is the typed Go client of prsm's HTTP API. The CLI and the
// tests talk to a server only through it, so every route has one
// caller-side shape. The hook adapters (package hook) send their four
// requests through internal/wire instead, which does without net/http's
// cost at a process's start; the error answer, the busy retry and the
// finding of a live server are wire's, shared.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/wire"
)

// Client calls one prsm server.
type Client struct {
	BaseURL string
	Token   string
	HTTP    *http.Client
}

// New returns a client for the server described by info.
func New(info *api.Info) *Client {
	return &Client{BaseURL: "http://" + info.Addr, Token: info.Token, HTTP: &http.Client{Timeout: 10 * time.Minute}}
}

// APIError is an error answer of the server (an api.ErrorBody), with its
// status and Retry-After; Busy tells a busy store's answer, which the
// client sends again (wire.RetryBusy). It is the lean hook's error type
// too, so that a caller tells prsm's answers apart one way.
type APIError = wire.Error

// Do sends a request with an optional JSON body and decodes a JSON answer
// into out (when non-nil).
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	return c.do(ctx, method, path, nil, body, out)
}

// do is Do with headers added to the request.
// call sends a request of route, whose path (with its query, if any) is
// path: path is built from route by the caller, which knows the route's
// parameters.
func (c *Client) call(ctx context.Context, path string, route api.RouteID, body, out any) error {
	return c.do(ctx, route.Method(), path, nil, body, out)
}

// withQuery is path with ?key=value added, value escaped; path itself
// when value is empty.
func withQuery(path, key, value string) string {
	if value == "" {
		return path
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + key + "=" + url.QueryEscape(value)
}

func (c *Client) do(ctx context.Context, method, path string, header http.Header, body, out any) error {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return err
		}
	}
	return wire.RetryBusy(ctx, func() error {
		req, err := c.newRequest(ctx, method, path, b)
		if err != nil {
			return err
		}
		for k, vs := range header {
			req.Header[k] = vs
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
// decodes the body into out (when non-nil), as wire.Decode does.
func decodeAnswer(method, path string, resp *http.Response, data []byte, out any) error {
	return wire.Decode(method, path, resp.StatusCode, textproto.MIMEHeader(resp.Header), data, out)
}

// Healthz checks that the server answers.
func (c *Client) Healthz(ctx context.Context) error {
	return c.call(ctx, api.RouteHealthz.Path(), api.RouteHealthz, nil, nil)
}

// Status returns the server's summary.
func (c *Client) Status(ctx context.Context) (*api.StatusResponse, error) {
	var st api.StatusResponse
	return &st, c.call(ctx, api.RouteStatus.Path(), api.RouteStatus, nil, &st)
}

// Shutdown asks the server to stop.
func (c *Client) Shutdown(ctx context.Context) error {
	return c.call(ctx, api.RouteShutdown.Path(), api.RouteShutdown, nil, nil)
}

// Sessions lists sessions; status may be "", "active" or "ended".
func (c *Client) Sessions(ctx context.Context, status string) ([]prsm.Session, error) {
	var list []prsm.Session
	path := withQuery(api.RouteListSessions.Path(), "status", status)
	return list, c.call(ctx, path, api.RouteListSessions, nil, &list)
}

// StartSession starts a session.
func (c *Client) StartSession(ctx context.Context, req api.StartRequest) (*prsm.Session, error) {
	var s prsm.Session
	return &s, c.call(ctx, api.RouteStartSession.Path(), api.RouteStartSession, req, &s)
}

// Session returns a session by id or unique prefix.
func (c *Client) Session(ctx context.Context, id string) (*prsm.Session, error) {
	var s prsm.Session
	return &s, c.call(ctx, api.RouteGetSession.Path(id), api.RouteGetSession, nil, &s)
}

// EndSession ends a session; discard drops unreviewed work.
func (c *Client) EndSession(ctx context.Context, id string, discard bool) (*prsm.Session, error) {
	var s prsm.Session
	path := api.RouteEndSession.Path(id)
	if discard {
		path = withQuery(path, "discard", "true")
	}
	return &s, c.call(ctx, path, api.RouteEndSession, nil, &s)
}

// HookToken mints a hook token of session id: one that sends only that
// session's hook events, for an agent's environment (`prsm run`).
func (c *Client) HookToken(ctx context.Context, id string) (*api.HookToken, error) {
	var ht api.HookToken
	return &ht, c.call(ctx, api.RouteMintHookToken.Path(id), api.RouteMintHookToken, nil, &ht)
}

// LiveServer returns a client of the server the server.json of the
// project dir dir describes, if it answers with the token it wrote
// (wire.LiveServer).
func LiveServer(ctx context.Context, dir string) (*api.Info, *Client, bool) {
	info, ok := wire.LiveServer(ctx, dir)
	if !ok {
		return nil, nil, false
	}
	return info, New(info), true
}
