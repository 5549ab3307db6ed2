package client

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/api"
)

// hotServer is a real HTTP server on 127.0.0.1 that answers captures as
// prsm does (with the tool call id) and counts requests and connections.
type hotServer struct {
	*httptest.Server
	mu       stdsync.Mutex
	requests []string // tool call ids, in arrival order
	conns    int
	// hold, when set, keeps each answer back until it is closed (or the
	// client goes away).
	hold chan struct{}
}

func newHotServer(t *testing.T) *hotServer {
	t.Helper()
	h := &hotServer{}
	h.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req api.ToolCallRequest
		if r.Header.Get("Authorization") != "Bearer tok" || json.NewDecoder(r.Body).Decode(&req) != nil {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"bad token or body","code":"unauthorized"}`))
			return
		}
		h.mu.Lock()
		h.requests = append(h.requests, req.ToolCallID)
		hold := h.hold
		h.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		}
		if req.ToolCallID == "missing" {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":"no such session","code":"session_not_found"}`))
			return
		}
		json.NewEncoder(w).Encode(api.ToolCallAnswer{ToolCallID: req.ToolCallID, ToolName: "Edit"})
	}))
	h.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			h.mu.Lock()
			h.conns++
			h.mu.Unlock()
		}
	}
	h.Start()
	t.Cleanup(h.Close)
	return h
}

// wantSeen checks the tool call ids the server handled, in order, and
// over how many connections (any number when conns is -1).
func (h *hotServer) wantSeen(t *testing.T, requests string, conns int) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if got := strings.Join(h.requests, " "); got != requests || (conns >= 0 && h.conns != conns) {
		t.Fatalf("server saw requests %q over %d connections, want %q over %d", got, h.conns, requests, conns)
	}
}

func (h *hotServer) client() *Client {
	return New(&api.Info{Addr: strings.TrimPrefix(h.URL, "http://"), Token: "tok"})
}

func capture(t *testing.T, c *Client, ctx context.Context, id string) (*api.ToolCallAnswer, error) {
	t.Helper()
	return c.StartToolCall(ctx, "s1", api.ToolCallRequest{ToolCallID: id, ToolName: "Edit"})
}

// TestHotRequestsKeepOneConnection: captures in a row go over one kept
// connection, each answered with its own id.
func TestHotRequestsKeepOneConnection(t *testing.T) {
	h := newHotServer(t)
	c := h.client()
	for _, id := range []string{"a", "b", "c", "d"} {
		ans, err := capture(t, c, context.Background(), id)
		if err != nil || ans.ToolCallID != id || ans.ToolName != "Edit" {
			t.Fatalf("capture %s = %+v, %v", id, ans, err)
		}
	}
	h.wantSeen(t, "a b c d", 1)
}

// TestHotRequestSentAgainOnAClosedConnection: the server dropped the kept
// connection (as a restart does); the next capture is sent once more on a
// new connection and answered, and the server handles it once.
func TestHotRequestSentAgainOnAClosedConnection(t *testing.T) {
	h := newHotServer(t)
	c := h.client()
	if _, err := capture(t, c, context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	h.CloseClientConnections()
	ans, err := capture(t, c, context.Background(), "b")
	if err != nil || ans.ToolCallID != "b" {
		t.Fatalf("capture after the connection closed = %+v, %v", ans, err)
	}
	h.wantSeen(t, "a b", 2)
}

// TestHotRequestErrorAnswer: an error answer is an *APIError with the
// server's status, code and message, and the connection stays usable.
func TestHotRequestErrorAnswer(t *testing.T) {
	h := newHotServer(t)
	c := h.client()
	_, err := capture(t, c, context.Background(), "missing")
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusNotFound || ae.Code != "session_not_found" || ae.Msg != "no such session" {
		t.Fatalf("error = %#v, want the 404 session_not_found answer", err)
	}
	if ans, err := capture(t, c, context.Background(), "a"); err != nil || ans.ToolCallID != "a" {
		t.Fatalf("capture after an error answer = %+v, %v", ans, err)
	}
	h.wantSeen(t, "missing a", 1)
}

// TestHotRequestTimeoutAndCancel: a request past the client's time limit,
// or whose context ends, fails at once and is not sent again (the server
// may still be at work on it).
func TestHotRequestTimeoutAndCancel(t *testing.T) {
	h := newHotServer(t)
	c := h.client()
	if _, err := capture(t, c, context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	h.mu.Lock()
	h.hold = hold
	h.mu.Unlock()

	// The server answers neither capture until hold is closed: an error
	// is the client giving up on its own.
	c.HTTP.Timeout = 50 * time.Millisecond
	if _, err := capture(t, c, context.Background(), "slow"); !isTimeout(err) {
		t.Fatalf("capture past the time limit: error %v, want a timeout", err)
	}
	c.HTTP.Timeout = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := capture(t, c, ctx, "canceled"); !errors.Is(err, context.Canceled) {
		t.Fatalf("capture with its context canceled: error %v, want context.Canceled", err)
	}
	close(hold)
	h.wantSeen(t, "a slow canceled", -1) // none sent twice
}
