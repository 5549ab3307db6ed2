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
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/safepath"
)

func TestClaudePayloads(t *testing.T) {
	const wt = "/home/u/.prsm/projects/repo-1234abcd/worktrees/0123456789ab"
	type want struct {
		kind, id, tool, agent string
	}
	tests := map[string]want{
		"pre-write":          {hookStart, "toolu_01WriteHello", "Write", "claude"},
		"post-write":         {hookComplete, "toolu_01WriteHello", "Write", "claude"},
		"pre-edit":           {hookStart, "toolu_02EditAlpha", "Edit", "claude"},
		"post-edit":          {hookComplete, "toolu_02EditAlpha", "Edit", "claude"},
		"pre-multiedit":      {hookStart, "toolu_03MultiEditB", "MultiEdit", "claude"},
		"post-multiedit":     {hookComplete, "toolu_03MultiEditB", "MultiEdit", "claude"},
		"pre-notebookedit":   {hookStart, "toolu_04NotebookCell", "NotebookEdit", "claude"},
		"post-notebookedit":  {hookComplete, "toolu_04NotebookCell", "NotebookEdit", "claude"},
		"pre-bash":           {hookStart, "toolu_05BashShuffle", "Bash", "claude"},
		"post-bash":          {hookComplete, "toolu_05BashShuffle", "Bash", "claude"},
		"pre-bash-ls":        {hookStart, "toolu_06BashList", "Bash", "claude"},
		"post-bash-ls":       {hookComplete, "toolu_06BashList", "Bash", "claude"},
		"post-write-missed":  {hookComplete, "toolu_07WriteMissed", "Write", "claude"},
		"pre-bash-fail":      {hookStart, "toolu_08BashFails", "Bash", "claude"},
		"post-bash-fail":     {hookComplete, "toolu_08BashFails", "Bash", "claude"},
		"pre-subagent-edit":  {hookStart, "toolu_09SubagentEdit", "Edit", "claude/general-purpose"},
		"post-subagent-edit": {hookComplete, "toolu_09SubagentEdit", "Edit", "claude/general-purpose"},
		"pre-write-second":   {hookStart, "toolu_10WriteSecond", "Write", "claude"},
		"post-write-second":  {hookComplete, "toolu_10WriteSecond", "Write", "claude"},
		"pre-edit-noid":      {hookStart, "", "Edit", "claude"},
		"post-edit-noid":     {hookComplete, "", "Edit", "claude"},
		"pre-edit-restart":   {hookStart, "toolu_11EditAfterRestart", "Edit", "claude"},
		"post-edit-restart":  {hookComplete, "toolu_11EditAfterRestart", "Edit", "claude"},
		"pre-bash-env":       {hookStart, "toolu_12BashFromEnv", "Bash", "claude"},
		"post-bash-env":      {hookComplete, "toolu_12BashFromEnv", "Bash", "claude"},
		"pre-write-outside":  {hookStart, "toolu_13WriteOutside", "Write", "claude"},
		"post-write-outside": {hookComplete, "toolu_13WriteOutside", "Write", "claude"},
		"prompt":             {hookTurn, "", "", ""},
		"prompt-second":      {hookTurn, "", "", ""},
		"stop":               {hookTurnEnd, "", "", ""},
		"stop-background":    {}, // a subagent still runs: the turn goes on
		"session-start":      {},
		"session-end":        {},
		"notification":       {},
		// Captured from the real Claude Code 2.1.328 (TestRealAgentClaude):
		// prompt_id and effort (an object) on every event, duration_ms,
		// structuredPatch and originalFile, bashEditDiff, Stop's
		// last_assistant_message and background_tasks.
		"real-session-start": {},
		"real-prompt":        {hookTurn, "", "", ""},
		"real-pre-write":     {hookStart, "toolu_01RealWriteHello", "Write", "claude"},
		"real-post-write":    {hookComplete, "toolu_01RealWriteHello", "Write", "claude"},
		"real-pre-edit":      {hookStart, "toolu_02RealEditHello", "Edit", "claude"},
		"real-post-edit":     {hookComplete, "toolu_02RealEditHello", "Edit", "claude"},
		"real-pre-bash":      {hookStart, "toolu_03RealBashShuffle", "Bash", "claude"},
		"real-post-bash":     {hookComplete, "toolu_03RealBashShuffle", "Bash", "claude"},
		"real-stop":          {hookTurnEnd, "", "", ""},
		"real-session-end":   {},
		// A background task ended: its notification comes as a prompt,
		// and is no turn; what its Agent call left pending is its.
		"real-task-notification": {hookComplete, "toolu_40Agent", "Agent", "claude"},
	}
	files, err := filepath.Glob(filepath.Join(hookFixtures, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in %s: %v", hookFixtures, err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			w, ok := tests[name]
			if !ok {
				t.Fatalf("fixture %s has no row in this test", name)
			}
			payload, err := fixturePayload(name, wt)
			if err != nil {
				t.Fatal(err)
			}
			p, err := readClaudePayload(bytes.NewReader(payload))
			if err != nil {
				t.Fatal(err)
			}
			if p.Cwd != wt {
				t.Errorf("cwd = %q, want %q", p.Cwd, wt)
			}
			call, err := p.call()
			if err != nil {
				t.Fatal(err)
			}
			if w.kind == "" {
				if call != nil {
					t.Fatalf("%s makes a %s call, want none", p.HookEventName, call.kind)
				}
				return
			}
			if call == nil || call.kind != w.kind {
				t.Fatalf("call = %+v, want kind %s", call, w.kind)
			}
			switch call.kind {
			case hookTurn:
				if call.turn.MessageIndex != 0 || call.turn.Prompt != p.Prompt || p.Prompt == "" {
					t.Errorf("turn = %+v, want the prompt and no message index", call.turn)
				}
				return
			case hookTurnEnd:
				if call.toolCallID != "" || call.turn.Prompt != "" || call.turn.MessageIndex != 0 {
					t.Errorf("turn end = %+v, want no tool call and no turn", call)
				}
				return
			case hookStart:
				r := call.start
				if r.ToolCallID != call.toolCallID || r.ToolName != w.tool || r.AgentID != w.agent || r.Cwd != wt ||
					!bytes.Equal(r.Args, p.ToolInput) || r.MessageIndex != 0 {
					t.Errorf("start = %+v, want tool %s, agent %s, the tool input as args", r, w.tool, w.agent)
				}
			case hookComplete:
				r := call.complete
				args := string(p.ToolInput)
				if p.HookEventName == "UserPromptSubmit" {
					args = `{"task_id":"aa0e0225ffda4e104"}` // the notification's
				}
				if r.ToolName != w.tool || r.AgentID != w.agent || r.Cwd != wt || string(r.Args) != args {
					t.Errorf("complete = %+v, want tool %s, agent %s, the tool input as args", r, w.tool, w.agent)
				}
				var result map[string]any
				if err := json.Unmarshal(r.Result, &result); err != nil || len(result) == 0 {
					t.Errorf("result %s: want the tool response or the error (%v)", r.Result, err)
				}
				if p.HookEventName == "PostToolUseFailure" && result["error"] != "Command failed with exit code 1" {
					t.Errorf("result %s: want the error", r.Result)
				}
			}
			if w.id != "" && call.toolCallID != w.id {
				t.Errorf("tool call id = %q, want %q", call.toolCallID, w.id)
			}
			if !prsm.ValidToolCallID(call.toolCallID) {
				t.Errorf("tool call id %q is not one the server takes", call.toolCallID)
			}
		})
	}
}

