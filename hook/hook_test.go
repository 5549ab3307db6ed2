package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents"
	"github.com/prsm-dev/prsm/agents/agenttest"
	"github.com/prsm-dev/prsm/api"
)

func TestHookConnectGivesUp(t *testing.T) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer close(release)
	projectDir := t.TempDir()
	info, _ := json.Marshal(api.Info{PID: os.Getpid(), Addr: strings.TrimPrefix(hang.URL, "http://"), Token: "t"})
	if err := os.WriteFile(filepath.Join(projectDir, api.InfoFile), info, 0o600); err != nil {
		t.Fatal(err)
	}
	a := &Adapter{}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := a.connect(ctx, &Target{SessionID: "0123456789ab", ProjectDir: projectDir})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "server not reachable") {
			t.Fatalf("err = %v, want server not reachable", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("hookConnect did not give up")
	}
}

// runHook runs the adapter of the agent named name as `prsm-hook AGENT` does, with
// stdin, and without a way to start a server.
func runHook(t *testing.T, stdin, name string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := &Adapter{Stdout: &out, Stderr: &errb}
	if err := a.Command(context.Background(), agents.Lookup(name), nil, strings.NewReader(stdin)); err != nil {
		fmt.Fprintln(&errb, err)
		code = 1
	}
	return code, out.String(), errb.String()
}

// The hook sends a tool call's complete with Prefer: respond-async (and
// its capture without), and takes a 202 Accepted for success: a server
// that honours the preference answers so once it holds the session's
// lock.
func TestHookCompleteRespondAsync(t *testing.T) {
	type seen struct{ path, prefer string }
	reqs := make(chan seen, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/feedback/take") {
			// Each event's ask for the review's feedback: none here.
			fmt.Fprint(w, `{"ids":[],"text":""}`)
			return
		}
		reqs <- seen{r.URL.Path, r.Header.Get("Prefer")}
		if strings.HasSuffix(r.URL.Path, "/complete") {
			w.WriteHeader(http.StatusAccepted)
			fmt.Fprint(w, `{"records":[]}`)
			return
		}
		fmt.Fprint(w, `{}`)
	}))
	defer srv.Close()
	wt := fakeSession(t, srv.URL, prsm.Version)
	for _, c := range []struct{ fixture, path, prefer string }{
		{"pre-bash", "/sessions/0123456789ab/tool-calls", ""},
		{"post-bash", "/sessions/0123456789ab/tool-calls/toolu_05BashShuffle/complete", "respond-async"},
	} {
		payload, err := agenttest.Payload(c.fixture, wt)
		if err != nil {
			t.Fatal(err)
		}
		if code, out, errs := runHook(t, string(payload), "claude"); code != 0 || out != "" || errs != "" {
			t.Fatalf("%s: exit %d %q %q", c.fixture, code, out, errs)
		}
		select {
		case got := <-reqs:
			if got != (seen{c.path, c.prefer}) {
				t.Errorf("%s sent %+v, want %s with Prefer %q", c.fixture, got, c.path, c.prefer)
			}
		default:
			t.Fatalf("%s sent nothing", c.fixture)
		}
	}
}

// fakeSession is the worktree of session 0123456789ab in a PRSM_HOME of
// the test's, whose server.json names the server at url (its version
// version).
func fakeSession(t *testing.T, url, version string) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("PRSM_HOME", home)
	projectDir := filepath.Join(home, "projects", "repo-1234abcd")
	wt := filepath.Join(projectDir, "worktrees", "0123456789ab")
	if err := os.MkdirAll(wt, 0o700); err != nil {
		t.Fatal(err)
	}
	info, _ := json.Marshal(api.Info{PID: os.Getpid(), Addr: strings.TrimPrefix(url, "http://"), Token: "t", Version: version})
	if err := os.WriteFile(filepath.Join(projectDir, api.InfoFile), info, 0o600); err != nil {
		t.Fatal(err)
	}
	return wt
}

// A server of another version than the hook's (prsm and prsm-hook
// installed apart, or a server left running across an upgrade): an answer
// of a newer shape is taken; a route an older server does not serve, or a
// call it refuses, fails the hook with exit 1, never 2 (which blocks the
// agent's tool), and a message that names both versions and the fix; a
// server of the hook's own version gets no such note.
func TestHookVersionMismatch(t *testing.T) {
	var answer func(w http.ResponseWriter, r *http.Request)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { answer(w, r) }))
	defer srv.Close()
	answerWith := func(status int, body string) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		}
	}
	// What echo answers for a route it does not serve, through prsm's
	// error handler; and a call the server refuses.
	noRoute := answerWith(http.StatusNotFound, `{"error":"Not Found","code":"not_found"}`)
	// The same to a hook token (prsm run's agents).
	noHookRoute := answerWith(http.StatusForbidden, `{"error":"a hook token only sends the hook events of its session","code":"hook_token_scope","hint":"the CLI and scripts use the server's token (server.json)"}`)
	refused := answerWith(http.StatusBadRequest, `{"error":"invalid tool call","code":"invalid_input"}`)
	for _, c := range []struct {
		name, version, hookToken string
		answer                   func(http.ResponseWriter, *http.Request)
		code                     int
		want                     []string // in stderr, all of them; none: stderr empty
	}{
		{"newer answer", "99.0.0", "", answerWith(http.StatusOK, `{"records":[{"id":"r1","future":{"x":[1,2]}}],"next":"more"}`), 0, nil},
		{"older server, no route", "0.0.1", "", noRoute, 1, []string{
			"prsm hook: PreToolUse toolu_05BashShuffle: Not Found: the workspace's prsm server is version 0.0.1 and does not serve this call, which this hook (version " + prsm.Version + ") sends",
			"prsm stop", "install prsm and prsm-hook together"}},
		{"server without a version", "", "", noRoute, 1, []string{"server is of a version older than " + prsm.Version + " and does not serve this call"}},
		{"older server, no hook route", "0.0.1", "prsmh_x", noHookRoute, 1, []string{"a hook token only sends the hook events of its session: the workspace's prsm server is version 0.0.1 and does not serve this call"}},
		{"newer server refuses", "99.0.0", "", refused, 1, []string{"invalid tool call (the workspace's prsm server is version 99.0.0, this hook " + prsm.Version + ": restart it"}},
		{"same version", prsm.Version, "", noRoute, 1, []string{"prsm hook: PreToolUse toolu_05BashShuffle: Not Found\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			answer = c.answer
			t.Setenv(api.HookTokenEnv, c.hookToken)
			wt := fakeSession(t, srv.URL, c.version)
			payload, err := agenttest.Payload("pre-bash", wt)
			if err != nil {
				t.Fatal(err)
			}
			code, out, errs := runHook(t, string(payload), "claude")
			if code != c.code || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d", code, out, errs, c.code)
			}
			if len(c.want) == 0 && errs != "" {
				t.Errorf("stderr %q, want none", errs)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q, want %q in it", errs, w)
				}
			}
			if c.version == prsm.Version && strings.Contains(errs, "version") {
				t.Errorf("a server of the hook's version: stderr %q speaks of versions", errs)
			}
		})
	}
}
