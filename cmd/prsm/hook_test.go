package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents/agenttest"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/internal/osproc"
	"github.com/prsm-dev/prsm/server"
)

// hookFixtures holds the Claude Code hook payloads; "@CWD@" in them stands
// for the directory the agent works in.
var hookFixtures, _ = filepath.Abs(filepath.Join("testdata", "hooks"))

// [!] claudehook [-answer] FIXTURE CWD [NAME=VALUE...] feeds a hook
// payload (a fixture name or a file, @CWD@ replaced by CWD) to `prsm hook
// claude`, as Claude Code does, with NAME=VALUE added to its environment.
// The hook must print nothing on stdout and exit 0; with !, it must exit 1
// with one line on stderr. Exit 2 fails either way. Its stderr becomes the
// command's. With -answer it must instead print one JSON object with
// hookSpecificOutput (what Claude Code reads on exit 0), which becomes the
// command's stdout.
func cmdClaudeHook(ts *testscript.TestScript, neg bool, args []string) {
	answer := len(args) > 0 && args[0] == "-answer"
	if answer {
		args = args[1:]
	}
	if len(args) < 2 {
		ts.Fatalf("usage: [!] claudehook [-answer] FIXTURE CWD [NAME=VALUE...]")
	}
	fixture := args[0]
	if strings.ContainsRune(fixture, '/') {
		fixture = ts.MkAbs(fixture)
	}
	payload, err := agenttest.Payload(fixture, args[1])
	ts.Check(err)
	dir := filepath.Join(ts.Getenv("WORK"), ".claudehook")
	ts.Check(os.MkdirAll(dir, 0o755))
	in, out := filepath.Join(dir, "in.json"), filepath.Join(dir, "out")
	ts.Check(os.WriteFile(in, payload, 0o644))
	script := `in=$1 out=$2; shift 2; env "$@" prsm hook claude <"$in" >"$out.stdout" 2>"$out.stderr"; echo $? >"$out.rc"`
	ts.Check(ts.Exec("sh", append([]string{"-c", script, "sh", in, out}, args[2:]...)...))
	stdout, stderr, rc := ts.ReadFile(out+".stdout"), ts.ReadFile(out+".stderr"), strings.TrimSpace(ts.ReadFile(out+".rc"))
	fmt.Fprint(ts.Stderr(), stderr)
	switch {
	case answer:
		var a struct {
			HookSpecificOutput map[string]any `json:"hookSpecificOutput"`
		}
		dec := json.NewDecoder(strings.NewReader(stdout))
		if err := dec.Decode(&a); err != nil || a.HookSpecificOutput == nil || dec.More() {
			ts.Fatalf("prsm hook claude printed %q, want one JSON object with hookSpecificOutput (%v)", stdout, err)
		}
		fmt.Fprint(ts.Stdout(), stdout)
	case stdout != "":
		ts.Fatalf("prsm hook claude printed on stdout: %q", stdout)
	}
	switch {
	case rc == "2":
		ts.Fatalf("prsm hook claude exited 2, which blocks the tool")
	case neg && rc != "1":
		ts.Fatalf("prsm hook claude exited %s, want 1", rc)
	case neg && strings.Count(stderr, "\n") != 1:
		ts.Fatalf("prsm hook claude failed with %d lines on stderr, want 1: %q", strings.Count(stderr, "\n"), stderr)
	case !neg && rc != "0":
		ts.Fatalf("prsm hook claude exited %s: %s", rc, stderr)
	}
}

// scriptServer is the script's one server and a client of it.
func scriptServer(ts *testscript.TestScript) (*client.Client, *api.Info) {
	files, err := filepath.Glob(filepath.Join(ts.Getenv("PRSM_HOME"), "projects", "*", server.InfoFile))
	ts.Check(err)
	if len(files) != 1 {
		ts.Fatalf("want one server.json under $PRSM_HOME/projects, found %d", len(files))
	}
	info, err := server.ReadInfo(filepath.Dir(files[0]))
	ts.Check(err)
	return client.New(info), info
}

// listcheckpoints SESSION prints the session's checkpoints as JSON.
func cmdListCheckpoints(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: listcheckpoints SESSION")
	}
	cl, _ := scriptServer(ts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var list []*prsm.Checkpoint
	ts.Check(cl.Do(ctx, http.MethodGet, "/sessions/"+args[0]+"/checkpoints", nil, &list))
	enc := json.NewEncoder(ts.Stdout())
	enc.SetIndent("", "  ")
	ts.Check(enc.Encode(list))
}

// checkpoints SESSION N PREFIX creates N named checkpoints, "PREFIX 1" to
// "PREFIX N", through the API in this process: as many CLI runs cost a
// start of the race-built binary each.
func cmdCheckpoints(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: checkpoints SESSION N PREFIX")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	cl, _ := scriptServer(ts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := 1; i <= n; i++ {
		var cp prsm.Checkpoint
		ts.Check(cl.Do(ctx, http.MethodPost, "/sessions/"+args[0]+"/checkpoints", api.CheckpointRequest{Name: fmt.Sprintf("%s %d", args[2], i)}, &cp))
	}
}

// recordsummary FILE prints one line per record of the JSON list in FILE
// (the output of `prsm changes --json`): id, tool, change type, path,
// agent and message index.
func cmdRecordSummary(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: recordsummary FILE")
	}
	var recs []*prsm.Record
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &recs))
	for _, r := range recs {
		fmt.Fprintf(ts.Stdout(), "%s %s %s %s %s %d\n", r.ID, r.ToolName, r.ChangeType, r.RelPath, r.AgentID, r.MessageIndex)
	}
}