func TestClaudeDerivedToolCallID(t *testing.T) {
	id := func(name string) string {
		t.Helper()
		payload, err := fixturePayload(name, "/wt")
		if err != nil {
			t.Fatal(err)
		}
		p, err := readClaudePayload(bytes.NewReader(payload))
		if err != nil {
			t.Fatal(err)
		}
		return p.toolCallID()
	}
	pre, post := id("pre-edit-noid"), id("post-edit-noid")
	if !regexp.MustCompile(`^claude-[0-9a-f]{32}$`).MatchString(pre) {
		t.Fatalf("derived id %q", pre)
	}
	if pre != post {
		t.Fatalf("pre id %s != post id %s", pre, post)
	}
	other := &claudePayload{SessionID: "8c35adc1-2f6e-4c8e-9d1a-3b7f0e5a9c42", ToolName: "Edit", ToolInput: json.RawMessage(`{"file_path":"/wt/other.txt"}`)}
	if other.toolCallID() == pre {
		t.Fatal("a different tool input gets the same id")
	}
	for _, bad := range []string{"toolu/../x y", "..", "...", strings.Repeat("a", 129), "toolé"} {
		odd := &claudePayload{ToolUseID: bad}
		if got := odd.toolCallID(); !prsm.ValidToolCallID(got) || got == odd.ToolUseID {
			t.Fatalf("a tool_use_id the server refuses (%q) is passed on as %q", bad, got)
		}
	}
	if got := (&claudePayload{AgentID: "a1", AgentType: "bad\x00type\n"}).agentID(); got != "claude/badtype" {
		t.Fatalf("agent id = %q", got)
	}
	if got := (&claudePayload{AgentType: "reviewer"}).agentID(); got != "claude" {
		t.Fatalf("main thread of a --agent session: agent id = %q, want claude", got)
	}
}

