package wire_test

// The wire client against the real server on 127.0.0.1:0. An external
// test: the server links package hook, which links wire.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testenv"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/internal/wire"
	"github.com/prsm-dev/prsm/server"
)

// serve starts a real server of a fresh workspace and returns a wire
// client of it, its engine and its project dir (which holds its
// server.json).
func serve(t *testing.T) (*wire.Client, *engine.Engine, string) {
	t.Helper()
	testgit.Env(t)
	ws := testgit.Init(t, "ws")
	testgit.Commit(t, ws, "init", map[string]string{"a.txt": "a\n"})
	pdir := filepath.Join(t.TempDir(), "project")
	eng := testenv.Engine(t, ws, pdir, nil)
	srv, err := server.New(eng, server.Config{ProjectDir: pdir})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	info := api.Info{PID: os.Getpid(), Addr: srv.Addr(), Token: srv.Token(), Workspace: ws}
	if err := server.WriteInfo(pdir, info); err != nil {
		t.Fatal(err)
	}
	return wire.New(&info), eng, pdir
}

// A tool call's capture and complete (with Prefer: respond-async, as the
// hook sends it) through wire become a record; the answers decode.
func TestWireToolCall(t *testing.T) {
	cl, _, _ := serve(t)
	ctx := context.Background()
	var s prsm.Session
	if err := cl.Do(ctx, "POST", "/sessions", api.StartRequest{}, &s); err != nil || s.ID == "" {
		t.Fatalf("start session: %+v %v", s, err)
	}
	var ans api.ToolCallAnswer
	args := json.RawMessage(`{"file_path":"new.txt"}`)
	if err := cl.Do(ctx, "POST", "/sessions/"+s.ID+"/tool-calls",
		api.ToolCallRequest{ToolCallID: "w1", ToolName: "Write", Args: args}, &ans); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.WorktreePath, "new.txt"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var recs api.Records
	if err := cl.Do(ctx, "POST", "/sessions/"+s.ID+"/tool-calls/w1/complete", api.CompleteRequest{}, &recs,
		wire.Header{Name: "Prefer", Value: "respond-async"}); err != nil {
		t.Fatal(err)
	}
	// The list waits for the session's lock, so a complete answered
	// early (202) is done by then.
	var list []*prsm.Record
	if err := cl.Do(ctx, "GET", "/sessions/"+s.ID+"/file-changes", nil, &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ToolCallID != "w1" || list[0].RelPath != "new.txt" {
		t.Fatalf("records %+v, want w1 new.txt", list)
	}
	var st api.StatusResponse
	if err := cl.Do(ctx, "GET", "/status", nil, &st); err != nil || st.ActiveSessions != 1 {
		t.Fatalf("status %+v %v, want one active session", st, err)
	}
}

// An error answer is an *wire.Error with the server's status, code and
// message; a wrong token gets 401 unauthorized.
func TestWireErrorAnswers(t *testing.T) {
	cl, _, _ := serve(t)
	ctx := context.Background()
	err := cl.Do(ctx, "POST", "/sessions/0123456789ab/tool-calls", api.ToolCallRequest{ToolCallID: "x", ToolName: "Bash"}, nil)
	var e *wire.Error
	if !errors.As(err, &e) || e.Status != 404 || e.Code != "session_not_found" || e.Msg == "" || e.Busy() {
		t.Fatalf("err = %#v, want 404 session_not_found", err)
	}
	bad := &wire.Client{Addr: cl.Addr, Token: "not-the-token"}
	err = bad.Do(ctx, "GET", "/status", nil, nil)
	if !errors.As(err, &e) || e.Status != 401 || e.Code != "unauthorized" {
		t.Fatalf("wrong token: err = %#v, want 401 unauthorized", err)
	}
}

// While another connection holds the database's write lock, a turn is
// answered 503 busy; the client asks again, and it succeeds once the
// lock goes.
func TestWireBusyRetried(t *testing.T) {
	cl, eng, _ := serve(t)
	ctx := context.Background()
	var s prsm.Session
	if err := cl.Do(ctx, "POST", "/sessions", api.StartRequest{}, &s); err != nil {
		t.Fatal(err)
	}
	release := testenv.HoldWriteLock(t, eng.DB.Path())
	go func() {
		// The server waits five seconds for the lock before it answers
		// busy; the lock goes while the client waits to ask again.
		time.Sleep(6 * time.Second)
		release()
	}()
	start := time.Now()
	var cp *prsm.Checkpoint
	if err := cl.Do(ctx, "POST", "/sessions/"+s.ID+"/turns", api.TurnRequest{Prompt: "p"}, &cp); err != nil {
		t.Fatalf("turn after a busy answer: %v", err)
	}
	if took := time.Since(start); took < 5*time.Second {
		t.Fatalf("turn took %v: it was never answered busy", took)
	}
	if cp == nil || cp.ID == "" {
		t.Fatalf("turn answered %+v, want its checkpoint", cp)
	}
}

// A server that is down fails the request at once, with an error that
// says where it was sought; so does LiveServer.
func TestWireServerDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	start := time.Now()
	err = (&wire.Client{Addr: addr, Token: "t"}).Do(context.Background(), "POST", "/sessions/x/turn-end", nil, nil)
	// At once: no retries with waits between them (a loaded machine
	// may take a while to schedule even one refused connect).
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("down server: failed after %v", took)
	}
	var e *wire.Error
	if err == nil || errors.As(err, &e) || !strings.Contains(err.Error(), "reach prsm server at "+addr) ||
		!strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err = %v, want connection refused at %s", err, addr)
	}
	pdir := t.TempDir()
	if err := server.WriteInfo(pdir, api.Info{PID: os.Getpid(), Addr: addr, Token: "t"}); err != nil {
		t.Fatal(err)
	}
	if info, ok := wire.KnownServer(pdir); !ok || info.Addr != addr {
		t.Errorf("KnownServer = %+v %v, want the server.json of a running pid", info, ok)
	}
	if _, ok := wire.LiveServer(context.Background(), pdir); ok {
		t.Error("LiveServer found a server that is down")
	}
}