// killserver [-livepid | -foreign | -otherprsm] kills the script's server with SIGKILL,
// leaving its server.json behind as a crash does, and waits until its port
// is closed. -livepid then makes server.json name a process that runs (a
// sleep, until the script ends), as when another program took the dead
// server's pid; -foreign also listens on the dead server's port with an HTTP
// server that is not prsm's (it answers 404 to everything), until the
// script ends; -otherprsm with one that answers as another workspace's
// prsm server would (401, code unauthorized).
func cmdKillServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 1 || (len(args) == 1 && args[0] != "-livepid" && args[0] != "-foreign" && args[0] != "-otherprsm") {
		ts.Fatalf("usage: killserver [-livepid | -foreign | -otherprsm]")
	}
	_, info := scriptServer(ts)
	ts.Check(osproc.Stop(info.PID, true))
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", info.Addr, time.Second)
		if err != nil {
			break
		}
		c.Close()
		if i == 500 {
			ts.Fatalf("server %d still answers after SIGKILL", info.PID)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(args) == 0 {
		return
	}
	files, err := filepath.Glob(filepath.Join(ts.Getenv("PRSM_HOME"), "projects", "*", server.InfoFile))
	ts.Check(err)
	var raw map[string]any
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(files[0])), &raw))
	sleep := exec.Command("sleep", "600")
	ts.Check(sleep.Start())
	ts.Defer(func() { sleep.Process.Kill(); sleep.Wait() })
	raw["pid"] = sleep.Process.Pid
	b, err := json.Marshal(raw)
	ts.Check(err)
	ts.Check(os.WriteFile(files[0], b, 0o600))
	if args[0] == "-livepid" {
		return
	}
	ln, err := net.Listen("tcp", info.Addr)
	ts.Check(err)
	srv := &http.Server{Handler: http.NotFoundHandler()}
	if args[0] == "-otherprsm" {
		srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"missing or wrong token","code":"unauthorized"}`))
		})
	}
	go srv.Serve(ln)
	ts.Defer(func() { srv.Close() })
}

// TestClaudePayloads maps every fixture to its server call.
// Without tool_use_id (old Claude Code), Pre and Post still meet on one
// derived id: the same for the same input however its keys are ordered,
// different for a different input.
// The session is read from the cwd's place under PRSM_HOME, symlinks
// resolved, never by string prefix.
// A server that takes the connection and never answers: the hook gives up
// when its time is up, without starting anything.
// runHook runs `prsm hook claude ARGS` in this process with stdin.
func runHook(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), append([]string{"hook"}, args...), Stdio{In: strings.NewReader(stdin), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

// Bad input never exits 2 and says what is wrong in one line; events prsm
// has no use for, and events outside every session, are silent no-ops.
func TestHookBadInput(t *testing.T) {
	home := t.TempDir()
	t.Setenv("PRSM_HOME", home)
	t.Setenv("PRSM_SESSION_ID", "")
	t.Setenv("PRSM_WORKSPACE", "")
	// A session worktree whose server is gone and whose workspace cannot
	// be found: the hook cannot start a server for it.
	wt := filepath.Join(home, "projects", "repo-1234abcd", "worktrees", "0123456789ab")
	if err := os.MkdirAll(wt, 0o700); err != nil {
		t.Fatal(err)
	}
	pre := func(cwd string) string {
		b, err := agenttest.Payload("pre-write", cwd)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		name, stdin string
		args        []string
		code        int
		stderr      string
	}{
		{"empty", "", nil, 1, "malformed hook event"},
		{"truncated", `{"hook_event_name": "PreToolUse"`, nil, 1, "malformed hook event"},
		{"array", `[]`, nil, 1, "malformed hook event"},
		{"no event", `{"cwd": "/tmp"}`, nil, 1, "no hook_event_name"},
		{"no tool", `{"hook_event_name": "PreToolUse", "cwd": "/tmp"}`, nil, 1, "no tool_name"},
		{"bad field type", `{"hook_event_name": "PreToolUse", "tool_name": 7}`, nil, 1, "malformed hook event"},
		{"unknown event", `{"hook_event_name": "SomethingNew", "cwd": "/tmp", "extra": [1]}`, nil, 0, ""},
		{"unknown tool outside sessions", `{"hook_event_name": "PreToolUse", "tool_name": "Frobnicate", "cwd": "/tmp"}`, nil, 0, ""},
		{"outside sessions", pre(t.TempDir()), nil, 0, ""},
		{"server gone", pre(wt), nil, 1, "prsm hook: server not running, and it cannot be started: cannot find the workspace"},
		{"argument", "{}", []string{"claude", "--verbose"}, 1, "takes no arguments"},
		{"no agent", "", []string{}, 1, "needs an agent"},
		{"unknown agent", "", []string{"frobnicate"}, 1, `unknown agent "frobnicate"; prsm knows: claude, codex, copilot, cursor, gemini, opencode`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if args == nil {
				args = []string{"claude"}
			}
			code, stdout, stderr := runHook(t, tc.stdin, args...)
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			if tc.stderr == "" {
				if stderr != "" {
					t.Errorf("stderr %q, want nothing", stderr)
				}
				return
			}
			if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q, want one line with %q", stderr, tc.stderr)
			}
		})
	}
}