func TestSessionOfPath(t *testing.T) {
	home := t.TempDir()
	wt := filepath.Join(home, "projects", "repo-1234abcd", "worktrees", "0123456789ab")
	for _, d := range []string{filepath.Join(wt, "sub"), filepath.Join(home, "projects", "repo-1234abcd", "worktrees-evil", "0123456789ab"),
		filepath.Join(home, "projects-evil", "repo-1234abcd", "worktrees", "0123456789ab")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(filepath.Join(wt, "sub"), link); err != nil {
		t.Fatal(err)
	}
	homeLink := filepath.Join(t.TempDir(), "home")
	if err := os.Symlink(home, homeLink); err != nil {
		t.Fatal(err)
	}
	projectDir := filepath.Join(safepath.Real(home), "projects", "repo-1234abcd")
	for _, tc := range []struct {
		home, dir string
		want      bool
	}{
		{home, wt, true},
		{home, filepath.Join(wt, "sub"), true},
		{home, filepath.Join(wt, "not", "made", "yet"), true},
		{home, link, true},
		{homeLink, filepath.Join(wt, "sub"), true},
		{home, filepath.Join(home, "projects", "repo-1234abcd", "worktrees"), false},
		{home, filepath.Join(home, "projects", "repo-1234abcd", "worktrees-evil", "0123456789ab"), false},
		{home, filepath.Join(home, "projects-evil", "repo-1234abcd", "worktrees", "0123456789ab"), false},
		{home, filepath.Join(wt, "..", "..", "..", ".."), false},
		{home, t.TempDir(), false},
	} {
		got := SessionOfPath(tc.home, tc.dir)
		if !tc.want {
			if got != nil {
				t.Errorf("%s: session %+v, want none", tc.dir, got)
			}
			continue
		}
		if got == nil || got.SessionID != "0123456789ab" || safepath.Real(got.ProjectDir) != projectDir {
			t.Errorf("%s: %+v, want session 0123456789ab of %s", tc.dir, got, projectDir)
		}
	}
}

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

// The agents' hook payloads live beside the CLI's testscripts, which feed
// them to `prsm hook`; "@CWD@" in them stands for the directory the agent
// works in.
var (
	hookFixtures, _  = filepath.Abs(filepath.Join("..", "cmd", "prsm", "testdata", "hooks"))
	codexFixtures, _ = filepath.Abs(filepath.Join("..", "cmd", "prsm", "testdata", "hooks-codex"))
)

// fixturePayload reads a fixture (a name in testdata/hooks, or a path) with
// cwd put in for @CWD@.
func fixturePayload(path, cwd string) ([]byte, error) {
	if !strings.ContainsRune(path, filepath.Separator) {
		path = filepath.Join(hookFixtures, path+".json")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	q, err := json.Marshal(cwd)
	if err != nil {
		return nil, err
	}
	return bytes.ReplaceAll(b, []byte("@CWD@"), q[1:len(q)-1]), nil
}

// runHook runs the adapter of agent as `prsm-hook AGENT` does, with
// stdin, and without a way to start a server.
func runHook(t *testing.T, stdin, agent string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := &Adapter{Stdout: &out, Stderr: &errb}
	if err := a.Command(context.Background(), agent, nil, strings.NewReader(stdin)); err != nil {
		fmt.Fprintln(&errb, err)
		code = 1
	}
	return code, out.String(), errb.String()
}

// SessionIn finds the session of a path under the server's own project
// dir, symlinks resolved, and nothing elsewhere.
func TestSessionIn(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "project")
	wt := filepath.Join(project, "worktrees", "0123456789ab")
	if err := os.MkdirAll(filepath.Join(wt, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(project, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ project, dir, want string }{
		{project, wt, "0123456789ab"},
		{project, filepath.Join(wt, "sub"), "0123456789ab"},
		{link, filepath.Join(wt, "sub"), "0123456789ab"},
		{project, filepath.Join(link, "worktrees", "0123456789ab"), "0123456789ab"},
		{project, filepath.Join(project, "worktrees"), ""},
		{project, project, ""},
		{project, root, ""},
		{project, "", ""},
		{filepath.Join(root, "other"), wt, ""},
	} {
		got := ""
		if tg := SessionIn(tc.project, tc.dir); tg != nil {
			got = tg.SessionID
		}
		if got != tc.want {
			t.Errorf("SessionIn(%s, %s) = %q, want %q", tc.project, tc.dir, got, tc.want)
		}
	}
}

// The hook sends a tool call's complete with Prefer: respond-async (and
// its capture without), and takes a 202 Accepted for success: a server
// that honours the preference answers so once it holds the session's
// lock.
func TestHookCompleteRespondAsync(t *testing.T) {
	type seen struct{ path, prefer string }
	reqs := make(chan seen, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqs <- seen{r.URL.Path, r.Header.Get("Prefer")}
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/complete") {
			w.WriteHeader(http.StatusAccepted)
			fmt.Fprint(w, `{"records":[]}`)
			return
		}
		fmt.Fprint(w, `{}`)
	}))
	defer srv.Close()
	home := t.TempDir()
	t.Setenv("PRSM_HOME", home)
	projectDir := filepath.Join(home, "projects", "repo-1234abcd")
	wt := filepath.Join(projectDir, "worktrees", "0123456789ab")
	if err := os.MkdirAll(wt, 0o700); err != nil {
		t.Fatal(err)
	}
	info, _ := json.Marshal(api.Info{PID: os.Getpid(), Addr: strings.TrimPrefix(srv.URL, "http://"), Token: "t"})
	if err := os.WriteFile(filepath.Join(projectDir, api.InfoFile), info, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ fixture, path, prefer string }{
		{"pre-bash", "/sessions/0123456789ab/tool-calls", ""},
		{"post-bash", "/sessions/0123456789ab/tool-calls/toolu_05BashShuffle/complete", "respond-async"},
	} {
		payload, err := fixturePayload(c.fixture, wt)
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
