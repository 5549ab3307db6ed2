package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/internal/osproc"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/server"
	"github.com/prsm-dev/prsm/tracker"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"prsm": func() { os.Exit(Main()) }})
}

// TestScripts runs the CLI end to end: the real binary against real git
// repositories in temp dirs (testdata/script/*.txtar). An agent's scripts
// are named by the command they drive: hook_AGENT[_what] replays its
// events through `prsm hook AGENT`, hooks_AGENT[_what] is `prsm hooks
// install|uninstall AGENT`, run_AGENT is `prsm run -- AGENT`.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:   "testdata/script",
		Setup: setupScript,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"sametree":        cmdSameTree,
			"setjson":         cmdSetJSON,
			"ambiguousprefix": cmdAmbiguousPrefix,
			"agent":           cmdAgent,
			"claudehook":      cmdClaudeHook,
			"codexhook":       cmdCodexHook,
			"listcheckpoints": cmdListCheckpoints,
			"checkpoints":     cmdCheckpoints,
			"recordsummary":   cmdRecordSummary,
			"killserver":      cmdKillServer,
			"agentby":         cmdAgentBy,
			"turn":            cmdTurn,
			"setre":           cmdSetRe,
			"validtrace":      cmdValidTrace,
			"samefiles":       cmdSameFiles,
			"uilogin":         cmdUILogin,
			"waitfile":        cmdWaitFile,
			"pty":             cmdPty,
			"serverpid":       cmdServerPID,
			"exits":           cmdExits,
		},
	})
}

// setupScript gives each script a clean git and prsm environment, and stops
// any server the script started when it ends.
func setupScript(env *testscript.Env) error {
	home := filepath.Join(env.WorkDir, ".home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	cfg := filepath.Join(home, ".gitconfig")
	if err := os.WriteFile(cfg, []byte("[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"), 0o644); err != nil {
		return err
	}
	prsmHome := filepath.Join(env.WorkDir, ".prsm")
	env.Setenv("HOME", home)
	env.Setenv("GIT_CONFIG_GLOBAL", cfg)
	env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	env.Setenv("PRSM_HOME", prsmHome)
	// A race-enabled binary sleeps a second at exit by default; every prsm
	// call in a script would pay it.
	env.Setenv("GORACE", "atexit_sleep_ms=0")
	// A claude first on PATH that is older than the exec form of hooks,
	// so that a Claude Code on the machine does not change what `prsm
	// hooks install claude` writes (hooks_claude_exec.txtar puts its own
	// before it).
	bin := filepath.Join(env.WorkDir, ".bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\necho '1.0.0 (Claude Code)'\n"), 0o755); err != nil {
		return err
	}
	env.Setenv("PATH", bin+string(filepath.ListSeparator)+env.Getenv("PATH"))
	work := env.WorkDir
	env.Defer(func() { stopServers(work) })
	return nil
}

// stopServers terminates every server that left a server.json under dir:
// in $PRSM_HOME, and in any other home a script points PRSM_HOME at (a
// failing script does not get to stop those itself).
func stopServers(dir string) {
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == server.InfoFile && filepath.Base(filepath.Dir(filepath.Dir(p))) == "projects" {
			files = append(files, p)
		}
		return nil
	})
	for _, f := range files {
		info, err := server.ReadInfo(filepath.Dir(f))
		if err != nil || info.PID <= 0 {
			continue
		}
		osproc.Stop(info.PID, false)
		for i := 0; i < 100 && osproc.Alive(info.PID); i++ {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// sametree A B: the files under A (less .git and git-ignored files) equal
// those under B byte for byte, with modes and symlinks.
func cmdSameTree(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: sametree DIR DIR")
	}
	a, b := ts.MkAbs(args[0]), ts.MkAbs(args[1])
	skip, err := testgit.IgnoredOf(a)
	ts.Check(err)
	ta, err := testgit.TreeOf(a, skip)
	ts.Check(err)
	tb, err := testgit.TreeOf(b, nil)
	ts.Check(err)
	d := testgit.Diff(ta, tb)
	if neg && d == "" {
		ts.Fatalf("trees are equal")
	}
	if !neg && d != "" {
		ts.Fatalf("trees differ:\n%s", d)
	}
}

// setjson NAME FILE FIELD: sets $NAME to FIELD of the JSON object in FILE.
func cmdSetJSON(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 || neg {
		ts.Fatalf("usage: setjson NAME FILE FIELD")
	}
	var m map[string]any
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[1])), &m))
	v, ok := m[args[2]]
	if !ok {
		ts.Fatalf("no field %q in %s", args[2], args[1])
	}
	ts.Setenv(args[0], fmt.Sprint(v))
}

