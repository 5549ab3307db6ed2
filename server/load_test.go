package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testenv"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/server"
)

// TestLoad: 10 sessions make tool calls at once through the real HTTP
// server (with the file watcher, as `prsm serve` runs), while 5 SSE
// clients listen on /events and a reviewer per half of the sessions
// accepts and rejects pending changes at random. Every call must succeed,
// and every SSE client must see one file_changed event for each record the
// store holds, no more, no fewer. It reports the p50 and p99 latency of
// complete. The short form makes 30 calls per session; PRSM_LOAD=full makes
// 500.
func TestLoad(t *testing.T) {
	calls := 30
	if os.Getenv("PRSM_LOAD") == "full" {
		calls = 500
	}
	const nSessions, nListeners = 10, 5
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)

	testgit.Env(t)
	ctx := context.Background()
	ws := testgit.Init(t, "ws")
	for i := 0; i < nSessions; i++ {
		for j := 0; j < 3; j++ {
			testgit.Write(t, ws, fmt.Sprintf("s%d/f%d.txt", i, j), testgit.Lines(50, ""), 0o644)
		}
	}
	testgit.Git(t, ws, "add", "-A")
	testgit.Git(t, ws, "commit", "-qm", "init")
	pdir := filepath.Join(t.TempDir(), "project")
	eng := testenv.Engine(t, ws, pdir, nil)
	sctx, stop := context.WithCancel(ctx)
	if err := eng.StartWatching(sctx); err != nil {
		t.Fatal(err)
	}
	defer eng.StopWatching()
	info, stopServe := serveEngine(t, sctx, eng, pdir)
	defer func() {
		stop()
		stopServe()
	}()
	cl := client.New(info)

	// The listeners subscribe before any work starts.
	listeners := make([]*sseListener, nListeners)
	for i := range listeners {
		l, err := listen(sctx, info)
		if err != nil {
			t.Fatal(err)
		}
		listeners[i] = l
	}

	var sessions []*prsm.Session
	for i := 0; i < nSessions; i++ {
		s, err := cl.StartSession(ctx, api.StartRequest{Name: fmt.Sprintf("load-%d", i), AgentID: fmt.Sprintf("agent-%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
	}

	var mu stdsync.Mutex
	var latencies []time.Duration
	var errs []string
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(errs) < 20 {
			errs = append(errs, fmt.Sprintf(format, args...))
		}
	}
	var agents, reviewers stdsync.WaitGroup
	done := make(chan struct{})
	start := time.Now()
	for i, s := range sessions {
		agents.Add(1)
		go func(i int, s *prsm.Session) {
			defer agents.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			for n := 0; n < calls; n++ {
				id := fmt.Sprintf("s%d-c%d", i, n)
				rel := fmt.Sprintf("s%d/f%d.txt", i, rng.IntN(3))
				tool := "Edit"
				if rng.IntN(5) == 0 {
					rel, tool = fmt.Sprintf("s%d/new%d.txt", i, n), "Write"
				}
				p := filepath.Join(s.WorktreePath, rel)
				args, _ := json.Marshal(map[string]string{"file_path": p})
				if _, err := cl.StartToolCall(ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: tool, Args: args, Cwd: s.WorktreePath}); err != nil {
					fail("start %s: %v", id, err)
					continue
				}
				content := fmt.Sprintf("new file %s\n", id)
				if tool == "Edit" {
					b, err := os.ReadFile(p)
					if err != nil {
						fail("agent read: %v", err)
						continue
					}
					ls := strings.SplitAfter(string(b), "\n")
					k := rng.IntN(len(ls) - 1)
					ls[k] = fmt.Sprintf("edited by %s\n", id)
					content = strings.Join(ls, "")
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					fail("agent write: %v", err)
					continue
				}
				t0 := time.Now()
				_, err := cl.CompleteToolCall(ctx, s.ID, id, api.CompleteRequest{Result: json.RawMessage(`{"ok":true}`)})
				d := time.Since(t0)
				if err != nil {
					fail("complete %s: %v", id, err)
					continue
				}
				mu.Lock()
				latencies = append(latencies, d)
				mu.Unlock()
			}
		}(i, s)
	}
	var accepts, rejects int
	for r := 0; r < 2; r++ {
		reviewers.Add(1)
		go func(r int) {
			defer reviewers.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(100+r)))
			// Each reviewer owns half of the sessions: one reviewer per
			// session, so a decision never races another on the same
			// records.
			mine := sessions[r*nSessions/2 : (r+1)*nSessions/2]
			for {
				select {
				case <-done:
					return
				case <-time.After(time.Duration(rng.IntN(20)) * time.Millisecond):
				}
				s := mine[rng.IntN(len(mine))]
				pend, err := cl.Changes(ctx, s.ID, prsm.StatusPending, "")
				if err != nil {
					fail("list pending: %v", err)
					continue
				}
				if len(pend) == 0 {
					continue
				}
				rec := pend[rng.IntN(len(pend))]
				if rng.IntN(2) == 0 {
					_, err = cl.Accept(ctx, s.ID, rec.ID)
					mu.Lock()
					accepts++
					mu.Unlock()
				} else {
					_, err = cl.Reject(ctx, s.ID, rec.ID)
					mu.Lock()
					rejects++
					mu.Unlock()
				}
				if err != nil {
					fail("review %s: %v", rec.ID, err)
				}
			}
		}(r)
	}
	agents.Wait()
	close(done)
	reviewers.Wait()
	elapsed := time.Since(start)

	// Every record the store holds, and the file_changed events each
	// listener must have seen for them.
	want := map[string]bool{}
	for _, s := range sessions {
		if _, err := cl.Flush(ctx, s.ID); err != nil {
			t.Errorf("flush: %v", err)
		}
		recs, err := cl.Changes(ctx, s.ID, "", "")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			want[r.SessionID+"/"+r.ID] = true
		}
	}
	for i, l := range listeners {
		got := l.wait(len(want), time.Minute)
		var missing, extra []string
		for k := range want {
			if got[k] == 0 {
				missing = append(missing, k)
			}
		}
		for k, n := range got {
			if !want[k] || n > 1 {
				extra = append(extra, fmt.Sprintf("%s x%d", k, n))
			}
		}
		if len(missing)+len(extra) > 0 || l.err() != nil {
			sort.Strings(missing)
			t.Errorf("listener %d: %d file_changed events for %d records; missing %d %.200v, unexpected %.200v; stream: %v",
				i, len(got), len(want), len(missing), missing, extra, l.err())
		}
	}
	for _, e := range errs {
		t.Error(e)
	}
	if len(latencies) != nSessions*calls {
		t.Errorf("%d completes answered, want %d", len(latencies), nSessions*calls)
	}
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	pct := func(p float64) time.Duration {
		if len(latencies) == 0 {
			return 0
		}
		return latencies[min(len(latencies)-1, int(p*float64(len(latencies))))]
	}
	t.Logf("%d sessions x %d tool calls in %s (%d accepts, %d rejects, %d records, %d SSE listeners): complete p50 %s, p99 %s, max %s",
		nSessions, calls, elapsed.Round(time.Millisecond), accepts, rejects, len(want), nListeners,
		pct(0.50).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond), pct(1).Round(10*time.Microsecond))
}