// LiveServer finds the server its server.json names when it answers with
// the token there; not with another token, nor when its pid is gone.
func TestWireLiveServer(t *testing.T) {
	cl, _, pdir := serve(t)
	ctx := context.Background()
	if info, ok := wire.LiveServer(ctx, pdir); !ok || info.Addr != cl.Addr || info.Token != cl.Token {
		t.Fatalf("LiveServer = %+v %v, want %s", info, ok, cl.Addr)
	}
	if err := server.WriteInfo(pdir, api.Info{PID: os.Getpid(), Addr: cl.Addr, Token: "another"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := wire.LiveServer(ctx, pdir); ok {
		t.Error("LiveServer took a server that refuses the token")
	}
	if err := server.WriteInfo(pdir, api.Info{PID: deadPID(t), Addr: cl.Addr, Token: cl.Token}); err != nil {
		t.Fatal(err)
	}
	if _, ok := wire.KnownServer(pdir); ok {
		t.Error("KnownServer took the server.json of a process that is gone")
	}
}

// deadPID is the pid of a process that ran and is gone.
func deadPID(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	p.Wait()
	return p.Pid
}

// A server that takes the request and never answers: the context's
// deadline ends the request, and is its error.
func TestWireDeadline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go serveEach(ln, func(c net.Conn) { io.Copy(io.Discard, c) })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = (&wire.Client{Addr: ln.Addr().String(), Token: "t"}).Do(ctx, "POST", "/sessions/x/turn-end", nil, nil)
	// The server never answers: only the deadline ends the request.
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the request ended %v after it began, its deadline was 200ms", took)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's deadline", err)
	}
}

