package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/internal/testenv"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/server"
	"github.com/prsm-dev/prsm/worktree"
)

// `prsm changes reject PREFIX --hunk N` with two active sessions and no
// --session is one request to the server (beside connect's GET /status):
// the server resolves the change's id prefix and its session (issue 43:
// it used to be 2 + N, a list of sessions and one of each one's changes,
// then the decision). A count of the requests a proxy forwards says so.
func TestHunkDecisionOneRequest(t *testing.T) {
	testgit.Env(t)
	ctx := context.Background()
	ws := testgit.Init(t, "ws")
	testgit.Write(t, ws, "f.txt", "one\ntwo\nthree\nfour\nfive\nsix\nseven\n", 0o644)
	testgit.Git(t, ws, "add", "-A")
	testgit.Git(t, ws, "commit", "-qm", "init")
	repo, err := worktree.Discover(ctx, nil, ws)
	if err != nil {
		t.Fatal(err)
	}
	home, err := prsm.Home()
	if err != nil {
		t.Fatal(err)
	}
	pdir := prsm.ProjectDir(home, repo.Identity)
	srv, err := server.New(testenv.Engine(t, ws, pdir, nil), server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx) }()
	t.Cleanup(func() { stop(); <-done })
	cl := client.New(&api.Info{Addr: srv.Addr(), Token: srv.Token()})

	var sessions []*prsm.Session
	for _, name := range []string{"one", "two"} {
		s, err := cl.StartSession(ctx, api.StartRequest{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
	}
	s := sessions[0]
	args, _ := json.Marshal(map[string]string{"file_path": filepath.Join(s.WorktreePath, "f.txt")})
	if _, err := cl.StartToolCall(ctx, s.ID, api.ToolCallRequest{ToolCallID: "edit-alpha", ToolName: "Edit", Args: args, Cwd: s.WorktreePath}); err != nil {
		t.Fatal(err)
	}
	testgit.Write(t, s.WorktreePath, "f.txt", "ONE\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n", 0o644)
	if _, err := cl.CompleteToolCall(ctx, s.ID, "edit-alpha", api.CompleteRequest{}); err != nil {
		t.Fatal(err)
	}

	// The CLI finds the proxy in server.json.
	target, _ := url.Parse("http://" + srv.Addr())
	var mu sync.Mutex
	var sent []string
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		mu.Lock()
		sent = append(sent, r.In.Method+" "+r.In.URL.RequestURI())
		mu.Unlock()
		r.SetURL(target)
	}})
	t.Cleanup(proxy.Close)
	info := api.Info{PID: os.Getpid(), Addr: strings.TrimPrefix(proxy.URL, "http://"), Token: srv.Token(), Workspace: ws, Version: prsm.Version}
	b, _ := json.Marshal(info)
	if err := os.WriteFile(filepath.Join(pdir, api.InfoFile), b, 0o600); err != nil {
		t.Fatal(err)
	}

	var out, errOut bytes.Buffer
	if code := Run(ctx, []string{"--workspace", ws, "changes", "reject", "edit-a", "--hunk", "1"}, Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut}); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "rejected 1 hunk of edit-alpha") {
		t.Errorf("output: %s", out.String())
	}
	mu.Lock()
	defer mu.Unlock()
	var calls []string
	for _, c := range sent {
		if c != http.MethodGet+" "+api.RouteStatus.Path() {
			calls = append(calls, c)
		}
	}
	want := http.MethodPost + " " + api.RouteDecideHunks.Path(api.AnySession, "edit-a")
	if len(calls) != 1 || calls[0] != want {
		t.Errorf("the CLI sent %q (beside GET /status), want the one %q", calls, want)
	}
	got, _ := os.ReadFile(filepath.Join(ws, "f.txt"))
	if string(got) != "ONE\ntwo\nthree\nfour\nfive\nsix\nseven\n" {
		t.Errorf("workspace f.txt: %q", got)
	}
}