// serveEngine serves eng (its state in pdir) on 127.0.0.1 until ctx ends
// or stop is called, and returns the server's info once server.json is
// written. stop waits for Serve to return and fails tb if it failed.
func serveEngine(tb testing.TB, ctx context.Context, eng *engine.Engine, pdir string) (info *api.Info, stop func()) {
	tb.Helper()
	srv, err := server.New(eng, server.Config{ProjectDir: pdir})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	stop = func() {
		cancel()
		if err := <-served; err != nil {
			tb.Errorf("serve: %v", err)
		}
	}
	for i := 0; i < 500 && info == nil; i++ {
		info, _ = server.ReadInfo(pdir)
		time.Sleep(10 * time.Millisecond)
	}
	if info == nil {
		stop()
		tb.Fatal("no server.json")
	}
	return info, stop
}

// sseListener reads /events and counts file_changed events per record.
type sseListener struct {
	mu     stdsync.Mutex
	seen   map[string]int // session/record -> events
	closed error
	more   chan struct{}
}

func listen(ctx context.Context, info *api.Info) (*sseListener, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+info.Addr+"/events", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+info.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("GET /events: %s", resp.Status)
	}
	rd := bufio.NewReaderSize(resp.Body, 1<<16)
	// The server says ": connected" once it has subscribed.
	if line, err := rd.ReadString('\n'); err != nil || !strings.HasPrefix(line, ": connected") {
		resp.Body.Close()
		return nil, fmt.Errorf("GET /events: first line %q %v", line, err)
	}
	l := &sseListener{seen: map[string]int{}, more: make(chan struct{}, 1)}
	go func() {
		defer resp.Body.Close()
		var typ string
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				l.mu.Lock()
				if ctx.Err() == nil {
					l.closed = fmt.Errorf("event stream ended: %v", err)
				}
				l.mu.Unlock()
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case strings.HasPrefix(line, "event: "):
				typ = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && typ == api.EventFileChanged:
				var r struct {
					SessionID string `json:"session_id"`
					ID        string `json:"id"`
				}
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &r); err != nil {
					l.mu.Lock()
					l.closed = fmt.Errorf("bad file_changed data: %v", err)
					l.mu.Unlock()
					return
				}
				l.mu.Lock()
				l.seen[r.SessionID+"/"+r.ID]++
				l.mu.Unlock()
				select {
				case l.more <- struct{}{}:
				default:
				}
			case line == "":
				typ = ""
			}
		}
	}()
	return l, nil
}

// wait returns what the listener saw once it saw n records (or the stream
// ended, or the time is up: the counts then tell what is missing).
func (l *sseListener) wait(n int, limit time.Duration) map[string]int {
	deadline := time.After(limit)
	for {
		l.mu.Lock()
		if len(l.seen) >= n || l.closed != nil {
			out := make(map[string]int, len(l.seen))
			for k, v := range l.seen {
				out[k] = v
			}
			l.mu.Unlock()
			// A moment more, so that duplicates would show too.
			time.Sleep(50 * time.Millisecond)
			l.mu.Lock()
			for k, v := range l.seen {
				out[k] = v
			}
			l.mu.Unlock()
			return out
		}
		l.mu.Unlock()
		select {
		case <-l.more:
		case <-deadline:
			return l.snapshot()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (l *sseListener) snapshot() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]int, len(l.seen))
	for k, v := range l.seen {
		out[k] = v
	}
	return out
}

func (l *sseListener) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}
