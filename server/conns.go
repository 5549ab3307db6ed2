package server

import (
	"container/list"
	"context"
	"net"
	"net/http"
	stdsync "sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/net/netutil"
)

// The server's connections are bounded, so that a local process without
// the token cannot take every descriptor the server has (it did: 21,000
// connections that each sent GET /healthz and held on, and the CLI could
// no longer connect):
//
//   - in all, by MaxConns (netutil.LimitListener: past it a new
//     connection waits in the kernel's queue, holding no descriptor of
//     ours, until one closes);
//   - per kind of client: every client is on loopback, so an address
//     tells nothing apart, and a connection is known only by what it
//     sent. One that has not shown the server's token or the review
//     page's login cookie is untrusted, a hook token's too (the agent
//     holds that one); at most MaxUntrustedConns are kept, and a new
//     one closes the oldest (connGuard). A flood then only ever closes
//     its own connections, while the CLI's, which sends its token at
//     once, gets through;
//   - in time: a request's header must come within ReadHeaderTimeout, a
//     kept-alive connection goes after IdleTimeout, and an answer to an
//     untrusted connection closes it (Connection: close), so that
//     /healthz holds nothing;
//   - in writing: a write that a client does not read may stall for
//     WriteTimeout at most (writeDeadlines), measured from that write,
//     not from the request, so that the long-lived /events stream and a
//     long bulk operation are not cut.
const (
	defaultIdleTimeout       = 2 * time.Minute
	defaultReadHeaderTimeout = 10 * time.Second
	defaultWriteTimeout      = time.Minute
	defaultMaxConns          = 1024
	defaultMaxUntrusted      = 128
)

// connGuard is the server's listener: at most maxConns connections in all
// (ln is a netutil.LimitListener), of which at most maxUntrusted have not
// yet authenticated; past that, each new connection closes the oldest
// untrusted one.
type connGuard struct {
	net.Listener
	maxUntrusted int
	mu           stdsync.Mutex
	untrusted    list.List // of *guardedConn, oldest first
}

func newConnGuard(ln net.Listener, maxConns, maxUntrusted int) *connGuard {
	return &connGuard{Listener: netutil.LimitListener(ln, maxConns), maxUntrusted: maxUntrusted}
}

// guardedConn is one accepted connection; elem is its place among the
// untrusted ones, nil once it has authenticated or closed.
type guardedConn struct {
	net.Conn
	g    *connGuard
	elem *list.Element
}

func (g *connGuard) Accept() (net.Conn, error) {
	c, err := g.Listener.Accept()
	if err != nil {
		return nil, err
	}
	gc := &guardedConn{Conn: c, g: g}
	var evicted []net.Conn
	g.mu.Lock()
	gc.elem = g.untrusted.PushBack(gc)
	for g.untrusted.Len() > g.maxUntrusted {
		old := g.untrusted.Remove(g.untrusted.Front()).(*guardedConn)
		old.elem = nil
		evicted = append(evicted, old.Conn)
	}
	g.mu.Unlock()
	// Closing the socket ends the server's read of it (and frees its place
	// under the limit at once); net/http closes it again, which does
	// nothing.
	for _, c := range evicted {
		c.Close()
	}
	return gc, nil
}

// trust takes the connection off the untrusted ones: it authenticated.
func (c *guardedConn) trust() {
	c.g.mu.Lock()
	if c.elem != nil {
		c.g.untrusted.Remove(c.elem)
		c.elem = nil
	}
	c.g.mu.Unlock()
}

// trusted reports whether the connection has authenticated.
func (c *guardedConn) trusted() bool {
	c.g.mu.Lock()
	defer c.g.mu.Unlock()
	return c.elem == nil
}

func (c *guardedConn) Close() error {
	c.g.mu.Lock()
	if c.elem != nil {
		c.g.untrusted.Remove(c.elem)
		c.elem = nil
	}
	c.g.mu.Unlock()
	return c.Conn.Close()
}

// connKey is the context key of a request's *guardedConn.
type connKey struct{}

// connContext hands each request its connection (http.Server.ConnContext).
func connContext(ctx context.Context, c net.Conn) context.Context {
	if gc, ok := c.(*guardedConn); ok {
		return context.WithValue(ctx, connKey{}, gc)
	}
	return ctx
}

func connOf(c echo.Context) *guardedConn {
	gc, _ := c.Request().Context().Value(connKey{}).(*guardedConn)
	return gc
}

// markTrusted records that the request's connection authenticated with
// the server's token or the review page's cookie.
func markTrusted(c echo.Context) {
	if gc := connOf(c); gc != nil {
		gc.trust()
	}
}

// closeUntrusted has net/http close a connection that has not
// authenticated once its answer is out: /healthz, the login page, a
// refusal, a hook token's request. Such a connection is never kept
// alive, so it is never reused after it was closed to make room. It is
// the first middleware, so that every answer passes it.
func closeUntrusted(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if gc := connOf(c); gc != nil {
			c.Response().Before(func() {
				if !gc.trusted() {
					c.Response().Header().Set("Connection", "close")
				}
			})
		}
		return next(c)
	}
}

// writeDeadlines gives every write of an answer d to go out, from the
// moment it starts: a client that stops reading is cut off after d,
// however long the answer streams (/events) or took to make.
func writeDeadlines(d time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			res := c.Response()
			w := &deadlineWriter{ResponseWriter: res.Writer, rc: http.NewResponseController(res.Writer), d: d}
			w.extend() // a 100 Continue, before the handler writes
			res.Writer = w
			return next(c)
		}
	}
}

// deadlineWriter sets the connection's write deadline d ahead before each
// write and flush.
type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (w *deadlineWriter) extend() { w.rc.SetWriteDeadline(time.Now().Add(w.d)) }

func (w *deadlineWriter) WriteHeader(code int) {
	w.extend()
	w.ResponseWriter.WriteHeader(code)
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.extend()
	return w.ResponseWriter.Write(b)
}

// Flush is http.Flusher's: the SSE stream flushes every event.
func (w *deadlineWriter) Flush() {
	w.extend()
	w.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
