package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testenv"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/server"
)

type testServer struct {
	srv   *server.Server
	eng   *engine.Engine
	url   string
	dir   string // project dir
	ws    string // workspace
	stop  func()
	errc  chan error
	token string
}

// events opens the server's SSE stream, closed when the test ends.
func (ts *testServer) events(t *testing.T) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.url+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+ts.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func start(t *testing.T, cfg server.Config) *testServer {
	t.Helper()
	testgit.Env(t)
	ctx := context.Background()
	ws := testgit.Init(t, "ws")
	testgit.Write(t, ws, "a.txt", "a\n", 0o644)
	testgit.Git(t, ws, "add", "-A")
	testgit.Git(t, ws, "commit", "-qm", "init")
	pdir := filepath.Join(t.TempDir(), "project")
	eng := testenv.Engine(t, ws, pdir, nil)
	cfg.ProjectDir = pdir
	return serve(t, ctx, eng, ws, cfg)
}

// restart serves ts's engine anew, as a server started again on the same
// store would, once ts has stopped.
func restart(t *testing.T, ts *testServer) *testServer {
	t.Helper()
	return serve(t, context.Background(), ts.eng, ts.ws, server.Config{ProjectDir: ts.dir})
}

// serve serves eng, whose workspace is ws, with cfg until the test ends.
func serve(t *testing.T, ctx context.Context, eng *engine.Engine, ws string, cfg server.Config) *testServer {
	t.Helper()
	pdir := cfg.ProjectDir
	srv, err := server.New(eng, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	ts := &testServer{srv: srv, eng: eng, url: "http://" + srv.Addr(), dir: pdir, ws: ws, token: srv.Token(), errc: make(chan error, 1)}
	go func() { ts.errc <- srv.Serve(sctx) }()
	ts.stop = func() {
		cancel()
		if err := <-ts.errc; err != nil {
			t.Errorf("serve: %v", err)
		}
	}
	var once stdsync.Once
	t.Cleanup(func() { once.Do(ts.stop) })
	// Serve writes server.json before serving; wait for it.
	for i := 0; i < 200; i++ {
		if _, err := server.ReadInfo(pdir); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return ts
}

func (ts *testServer) do(t *testing.T, method, path, body string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ts.token)
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func TestGuards(t *testing.T) {
	ts := start(t, server.Config{BodyLimit: 1 << 10})
	cases := []struct {
		name, method, path, body string
		hdr                      map[string]string
		status                   int
		code                     string
	}{
		{"healthz without token", "GET", "/healthz", "", map[string]string{"Authorization": ""}, 200, ""},
		{"no token", "GET", "/sessions", "", map[string]string{"Authorization": ""}, 401, "unauthorized"},
		{"wrong token", "GET", "/sessions", "", map[string]string{"Authorization": "Bearer nope"}, 401, "unauthorized"},
		{"token in query", "GET", "/sessions?token=" + ts.token, "", map[string]string{"Authorization": ""}, 401, "unauthorized"},
		{"foreign host", "GET", "/sessions", "", map[string]string{"Host": "evil.example:" + strings.Split(ts.url, ":")[2]}, 403, "forbidden_host"},
		{"foreign host on healthz", "GET", "/healthz", "", map[string]string{"Host": "evil.example"}, 403, "forbidden_host"},
		{"right host, wrong port", "GET", "/sessions", "", map[string]string{"Host": "127.0.0.1:1"}, 403, "forbidden_host"},
		{"localhost host", "GET", "/sessions", "", map[string]string{"Host": "localhost:" + strings.Split(ts.url, ":")[2]}, 200, ""},
		{"bad json", "POST", "/sessions", `{"name": `, nil, 400, "bad_json"},
		{"trailing json", "POST", "/sessions", `{} {}`, nil, 400, "bad_json"},
		{"too large", "POST", "/sessions", `{"name":"` + strings.Repeat("x", 4096) + `"}`, nil, 413, "too_large"},
		{"unknown session", "GET", "/sessions/0123456789ab", "", nil, 404, "session_not_found"},
		{"end unknown session", "DELETE", "/sessions/zzz", "", nil, 404, "session_not_found"},
		{"unknown route", "GET", "/nope", "", nil, 404, "not_found"},
		{"bad mode", "POST", "/sessions", `{"mode":"yolo"}`, nil, 400, "invalid_mode"},
		{"odd name", "POST", "/sessions", `{"name":"a\u0007b"}`, nil, 400, "invalid_name"},
		{"bad discard", "DELETE", "/sessions/abc?discard=maybe", "", nil, 400, "bad_param"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, hdr, body := ts.do(t, c.method, c.path, c.body, c.hdr)
			if status != c.status {
				t.Fatalf("status %d, want %d: %s", status, c.status, body)
			}
			if hdr.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("CORS header sent")
			}
			if c.code != "" {
				var e struct{ Error, Code string }
				if err := json.Unmarshal([]byte(body), &e); err != nil || e.Code != c.code || e.Error == "" {
					t.Errorf("body %s, want code %s", body, c.code)
				}
			}
		})
	}
	// The server still serves after the refusals, and nothing was created.
	status, _, body := ts.do(t, "GET", "/sessions", "", nil)
	if status != 200 || strings.TrimSpace(body) != "[]" {
		t.Fatalf("after bad requests: %d %s", status, body)
	}
	// No CORS on a preflight either.
	status, hdr, _ := ts.do(t, "OPTIONS", "/sessions", "", map[string]string{"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})
	for k := range hdr {
		if strings.HasPrefix(k, "Access-Control-") {
			t.Errorf("preflight answered %d with CORS header %s", status, k)
		}
	}
}

func TestServerJSONLifecycle(t *testing.T) {
	ts := start(t, server.Config{})
	path := filepath.Join(ts.dir, server.InfoFile)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("server.json mode %o, want 600", fi.Mode().Perm())
	}
	info, err := server.ReadInfo(ts.dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Addr != ts.srv.Addr() || info.Token != ts.token || info.PID != os.Getpid() || info.Workspace == "" || info.Version != prsm.Version {
		t.Errorf("server.json = %+v", info)
	}
	if !strings.HasPrefix(info.Addr, "127.0.0.1:") {
		t.Errorf("not on loopback: %s", info.Addr)
	}
	ts.stop()
	ts.stop = func() {}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("server.json left after shutdown: %v", err)
	}
}

func TestRefusesNonLoopback(t *testing.T) {
	testgit.Env(t)
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:0", ":0"} {
		if _, err := server.New(&engine.Engine{}, server.Config{Addr: addr}); err == nil {
			t.Errorf("listened on %s", addr)
		}
	}
}

