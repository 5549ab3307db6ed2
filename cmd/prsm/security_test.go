//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	stdsync "sync"
	"syscall"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/server"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu stdsync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeStateIsPrivateAndTokenNeverLogged runs the real `prsm serve`
// (in this process, so its log is captured) with the umask cleared, so that
// only the modes prsm sets explicitly count. Then:
//   - PRSM_HOME, PRSM_HOME/projects, the project directory and its worktrees
//     directory are 0700; server.json, prsm.db (and its -wal, -shm) and
//     server.lock are 0600;
//   - requests with no token, a wrong token, the right one, ?token= on
//     /events (right and wrong, both refused), and the token in a URL path never put the
//     token (or the wrong one) in the server's log, which did log the
//     requests' effects (the log is the real one: "prsm serving", "session
//     started").
func TestServeStateIsPrivateAndTokenNeverLogged(t *testing.T) {
	home := testgit.Env(t)
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	ws := testgit.Init(t, "ws")
	testgit.Write(t, ws, "a.txt", "a\n", 0o644)
	testgit.Git(t, ws, "add", "-A")
	testgit.Git(t, ws, "commit", "-qm", "init")

	var log syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"serve", "--workspace", ws}, Stdio{In: strings.NewReader(""), Out: &log, Err: &log})
	}()
	var info *api.Info
	var pdir string
	for i := 0; info == nil; i++ {
		files, _ := filepath.Glob(filepath.Join(home, "projects", "*", server.InfoFile))
		if len(files) == 1 {
			pdir = filepath.Dir(files[0])
			info, _ = server.ReadInfo(pdir)
		}
		if i == 3000 {
			cancel()
			t.Fatalf("server.json never appeared; log:\n%s", log.String())
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d:\n%s", code, log.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			if code := <-done; code != 0 {
				t.Errorf("serve exited %d:\n%s", code, log.String())
			}
		}
	}
	defer stop()

	tok := info.Token
	wrong := "wrong" + tok[5:]
	base := "http://" + info.Addr
	// A timeout: an event stream that opened by mistake would never end.
	cl := &http.Client{Timeout: 10 * time.Second}
	call := func(method, path, auth, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, c := range []struct {
		method, path, auth, body string
		status                   int
	}{
		{"GET", "/sessions", "", "", 401},
		{"GET", "/sessions", wrong, "", 401},
		{"GET", "/events?token=" + wrong, "", "", 401},
		{"GET", "/events?token=" + tok, "", "", 401},
		{"GET", "/sessions?token=" + tok, "", "", 401},
		{"GET", "/sessions/" + tok, tok, "", 404},
		{"POST", "/sessions", tok, `{"name":"one"}`, 201},
		{"GET", "/status", tok, "", 200},
	} {
		if status, body := call(c.method, c.path, c.auth, c.body); status != c.status {
			t.Errorf("%s %s: %d, want %d: %s", c.method, c.path, status, c.status, body)
		} else if strings.Contains(body, tok) && c.path != "/sessions/"+tok {
			t.Errorf("%s %s answered with the token: %s", c.method, c.path, body)
		}
	}
	// The events stream with the token in its header.
	req, _ := http.NewRequest("GET", base+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(line, ": connected") {
		t.Errorf("events: %d %q", resp.StatusCode, line)
	}

	// The modes, with the server running and a session made.
	modes := map[string]os.FileMode{
		home:                                 0o700 | os.ModeDir,
		filepath.Join(home, "projects"):      0o700 | os.ModeDir,
		pdir:                                 0o700 | os.ModeDir,
		filepath.Join(pdir, "worktrees"):     0o700 | os.ModeDir,
		filepath.Join(pdir, server.InfoFile): 0o600,
		filepath.Join(pdir, "prsm.db"):       0o600,
		filepath.Join(pdir, "server.lock"):   0o600,
		filepath.Join(pdir, "prsm.db-wal"):   0o600,
		filepath.Join(pdir, "prsm.db-shm"):   0o600,
	}
	for p, want := range modes {
		fi, err := os.Lstat(p)
		if err != nil {
			if strings.HasSuffix(p, "-wal") || strings.HasSuffix(p, "-shm") {
				continue // sqlite may not have made it yet
			}
			t.Errorf("%s: %v", p, err)
			continue
		}
		if got := fi.Mode() & (os.ModeType | os.ModePerm); got != want {
			t.Errorf("%s is %v, want %v", p, got, want)
		}
	}
	// Nothing else in the project directory is readable by others.
	filepath.WalkDir(pdir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == pdir {
			return nil
		}
		if d.IsDir() && d.Name() == "worktrees" {
			return filepath.SkipDir // the user's files, with the user's modes
		}
		if fi, err := os.Lstat(p); err == nil && fi.Mode().Perm()&0o077 != 0 && fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is %v: readable by others", p, fi.Mode())
		}
		return nil
	})

	stop()
	out := log.String()
	for _, want := range []string{"prsm serving", "session started", "prsm stopped"} {
		if !strings.Contains(out, want) {
			t.Errorf("the server log lacks %q, so the capture is not the real log:\n%s", want, out)
		}
	}
	if strings.Contains(out, tok) {
		t.Errorf("the server log holds the token:\n%s", out)
	}
	if strings.Contains(out, wrong) {
		t.Errorf("the server log holds the wrong token a client sent:\n%s", out)
	}
}
