package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	stdsync "sync"
	"time"

	"github.com/prsm-dev/prsm/internal/wire"
)

// hotConns keeps one connection for the requests an agent's hooks send
// around every tool it runs, the capture and the complete (doHot).
type hotConns struct {
	mu   stdsync.Mutex
	idle *hotConn
}

// hotConn is a kept-alive connection to the server that its caller writes
// requests to and reads answers from itself.
type hotConn struct {
	conn net.Conn
	br   *bufio.Reader
}

// doHot is Do for a POST of the tool-call hooks. The request and its
// answer are written and read by the calling goroutine on a kept
// connection, with net/http's own encoding (Request.Write and
// ReadResponse) but not its Transport: the Transport hands each request
// and each answer over between goroutines of its own, and on a VM whose
// idle CPUs halt every hand-over may wait for a CPU to wake. Side by side
// on the 2-core VM of the benchmarks, after 300 µs idle, a request with
// its answer took 240 to 265 µs through the Transport and 170 to 190 µs
// this way.
//
// Both requests may be sent twice: a repeated capture is a no-op and a
// repeated complete answers the records stored. So a request that fails
// on a kept connection (the server restarted, or closed it) is sent once
// more on a new one, unless it timed out; and one that a busy store
// answered is sent again, as Do sends any (wire.RetryBusy).
func (c *Client) doHot(ctx context.Context, path string, body, out any) error {
	u, err := url.Parse(c.BaseURL)
	if c.hot == nil || err != nil || u.Scheme != "http" {
		return c.Do(ctx, http.MethodPost, path, body, out)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return wire.RetryBusy(ctx, func() error { return c.sendHot(ctx, u.Host, path, b, out) })
}

// sendHot sends the request of doHot once, on the kept connection or, if
// that fails, on a new one.
func (c *Client) sendHot(ctx context.Context, host, path string, b []byte, out any) error {
	for try := 0; ; try++ {
		req, err := c.newRequest(ctx, http.MethodPost, path, b)
		if err != nil {
			return err
		}
		hc, kept, err := c.hot.take(ctx, host)
		if err != nil {
			return fmt.Errorf("reach prsm server: %w", err)
		}
		resp, data, err := hc.roundTrip(ctx, req, c.timeout())
		if err != nil {
			hc.conn.Close()
			if kept && try == 0 && ctx.Err() == nil && !isTimeout(err) {
				continue
			}
			return fmt.Errorf("reach prsm server: %w", err)
		}
		if resp.Close {
			hc.conn.Close()
		} else {
			c.hot.put(hc)
		}
		return decodeAnswer(http.MethodPost, path, resp, data, out)
	}
}

// isTimeout reports whether err is a deadline passing: the server may
// still be at work on the request, which is then not sent again.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// timeout is the client's time limit per request (none when 0).
func (c *Client) timeout() time.Duration {
	if c.HTTP == nil {
		return 0
	}
	return c.HTTP.Timeout
}

// take returns the kept connection (kept true) or a new one to addr.
func (h *hotConns) take(ctx context.Context, addr string) (hc *hotConn, kept bool, err error) {
	h.mu.Lock()
	hc, h.idle = h.idle, nil
	h.mu.Unlock()
	if hc != nil {
		return hc, true, nil
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, false, err
	}
	return &hotConn{conn: conn, br: bufio.NewReader(conn)}, false, nil
}

// put keeps hc for the next request; a connection kept already (by a
// concurrent request) stays, and hc is closed.
func (h *hotConns) put(hc *hotConn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.idle == nil {
		h.idle = hc
		return
	}
	hc.conn.Close()
}

// roundTrip writes req and reads its whole answer, within timeout (none
// when 0) and until ctx ends.
func (hc *hotConn) roundTrip(ctx context.Context, req *http.Request, timeout time.Duration) (*http.Response, []byte, error) {
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline = d
	}
	if err := hc.conn.SetDeadline(deadline); err != nil {
		return nil, nil, err
	}
	// An ended context stops a blocked write or read at once, and is
	// the error then.
	stop := context.AfterFunc(ctx, func() { hc.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	fail := func(err error) (*http.Response, []byte, error) {
		if cerr := ctx.Err(); cerr != nil {
			return nil, nil, cerr
		}
		return nil, nil, err
	}
	if err := req.Write(hc.conn); err != nil {
		return fail(err)
	}
	resp, err := http.ReadResponse(hc.br, req)
	if err != nil {
		return fail(err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return fail(err)
	}
	if !stop() {
		return fail(context.Canceled) // the context ended meanwhile
	}
	return resp, data, hc.conn.SetDeadline(time.Time{})
}