// ambiguousprefix NAME FILE: FILE holds a JSON list of sessions; sets $NAME
// to a one-character prefix shared by at least two of their ids.
func cmdAmbiguousPrefix(ts *testscript.TestScript, neg bool, args []string) {
	var list []struct{ ID string }
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[1])), &list))
	seen := map[string]int{}
	for _, s := range list {
		seen[s.ID[:1]]++
	}
	var keys []string
	for k, n := range seen {
		if n > 1 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		ts.Fatalf("no shared prefix among %d sessions", len(list))
	}
	sort.Strings(keys)
	ts.Setenv(args[0], keys[0])
	ts.Logf("ambiguous prefix %s among %s", keys[0], strings.Repeat("*", seen[keys[0]]))
}

// agent SESSION TOOL_CALL_ID TOOL_NAME REL_PATH|- -- SHELL_COMMAND plays an
// agent's tool call against the script's one server: the pre-tool capture
// (args {"file_path": <worktree path>} when REL_PATH is given, else
// {"command": SHELL_COMMAND}), then SHELL_COMMAND run by sh in the session's
// worktree (with the script's environment, $WT set to the worktree), then
// complete. It prints the records JSON of complete.
func cmdAgent(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 6 || args[4] != "--" {
		ts.Fatalf("usage: agent SESSION TOOL_CALL_ID TOOL_NAME REL_PATH|- -- SHELL_COMMAND")
	}
	sid, tcID, tool, rel, shell := args[0], args[1], args[2], args[3], args[5]
	files, err := filepath.Glob(filepath.Join(ts.Getenv("PRSM_HOME"), "projects", "*", server.InfoFile))
	ts.Check(err)
	if len(files) != 1 {
		ts.Fatalf("want one server.json under $PRSM_HOME/projects, found %d", len(files))
	}
	info, err := server.ReadInfo(filepath.Dir(files[0]))
	ts.Check(err)
	cl := client.New(info)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := cl.Session(ctx, sid)
	ts.Check(err)

	toolArgs := map[string]string{"command": shell}
	if rel != "-" {
		toolArgs = map[string]string{"file_path": filepath.Join(s.WorktreePath, filepath.FromSlash(rel))}
	}
	raw, err := json.Marshal(toolArgs)
	ts.Check(err)
	_, err = cl.StartToolCall(ctx, s.ID, api.ToolCallRequest{
		ToolCallID: tcID, ToolName: tool, Args: raw, Cwd: s.WorktreePath,
	})
	ts.Check(err)
	if err := ts.Exec("sh", "-c", `cd "$1" && WT="$1" && eval "$2"`, "sh", s.WorktreePath, shell); err != nil {
		ts.Fatalf("agent command failed: %v", err)
	}
	recs, err := cl.CompleteToolCall(ctx, s.ID, tcID, api.CompleteRequest{Result: json.RawMessage(`{"ok":true}`)})
	ts.Check(err)
	enc := json.NewEncoder(ts.Stdout())
	enc.SetIndent("", "  ")
	ts.Check(enc.Encode(recs))
}

// scriptClient is a client of the script's one server, and the session sid
// (id or unique prefix).
func scriptClient(ts *testscript.TestScript, ctx context.Context, sid string) (*client.Client, *prsm.Session) {
	files, err := filepath.Glob(filepath.Join(ts.Getenv("PRSM_HOME"), "projects", "*", server.InfoFile))
	ts.Check(err)
	if len(files) != 1 {
		ts.Fatalf("want one server.json under $PRSM_HOME/projects, found %d", len(files))
	}
	info, err := server.ReadInfo(filepath.Dir(files[0]))
	ts.Check(err)
	cl := client.New(info)
	s, err := cl.Session(ctx, sid)
	ts.Check(err)
	return cl, s
}