// sse reads events from /events until n have arrived.
func readEvents(t *testing.T, body io.Reader, n int, out chan<- string) {
	sc := bufio.NewScanner(body)
	var typ string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			out <- typ + " " + strings.TrimPrefix(line, "data: ")
			n--
			if n == 0 {
				close(out)
				return
			}
		}
	}
	close(out)
}

func TestSessionsAndEvents(t *testing.T) {
	ts := start(t, server.Config{})
	resp := ts.events(t)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := make(chan string, 10)
	go readEvents(t, resp.Body, 2, events)

	status, _, body := ts.do(t, "POST", "/sessions", `{"name":"s1","agent_id":"claude","mode":"review"}`, nil)
	if status != 201 {
		t.Fatalf("start: %d %s", status, body)
	}
	var s prsm.Session
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatal(err)
	}
	if s.Name != "s1" || s.AgentID != "claude" || s.Mode != "review" || s.Status != "active" || s.Branch != "prsm/"+s.ID || s.BaseCommit == "" {
		t.Errorf("session = %+v", s)
	}
	if _, err := os.Stat(filepath.Join(s.WorktreePath, "a.txt")); err != nil {
		t.Errorf("worktree not seeded: %v", err)
	}
	status, _, body = ts.do(t, "GET", "/sessions/"+s.ID[:5], "", nil)
	if status != 200 || !strings.Contains(body, `"id":"`+s.ID+`"`) {
		t.Errorf("get by prefix: %d %s", status, body)
	}
	status, _, body = ts.do(t, "DELETE", "/sessions/"+s.ID, "", nil)
	if status != 200 || !strings.Contains(body, `"status":"ended"`) {
		t.Errorf("end: %d %s", status, body)
	}
	var got []string
	timeout := time.After(10 * time.Second)
	for len(got) < 2 {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("stream ended after %v", got)
			}
			got = append(got, ev)
		case <-timeout:
			t.Fatalf("events so far: %v", got)
		}
	}
	if !strings.HasPrefix(got[0], "session_updated ") || !strings.Contains(got[0], `"status":"active"`) ||
		!strings.HasPrefix(got[1], "session_updated ") || !strings.Contains(got[1], `"status":"ended"`) {
		t.Errorf("events = %v", got)
	}
}

// TestConcurrentStarts starts sessions from many goroutines: every one gets
// its own worktree and nothing collides in git's worktree bookkeeping.
func TestConcurrentStarts(t *testing.T) {
	ts := start(t, server.Config{})
	var wg stdsync.WaitGroup
	errs := make(chan string, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			req, _ := http.NewRequest("POST", ts.url+"/sessions", strings.NewReader(fmt.Sprintf(`{"name":"c%d"}`, i)))
			req.Header.Set("Authorization", "Bearer "+ts.token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs <- err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 201 {
				errs <- string(b)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	list := testgit.Git(t, ts.ws, "worktree", "list", "--porcelain")
	if n := strings.Count(list, "branch refs/heads/prsm/"); n != 8 {
		t.Errorf("%d prsm worktrees, want 8:\n%s", n, list)
	}
}

// TestEventBurstInOrder: a burst of events published at once reaches an
// SSE client whole and in order, with ids that only grow; an event that
// does not encode is skipped, not the ones around it.
func TestEventBurstInOrder(t *testing.T) {
	ts := start(t, server.Config{})
	resp := ts.events(t)
	rd := bufio.NewReader(resp.Body)
	if line, err := rd.ReadString('\n'); err != nil || line != ": connected\n" {
		t.Fatalf("first line %q %v", line, err)
	}
	const n = 500
	for i := 0; i < n; i++ {
		if i == 200 {
			ts.eng.Events.Publish("test", map[string]any{"bad": func() {}}) // json: unsupported type
		}
		ts.eng.Events.Publish("test", map[string]int{"i": i})
	}
	lastID := int64(-1)
	for i := 0; i < n; i++ {
		var id int64
		var data string
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("after %d events: %v", i, err)
			}
			if line == "\n" && data != "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "id: "); ok {
				if id, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
					t.Fatalf("id line %q", line)
				}
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				data = strings.TrimSpace(v)
			}
		}
		if want := fmt.Sprintf(`{"i":%d}`, i); data != want {
			t.Fatalf("event %d: data %s, want %s", i, data, want)
		}
		if id <= lastID {
			t.Fatalf("event %d: id %d after %d", i, id, lastID)
		}
		lastID = id
	}
}