// The answers of another HTTP/1.x server: 202 Accepted (as a server
// that honours Prefer: respond-async answers a complete) is success, a
// body without Content-Length runs until the connection closes, and one
// cut short of its Content-Length is an error.
func TestWireAnswers(t *testing.T) {
	for _, c := range []struct {
		name, answer, want, err string
	}{
		{"202", "HTTP/1.1 202 Accepted\r\nContent-Type: application/json\r\nContent-Length: 14\r\n\r\n{\"records\":[]}", `{"records":[]}`, ""},
		{"until EOF", "HTTP/1.0 200 OK\r\n\r\n{\"ok\":true}", `{"ok":true}`, ""},
		{"cut short", "HTTP/1.0 200 OK\r\nContent-Length: 20\r\n\r\n{\"ok\":true}", "", "cut short"},
		{"not HTTP", "SSH-2.0-OpenSSH\r\n\r\n", "", "not an HTTP answer"},
		{"busy without retry", "HTTP/1.0 503 Service Unavailable\r\nRetry-After: 1\r\n\r\n{\"error\":\"store busy\",\"code\":\"busy\"}", "", "store busy"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			reqs := make(chan string, 4)
			go func() {
				for {
					conn, err := ln.Accept()
					if err != nil {
						return
					}
					buf := make([]byte, 4096)
					n, _ := conn.Read(buf)
					reqs <- string(buf[:n])
					io.WriteString(conn, c.answer)
					conn.Close()
				}
			}()
			cl := &wire.Client{Addr: ln.Addr().String(), Token: "tok"}
			// A deadline shorter than the busy answer's Retry-After: it
			// is not sent again.
			ctx, cancel := context.WithTimeout(context.Background(), 900*time.Millisecond)
			defer cancel()
			var got json.RawMessage
			err = cl.Do(ctx, "POST", "/sessions/s/tool-calls/t/complete", map[string]int{"a": 1}, &got,
				wire.Header{Name: "Prefer", Value: "respond-async"})
			if c.err == "" && (err != nil || string(got) != c.want) {
				t.Fatalf("answer %s %v, want %s", got, err, c.want)
			}
			if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("err = %v, want %q", err, c.err)
			}
			req := <-reqs
			for _, line := range []string{"POST /sessions/s/tool-calls/t/complete HTTP/1.0\r\n", "\r\nHost: " + cl.Addr + "\r\n",
				"\r\nAuthorization: Bearer tok\r\n", "\r\nContent-Type: application/json\r\n", "\r\nContent-Length: 7\r\n",
				"\r\nPrefer: respond-async\r\n", "\r\n\r\n{\"a\":1}"} {
				if !strings.Contains(req, line) {
					t.Errorf("request %q lacks %q", req, line)
				}
			}
			if len(reqs) != 0 {
				t.Errorf("sent %d times", 1+len(reqs))
			}
		})
	}
}

// The dial takes an IPv6 loopback address as well as an IPv4 one, and
// reads the answer's header fields whatever their case.
func TestWireIPv6(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	defer ln.Close()
	go serveEach(ln, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil || line == "\r\n" {
				break
			}
		}
		io.WriteString(c, "HTTP/1.0 503 Service Unavailable\r\ncontent-length: 28\r\nRETRY-AFTER: 7\r\n\r\n{\"error\":\"no\",\"code\":\"gone\"}")
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = (&wire.Client{Addr: ln.Addr().String(), Token: "t"}).Do(ctx, "GET", "/healthz", nil, nil)
	var we *wire.Error
	if !errors.As(err, &we) || we.Status != 503 || we.Code != "gone" || we.Msg != "no" || we.RetryAfter != 7*time.Second {
		t.Fatalf("err = %#v, want the 503 answer with its Retry-After", err)
	}
}

// serveEach serves each connection ln accepts with serve, then closes it,
// until ln is closed.
func serveEach(ln net.Listener, serve func(net.Conn)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			serve(c)
		}()
	}
}