// agentby AGENT_ID SESSION TOOL_CALL_ID TOOL_NAME REL_PATH|- -- SHELL_COMMAND
// is agent with the tool call's agent_id set to AGENT_ID.
func cmdAgentBy(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 7 || args[5] != "--" {
		ts.Fatalf("usage: agentby AGENT_ID SESSION TOOL_CALL_ID TOOL_NAME REL_PATH|- -- SHELL_COMMAND")
	}
	agentID, sid, tcID, tool, rel, shell := args[0], args[1], args[2], args[3], args[4], args[6]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, s := scriptClient(ts, ctx, sid)
	toolArgs := map[string]string{"command": shell}
	if rel != "-" {
		toolArgs = map[string]string{"file_path": filepath.Join(s.WorktreePath, filepath.FromSlash(rel))}
	}
	raw, err := json.Marshal(toolArgs)
	ts.Check(err)
	_, err = cl.StartToolCall(ctx, s.ID, api.ToolCallRequest{
		ToolCallID: tcID, ToolName: tool, Args: raw, Cwd: s.WorktreePath, AgentID: agentID,
	})
	ts.Check(err)
	if err := ts.Exec("sh", "-c", `cd "$1" && WT="$1" && eval "$2"`, "sh", s.WorktreePath, shell); err != nil {
		ts.Fatalf("agent command failed: %v", err)
	}
	recs, err := cl.CompleteToolCall(ctx, s.ID, tcID, api.CompleteRequest{Result: json.RawMessage(`{"ok":true}`)})
	ts.Check(err)
	enc := json.NewEncoder(ts.Stdout())
	enc.SetIndent("", "  ")
	ts.Check(enc.Encode(recs))
}

// turn SESSION [PROMPT] starts a turn (POST /sessions/{id}/turns) and
// prints the checkpoint JSON it answers with.
func cmdTurn(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: turn SESSION [PROMPT]")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, s := scriptClient(ts, ctx, args[0])
	req := api.TurnRequest{}
	if len(args) == 2 {
		req.Prompt = args[1]
	}
	cp, err := cl.Turn(ctx, s.ID, req)
	ts.Check(err)
	enc := json.NewEncoder(ts.Stdout())
	enc.SetIndent("", "  ")
	ts.Check(enc.Encode(cp))
}

// setre NAME FILE REGEXP sets $NAME to the first group of REGEXP's first
// match in FILE (multi-line mode).
func cmdSetRe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: setre NAME FILE REGEXP")
	}
	re, err := regexp.Compile("(?m)" + args[2])
	ts.Check(err)
	m := re.FindStringSubmatch(ts.ReadFile(args[1]))
	if len(m) < 2 {
		ts.Fatalf("no match of %s (with a group) in %s", args[2], args[1])
	}
	ts.Setenv(args[0], m[1])
}

// samefiles A B is sametree, except that it does not see the sentinel files
// the server's watcher writes for an instant into a worktree root when it
// flushes (tracker.SentinelPrefix): a rollback's writes can set one off
// while the script compares. A file vanishing mid-walk is retried.
func cmdSameFiles(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: samefiles DIR DIR")
	}
	a, b := ts.MkAbs(args[0]), ts.MkAbs(args[1])
	tree := func(dir string, skip map[string]bool) map[string]string {
		var err error
		for i := 0; i < 20; i++ {
			var t map[string]string
			if t, err = testgit.TreeOf(dir, skip); err == nil {
				for k := range t {
					if strings.HasPrefix(filepath.Base(k), tracker.SentinelPrefix) {
						delete(t, k)
					}
				}
				return t
			}
			time.Sleep(20 * time.Millisecond)
		}
		ts.Fatalf("read %s: %v", dir, err)
		return nil
	}
	skip, err := testgit.IgnoredOf(a)
	ts.Check(err)
	d := testgit.Diff(tree(a, skip), tree(b, nil))
	if neg && d == "" {
		ts.Fatalf("trees are equal")
	}
	if !neg && d != "" {
		ts.Fatalf("trees differ:\n%s", d)
	}
}

// prsmBinary is the test binary's copy that testscript.Main put first on
// PATH under the name prsm: run under that name it is prsm's main.
func prsmBinary(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("prsm")
	if err != nil {
		t.Fatalf("prsm on PATH (testscript.Main puts it there): %v", err)
	}
	if !strings.HasPrefix(filepath.Base(filepath.Dir(filepath.Dir(p))), "testscript-main") {
		t.Fatalf("prsm on PATH is %s, not this test binary's copy", p)
	}
	return p
}

// alive says whether pid is a running process (a zombie is not).
func alive(pid int) bool {
	if !osproc.Alive(pid) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: kill(0) says it exists
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// which must answer.
func liveClient(ctx context.Context, t *testing.T, projectDir string) *client.Client {
	t.Helper()
	_, cl, ok := client.LiveServer(ctx, projectDir)
	if !ok {
		t.Fatalf("the server of %s does not answer", projectDir)
	}
	return cl
}
