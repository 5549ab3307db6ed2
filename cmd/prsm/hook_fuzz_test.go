package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/testenv"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/server"
	"github.com/prsm-dev/prsm/worktree"
)

// hookFuzzEnv is a real server, in this process, for a real workspace with
// one session, found by `prsm hook claude` the way Claude Code's calls find
// it: through the session worktree in the event's cwd and server.json.
type hookFuzzEnv struct {
	ws, wt, out string
	mu          stdsync.Mutex
	errs        []string // the server's error log lines
}

func (e *hookFuzzEnv) Enabled(context.Context, slog.Level) bool { return true }
func (e *hookFuzzEnv) WithAttrs([]slog.Attr) slog.Handler       { return e }
func (e *hookFuzzEnv) WithGroup(string) slog.Handler            { return e }
func (e *hookFuzzEnv) Handle(_ context.Context, r slog.Record) error {
	if r.Level < slog.LevelError {
		return nil
	}
	msg := r.Message
	r.Attrs(func(a slog.Attr) bool { msg += " " + a.String(); return true })
	e.mu.Lock()
	e.errs = append(e.errs, msg)
	e.mu.Unlock()
	return nil
}

func (e *hookFuzzEnv) errCount() (int, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.errs) == 0 {
		return 0, ""
	}
	return len(e.errs), e.errs[len(e.errs)-1]
}

