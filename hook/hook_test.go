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
	wt := sessionServedBy(t, srv.URL)
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

// sessionServedBy makes a session worktree under a temp PRSM_HOME whose
// project's server.json names the server at url, and returns it.
func sessionServedBy(t *testing.T, url string) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("PRSM_HOME", home)
	projectDir := filepath.Join(home, "projects", "repo-1234abcd")
	wt := filepath.Join(projectDir, "worktrees", "0123456789ab")
	if err := os.MkdirAll(wt, 0o700); err != nil {
		t.Fatal(err)
	}
	info, _ := json.Marshal(api.Info{PID: os.Getpid(), Addr: strings.TrimPrefix(url, "http://"), Token: "t"})
	if err := os.WriteFile(filepath.Join(projectDir, api.InfoFile), info, 0o600); err != nil {
		t.Fatal(err)
	}
	return wt
}
