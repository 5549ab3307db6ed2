package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	stdsync "sync"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/testenv"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/server"
)

// fuzzServer is a real server on 127.0.0.1:0 over a real workspace, with one
// session and one named checkpoint, built once per fuzz process.
type fuzzServer struct {
	url, token    string
	ws, wt, out   string
	session, cpID string
	http          *http.Client
	// errors counts the server's error log lines (5xx and failures).
	errors *countingHandler
}

// countingHandler counts records at level Error and above.
type countingHandler struct {
	slog.Handler
	mu   *stdsync.Mutex
	n    *int
	last *string
}

func (h *countingHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		msg := r.Message
		r.Attrs(func(a slog.Attr) bool { msg += " " + a.String(); return true })
		h.mu.Lock()
		*h.n++
		*h.last = msg
		h.mu.Unlock()
	}
	return nil
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) WithAttrs(as []slog.Attr) slog.Handler    { return h }
func (h *countingHandler) WithGroup(string) slog.Handler            { return h }

// count is how many errors were logged, and the last one.
func (h *countingHandler) count() (int, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return *h.n, *h.last
}

func newFuzzServer(tb testing.TB) *fuzzServer {
	tb.Helper()
	testgit.Env(tb)
	ctx := context.Background()
	ws := testgit.Init(tb, "ws")
	testgit.Write(tb, ws, "a.txt", "a\n", 0o644)
	testgit.Write(tb, ws, "dir/b.txt", "b\n", 0o644)
	testgit.Git(tb, ws, "add", "-A")
	testgit.Git(tb, ws, "commit", "-qm", "init")
	out := tb.TempDir()
	testgit.Write(tb, out, "secret", "secret\n", 0o600)
	pdir := filepath.Join(tb.TempDir(), "project")
	var n int
	var last string
	counter := &countingHandler{Handler: slog.DiscardHandler, mu: &stdsync.Mutex{}, n: &n, last: &last}
	eng := testenv.Engine(tb, ws, pdir, slog.New(counter))
	srv, err := server.New(eng, server.Config{ProjectDir: pdir, BodyLimit: 1 << 20})
	if err != nil {
		tb.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { srv.Serve(sctx); close(done) }()
	tb.Cleanup(func() { cancel(); <-done })

	fs := &fuzzServer{url: "http://" + srv.Addr(), token: srv.Token(), ws: ws, out: out,
		http: &http.Client{}, errors: counter}
	sess, err := eng.StartSession(ctx, api.StartRequest{Name: "fuzz"})
	if err != nil {
		tb.Fatal(err)
	}
	fs.session, fs.wt = sess.ID, sess.WorktreePath
	cp, err := eng.CreateCheckpoint(ctx, sess.ID, api.CheckpointRequest{Name: "start"})
	if err != nil {
		tb.Fatal(err)
	}
	fs.cpID = cp.ID
	return fs
}

// apiRoutes are the routes whose JSON bodies are fuzzed; {tc} is the
// fuzzed tool call id, {sid} the session and {cid} the checkpoint.
var apiRoutes = []struct{ method, path string }{
	{"POST", "/sessions"},
	{"POST", "/sessions/{sid}/tool-calls"},
	{"POST", "/sessions/{sid}/tool-calls/{tc}/complete"},
	{"POST", "/sessions/{sid}/checkpoints"},
	{"POST", "/sessions/{sid}/rollback"},
	{"POST", "/sessions/{sid}/checkpoints/{cid}/rewind"},
	{"POST", "/sessions/{sid}/turns"},
	{"PUT", "/sessions/{sid}/checkpoints/{cid}"},
}

// FuzzAPIBodies sends any body to the routes that decode JSON, on a real
// server. Every answer is a success with a JSON body or a 4xx with the JSON
// error shape {"error","code"}; never a 5xx, an error in the server's log,
// or a dead server. Bodies may say @WT@, @WS@ and @OUT@ for the worktree,
// the workspace and a directory outside both, so paths in tool arguments
// can aim anywhere; the workspace and the outside file stay untouched.
func FuzzAPIBodies(f *testing.F) {
	seeds := []struct {
		route uint8
		tc    string
		body  string
	}{
		{0, "", `{"name":"s","agent_id":"claude","mode":"review"}`},
		{0, "", `{"mode":"yolo"}`},
		{0, "", `{"name":"\u0000"}`},
		{0, "", `{"auto_checkpoints":false}`},
		{1, "", `{"tool_call_id":"t1","tool_name":"Write","args":{"file_path":"@WT@/a.txt"}}`},
		{1, "", `{"tool_call_id":"t2","tool_name":"Edit","args":{"file_path":"@OUT@/secret"}}`},
		{1, "", `{"tool_call_id":"t3","tool_name":"Edit","args":{"file_path":"../../../../etc/passwd"},"cwd":"@WT@"}`},
		{1, "", `{"tool_call_id":"t4","tool_name":"MultiEdit","args":{"file_path":"@WS@/a.txt","edits":[]}}`},
		{1, "", `{"tool_call_id":"t5","tool_name":"Bash","args":{"command":"echo x > @OUT@/secret; rm -rf dir"},"cwd":"@WT@"}`},
		{1, "", `{"tool_call_id":"t6","tool_name":"NotebookEdit","args":{"notebook_path":"@WT@/dir/../../x.ipynb"}}`},
		{1, "", `{"tool_call_id":"t7","tool_name":"Write","args":"not an object","message_index":-5}`},
		{1, "", `{"tool_call_id":"../x","tool_name":"Write"}`},
		{2, "t1", `{"result":{"ok":true}}`},
		{2, "t9", `{"tool_name":"Write","args":{"file_path":"@WT@/new.txt"},"cwd":"/"}`},
		{2, "t9", `{"tool_name":"Bash","args":{"command":"sed -i s/a/b/ @WT@/a.txt"},"message_index":1e99}`},
		{2, "..", `{}`},
		{2, "a%2Fb", `{}`},
		{3, "", `{"name":"cp","annotation":"why"}`},
		{3, "", `{"name":"` + strings.Repeat("n", 300) + `"}`},
		{4, "", `{"last":1,"dry_run":true}`},
		{4, "", `{"after":"not a time"}`},
		{4, "", `{"file":"@OUT@/secret"}`},
		{4, "", `{"file":"../a.txt","dry_run":true}`},
		{4, "", `{"agent_id":"claude","last":-1}`},
		{4, "", `{}`},
		{5, "", `{"dry_run":true}`},
		{5, "", `{"dry_run":"yes"}`},
		{6, "", `{"message_index":3,"prompt":"hi"}`},
		{6, "", `{"message_index":-1}`},
		{7, "", `{"annotation":"note"}`},
		{7, "", `{"annotation":null}`},
		{7, "", `[]`},
		{0, "", `{"name": `},
		{0, "", `{} {}`},
		{0, "", `null`},
		{0, "", ``},
		{1, "", `{"tool_call_id":"t8","tool_name":"Write","args":{"file_path":"@WT@/.git/config"}}`},
	}
	for _, s := range seeds {
		f.Add(s.route, s.tc, []byte(s.body))
	}
	fs := newFuzzServer(f)
	wsBefore := snapshotWS(f, fs.ws)
	f.Fuzz(func(t *testing.T, route uint8, tc string, body []byte) {
		r := apiRoutes[int(route)%len(apiRoutes)]
		path := strings.NewReplacer("{sid}", fs.session, "{cid}", fs.cpID, "{tc}", url.PathEscape(tc)).Replace(r.path)
		body = bytes.ReplaceAll(body, []byte("@WT@"), []byte(fs.wt))
		body = bytes.ReplaceAll(body, []byte("@WS@"), []byte(fs.ws))
		body = bytes.ReplaceAll(body, []byte("@OUT@"), []byte(fs.out))

		errsBefore, _ := fs.errors.count()
		status, ctype, resp := fs.do(t, r.method, path, body)
		t.Logf("%s %s: %d %.200s", r.method, path, status, resp)
		switch {
		case status >= 500:
			t.Fatalf("%s %s %q: %d %s", r.method, path, body, status, resp)
		case status >= 400:
			var e map[string]any
			if err := json.Unmarshal(resp, &e); err != nil {
				t.Fatalf("%s %s: %d with a non-JSON body %q", r.method, path, status, resp)
			}
			msg, _ := e["error"].(string)
			code, _ := e["code"].(string)
			if msg == "" || code == "" {
				t.Fatalf("%s %s: %d without error and code: %s", r.method, path, status, resp)
			}
		case status >= 200 && status < 300:
			if mt, _, _ := mime.ParseMediaType(ctype); mt != "application/json" || !json.Valid(resp) {
				t.Fatalf("%s %s: %d with %s body %q", r.method, path, status, ctype, resp)
			}
			// A session the fuzzer started is ended again, so that
			// worktrees do not pile up.
			if r.path == "/sessions" {
				var s prsm.Session
				if err := json.Unmarshal(resp, &s); err != nil || s.ID == "" {
					t.Fatalf("started session %s: %v", resp, err)
				}
				if st, _, b := fs.do(t, "DELETE", "/sessions/"+s.ID+"?discard=true", nil); st != 200 {
					t.Fatalf("end fuzzed session: %d %s", st, b)
				}
			}
		default:
			t.Fatalf("%s %s: unexpected status %d %s", r.method, path, status, resp)
		}
		if n, last := fs.errors.count(); n != errsBefore {
			t.Fatalf("%s %s %q logged an error: %s", r.method, path, body, last)
		}
		// Still serving, and nothing outside the session changed.
		if st, _, b := fs.do(t, "GET", "/sessions/"+fs.session, nil); st != 200 {
			t.Fatalf("server broken after %s %s %q: %d %s", r.method, path, body, st, b)
		}
		if d := testgit.Diff(wsBefore, snapshotWS(t, fs.ws)); d != "" {
			t.Fatalf("%s %s %q changed the workspace:\n%s", r.method, path, body, d)
		}
		if b, err := os.ReadFile(filepath.Join(fs.out, "secret")); err != nil || string(b) != "secret\n" {
			t.Fatalf("%s %s %q touched the outside file: %q %v", r.method, path, body, b, err)
		}
		if entries, _ := os.ReadDir(fs.out); len(entries) != 1 {
			t.Fatalf("%s %s %q created files outside: %v", r.method, path, body, entries)
		}
	})
}

func (fs *fuzzServer) do(t testing.TB, method, path string, body []byte) (int, string, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, fs.url+path, rd)
	if err != nil {
		t.Skip() // a path the client cannot send (the fuzzer's tc)
	}
	req.Header.Set("Authorization", "Bearer "+fs.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := fs.http.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read answer: %v", method, path, err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

// snapshotWS describes the workspace's files (less .git) byte for byte.
func snapshotWS(t testing.TB, ws string) map[string]string {
	t.Helper()
	tree, err := testgit.TreeOf(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}