func newHookFuzzEnv(tb testing.TB) *hookFuzzEnv {
	tb.Helper()
	home := testgit.Env(tb)
	tb.Setenv("PRSM_SESSION_ID", "")
	tb.Setenv("PRSM_WORKSPACE", "")

	ctx := context.Background()
	ws := testgit.Init(tb, "ws")
	testgit.Write(tb, ws, "a.txt", "a\n", 0o644)
	testgit.Write(tb, ws, "dir/b.txt", "b\n", 0o644)
	testgit.Git(tb, ws, "add", "-A")
	testgit.Git(tb, ws, "commit", "-qm", "init")
	out := tb.TempDir()
	testgit.Write(tb, out, "secret", "secret\n", 0o600)
	repo, err := worktree.Discover(ctx, nil, ws)
	if err != nil {
		tb.Fatal(err)
	}
	env := &hookFuzzEnv{ws: ws, out: out}
	eng := testenv.Engine(tb, ws, prsm.ProjectDir(home, repo.Identity), slog.New(env))
	pdir := eng.ProjectDir
	srv, err := server.New(eng, server.Config{ProjectDir: pdir})
	if err != nil {
		tb.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { srv.Serve(sctx); close(done) }()
	tb.Cleanup(func() { cancel(); <-done })
	sess, err := eng.StartSession(ctx, api.StartRequest{Name: "fuzz"})
	if err != nil {
		tb.Fatal(err)
	}
	env.wt = sess.WorktreePath
	// Serve writes server.json before it serves; the hook needs it.
	for i := 0; ; i++ {
		if _, err := server.ReadInfo(pdir); err == nil {
			break
		}
		if i == 1000 {
			tb.Fatal("server.json not written")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return env
}

// FuzzClaudeHook feeds any stdin to `prsm hook claude`, run in this process
// against a real server. Claude Code reads exit code 2 as "block the tool"
// and shows stdout to the model, so whatever the input:
//   - the exit code is 0 or 1, never 2 (nor a panic);
//   - nothing is printed on stdout, but for the answer that moves a file
//     tool's workspace path onto the worktree: one JSON object, on exit 0,
//     whose path is in the worktree;
//   - success prints nothing at all (on stderr; with the answer, at most
//     the one line of a failed send), failure exactly one line on stderr;
//   - the server logs no error (no 5xx), the workspace and a file outside
//     are untouched (the hook only reports; nothing changed in the worktree).
//
// Payloads may say @CWD@ (the session worktree, so events reach the
// server), @WS@ (the workspace) and @OUT@ (a directory outside both).
func FuzzClaudeHook(f *testing.F) {
	files, err := filepath.Glob(filepath.Join(hookFixtures, "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no fixtures in %s: %v", hookFixtures, err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		``, `{`, `[]`, `null`, `"x"`, `{"hook_event_name":""}`,
		`{"hook_event_name":"PreToolUse","cwd":"@CWD@"}`,
		`{"hook_event_name":"PreToolUse","cwd":"@CWD@","tool_name":"Write","tool_input":{"file_path":"@OUT@/secret","content":"x"}}`,
		`{"hook_event_name":"PreToolUse","cwd":"@CWD@","tool_name":"Edit","tool_input":{"file_path":"@WS@/a.txt"},"tool_use_id":"../../x"}`,
		`{"hook_event_name":"PostToolUse","cwd":"@CWD@/dir/../..","tool_name":"Bash","tool_input":{"command":"rm -rf /"},"tool_response":7}`,
		`{"hook_event_name":"PostToolUseFailure","cwd":"@CWD@","tool_name":"Bash","tool_input":"x","error":{"a":[1]},"is_interrupt":"yes"}`,
		`{"hook_event_name":"UserPromptSubmit","cwd":"@CWD@","prompt":"\u0000\u001b[31m"}`,
		`{"hook_event_name":"PreToolUse","cwd":"@CWD@","tool_name":"Write","agent_id":"a1","agent_type":"\n\t"}`,
		`{"hook_event_name":"PreToolUse","cwd":"@CWD@","tool_name":" ","session_id":7}`,
		`{"hook_event_name":"PreToolUse","cwd":"@WS@","tool_name":"Write"}`,
		`{"hook_event_name":"PreToolUse","cwd":"@CWD@","tool_name":"Write","tool_use_id":"` + strings.Repeat("x", 200) + `"}`,
	} {
		f.Add([]byte(s))
	}
	env := newHookFuzzEnv(f)
	wsBefore, err := testgit.TreeOf(env.ws, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		payload = bytes.ReplaceAll(payload, []byte("@CWD@"), jsonPath(env.wt))
		payload = bytes.ReplaceAll(payload, []byte("@WS@"), jsonPath(env.ws))
		payload = bytes.ReplaceAll(payload, []byte("@OUT@"), jsonPath(env.out))

		// Should the hook ever try to start a server in the background, it
		// would run this test binary again; make that a harmless failure.
		// (Only here: the fuzzing coordinator starts its workers with
		// os.Args[0].)
		arg0 := os.Args[0]
		os.Args[0] = "/bin/false"
		defer func() { os.Args[0] = arg0 }()

		errsBefore, _ := env.errCount()
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), []string{"hook", "claude"}, Stdio{In: bytes.NewReader(payload), Out: &stdout, Err: &stderr})
		t.Logf("exit %d, stderr %q", code, stderr.String())
		if code != 0 && code != 1 {
			t.Fatalf("exit code %d for %q (stderr %q)", code, payload, stderr.String())
		}
		answered := stdout.Len() > 0
		if answered {
			checkMoveAnswer(t, stdout.Bytes(), code, env.wt)
		}
		switch {
		case answered && strings.Count(stderr.String(), "\n") > 1:
			t.Fatalf("an answer with stderr %q, want one line at most", stderr.String())
		case code == 0 && stderr.Len() > 0 && !answered:
			t.Fatalf("exit 0 with stderr %q", stderr.String())
		case code == 1 && (strings.Count(stderr.String(), "\n") != 1 || !strings.HasSuffix(stderr.String(), "\n")):
			t.Fatalf("exit 1 with stderr %q, want one line", stderr.String())
		}
		if n, last := env.errCount(); n != errsBefore {
			t.Fatalf("the server logged an error for %q: %s", payload, last)
		}
		wsNow, err := testgit.TreeOf(env.ws, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := testgit.Diff(wsBefore, wsNow); d != "" {
			t.Fatalf("the workspace changed:\n%s", d)
		}
		if b, err := os.ReadFile(filepath.Join(env.out, "secret")); err != nil || string(b) != "secret\n" {
			t.Fatalf("the outside file changed: %q %v", b, err)
		}
	})
}

// checkMoveAnswer fails unless out is one PreToolUse answer, printed on
// exit 0, that moves a file tool's path into the worktree wt.
func checkMoveAnswer(t *testing.T, out []byte, code int, wt string) {
	t.Helper()
	var a struct {
		HookSpecificOutput struct {
			HookEventName      string                     `json:"hookEventName"`
			PermissionDecision string                     `json:"permissionDecision"`
			UpdatedInput       map[string]json.RawMessage `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&a); err != nil || dec.More() || code != 0 {
		t.Fatalf("printed on stdout (exit %d): %q", code, out)
	}
	h := a.HookSpecificOutput
	var path string
	for _, field := range []string{"file_path", "notebook_path"} {
		if raw, ok := h.UpdatedInput[field]; ok && json.Unmarshal(raw, &path) == nil {
			break
		}
	}
	rel, err := filepath.Rel(wt, path)
	if h.HookEventName != "PreToolUse" || (h.PermissionDecision != "allow" && h.PermissionDecision != "ask") ||
		err != nil || !filepath.IsLocal(rel) {
		t.Fatalf("an answer that does not move the path into the worktree: %q", out)
	}
}

// jsonPath is p as the inside of a JSON string.
func jsonPath(p string) []byte {
	b, _ := json.Marshal(p)
	return b[1 : len(b)-1]
}
