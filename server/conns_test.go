package server_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/server"
)

// openFDs counts this process's open descriptors (Linux).
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// waitClosed reads c until the server closes it (EOF, or a reset), or
// until deadline; it reports whether the server closed it.
func waitClosed(c net.Conn, deadline time.Time) bool {
	c.SetReadDeadline(deadline)
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// A local process without the token opens far more connections than the
// server keeps for clients that have not authenticated: half of them ask
// GET /healthz and hold on, half send nothing. The server closes its
// answers' connections and the oldest silent ones, so that it holds no
// more than its cap of them; the CLI's request with the token gets
// through all the while, and this process's descriptors (both ends of
// every connection) stay bounded by the cap, not by the flood.
func TestConnectionFlood(t *testing.T) {
	const maxUntrusted, flood = 16, 200
	ts := start(t, server.Config{MaxUntrustedConns: maxUntrusted, MaxConns: 64,
		// long: only the cap may close the silent connections here
		ReadHeaderTimeout: 5 * time.Minute, IdleTimeout: 5 * time.Minute})
	addr := strings.TrimPrefix(ts.url, "http://")
	before := openFDs(t)

	conns := make([]net.Conn, 0, flood)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < flood; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
		if i%2 == 0 {
			if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\n\r\n"); err != nil {
				t.Fatalf("connection %d: %v", i, err)
			}
		}
	}

	// The CLI's request, with the token, while the flood holds on.
	cl := client.New(&api.Info{Addr: addr, Token: ts.token})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := cl.Status(ctx); err != nil {
		t.Fatalf("the CLI's request during the flood: %v", err)
	}

	// Every connection the server closed reads to its end at once; those
	// it keeps block. Each is closed here as soon as the server closed it.
	var mu stdsync.Mutex
	open := map[int]bool{}
	var wg stdsync.WaitGroup
	deadline := time.Now().Add(time.Minute)
	for i := range conns {
		open[i] = true
	}
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if waitClosed(c, deadline) {
				c.Close()
				mu.Lock()
				delete(open, i)
				mu.Unlock()
			}
		}()
	}
	// Wait until no more than the cap are left open (or the deadline).
	for {
		mu.Lock()
		n := len(open)
		mu.Unlock()
		if n <= maxUntrusted || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	left := len(open)
	mu.Unlock()
	if left > maxUntrusted {
		t.Fatalf("%d of %d unauthenticated connections still open, want at most %d", left, flood, maxUntrusted)
	}
	// Both ends of what is left, and some slack for the server's own
	// (git, sqlite, the client's kept connection).
	if fds, limit := openFDs(t), before+2*maxUntrusted+24; fds > limit {
		t.Errorf("%d descriptors open after a flood of %d connections, want at most %d (%d before)", fds, flood, limit, before)
	}
	// The CLI still gets through.
	if _, err := cl.Status(ctx); err != nil {
		t.Fatalf("the CLI's request after the flood: %v", err)
	}
	for _, c := range conns {
		c.SetReadDeadline(time.Unix(1, 0)) // ends the readers still waiting
	}
	wg.Wait()
}

// Connections do not stay forever: one whose request header never comes
// goes after ReadHeaderTimeout, an authenticated kept-alive one after
// IdleTimeout, and one that has not authenticated right after its answer
// (Connection: close). The event stream lives on past WriteTimeout, as
// each of its writes gets its own.
func TestConnectionTimeouts(t *testing.T) {
	const short = 200 * time.Millisecond
	ts := start(t, server.Config{ReadHeaderTimeout: short, IdleTimeout: short, WriteTimeout: short, Heartbeat: short / 4})
	addr := strings.TrimPrefix(ts.url, "http://")
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	ask := func(c net.Conn, req string) *http.Response {
		t.Helper()
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(time.Minute))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	deadline := func() time.Time { return time.Now().Add(time.Minute) }

	silent := dial()
	if !waitClosed(silent, deadline()) {
		t.Error("a connection that sent nothing is still open")
	}

	kept := dial()
	resp := ask(kept, "GET /status HTTP/1.1\r\nHost: "+addr+"\r\nAuthorization: Bearer "+ts.token+"\r\n\r\n")
	if resp.StatusCode != 200 || resp.Close {
		t.Fatalf("GET /status with the token: %d, close %v; want 200 and the connection kept", resp.StatusCode, resp.Close)
	}
	if !waitClosed(kept, deadline()) {
		t.Error("an idle kept-alive connection is still open")
	}

	for _, req := range []string{
		"GET /healthz HTTP/1.1\r\nHost: " + addr + "\r\n\r\n",
		"GET /status HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer wrong\r\n\r\n",
	} {
		c := dial()
		resp := ask(c, req)
		if !resp.Close { // Connection: close, which ReadResponse takes off the header
			t.Errorf("%q: %d, the connection kept; want it closed", req, resp.StatusCode)
		}
		if !waitClosed(c, deadline()) {
			t.Errorf("%q: the connection is still open", req)
		}
	}

	// The event stream: heartbeats keep coming for 10 times WriteTimeout
	// and more.
	events := ts.events(t)
	rd := bufio.NewReader(events.Body)
	since, beats := time.Now(), 0
	for time.Since(since) < 10*short || beats < 10 {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("the event stream ended after %v and %d heartbeats: %v", time.Since(since), beats, err)
		}
		if strings.HasPrefix(line, ":") {
			beats++
		}
	}
}
