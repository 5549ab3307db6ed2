package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/internal/fakemodel"
)

// claudeVersion is the Claude Code the real-agent test runs.
const claudeVersion = "2.1.328"

// claudeRig is a workspace, a prsm home and a Claude Code config, all in
// one temp dir, and the environment that points prsm and Claude at them.
type claudeRig struct {
	t       *testing.T
	claude  string // the claude executable
	repo    string // the workspace
	config  string // CLAUDE_CONFIG_DIR
	home    string // PRSM_HOME
	env     []string
	project string // PRSM_HOME/projects/<identity>, once a session started
	bin     string // the prsm binary; "" for this test binary's copy
}

func newClaudeRig(t *testing.T) *claudeRig {
	t.Helper()
	claude := realAgent(t, "@anthropic-ai/claude-code", claudeVersion, "claude")
	root := t.TempDir()
	r := &claudeRig{t: t, claude: claude, repo: filepath.Join(root, "repo"), config: filepath.Join(root, "claude-config"), home: filepath.Join(root, "prsm")}
	userHome := filepath.Join(root, "home")
	for _, d := range []string{r.repo, r.config, userHome} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gitcfg := filepath.Join(userHome, ".gitconfig")
	if err := os.WriteFile(gitcfg, []byte("[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.env = append(os.Environ(),
		"HOME="+userHome, "PRSM_HOME="+r.home, "CLAUDE_CONFIG_DIR="+r.config,
		"GIT_CONFIG_GLOBAL="+gitcfg, "GIT_CONFIG_NOSYSTEM=1", "GORACE=atexit_sleep_ms=0",
		// As AGENT-HOOKS.md says: bypassPermissions as root needs
		// IS_SANDBOX, and these keep Claude Code off the network.
		"IS_SANDBOX=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_ERROR_REPORTING=1",
	)
	t.Cleanup(func() { stopServers(r.home) })
	return r
}

// git runs git in the workspace.
func (r *claudeRig) git(args ...string) {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = r.repo, r.env
	if out, err := cmd.CombinedOutput(); err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// commit makes the workspace a git repository whose first commit holds
// files (path → content).
func (r *claudeRig) commit(files map[string]string) {
	r.t.Helper()
	r.write(files)
	r.git("init", "-q")
	r.git("add", "-A")
	r.git("commit", "-qm", "first")
}

// write puts files (path → content) into the workspace.
func (r *claudeRig) write(files map[string]string) {
	r.t.Helper()
	for rel, content := range files {
		p := filepath.Join(r.repo, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

// prsm runs the prsm binary in the workspace with extra environment, and
// returns its stdout; a failure fails the test.
func (r *claudeRig) prsm(ctx context.Context, extraEnv []string, args ...string) string {
	r.t.Helper()
	var stdout, stderr bytes.Buffer
	bin := r.bin
	if bin == "" {
		bin = prsmBinary(r.t)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = r.repo, append(append([]string{}, r.env...), extraEnv...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		r.t.Fatalf("prsm %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	r.t.Logf("prsm %s:\n%s%s", args[0], stdout.String(), stderr.String())
	return stdout.String()
}

// startSession starts a session in the workspace.
func (r *claudeRig) startSession(ctx context.Context) *prsm.Session {
	r.t.Helper()
	var s prsm.Session
	if err := json.Unmarshal([]byte(r.prsm(ctx, nil, "session", "start", "--json")), &s); err != nil {
		r.t.Fatal(err)
	}
	projects, err := filepath.Glob(filepath.Join(r.home, "projects", "*"))
	if err != nil || len(projects) != 1 {
		r.t.Fatalf("want one project under %s: %v %v", r.home, projects, err)
	}
	r.project = projects[0]
	return &s
}

// client is a client of the workspace's server.
func (r *claudeRig) client(ctx context.Context) *client.Client {
	r.t.Helper()
	return liveClient(ctx, r.t, r.project)
}

// claudeArgs is the non-interactive Claude Code run of prompt.
func claudeArgs(claude, prompt string) []string {
	return []string{claude, "-p", prompt, "--permission-mode", "bypassPermissions"}
}

// claudeModelEnv points Claude Code at the fake model.
func claudeModelEnv(model *fakemodel.AnthropicServer) []string {
	return []string{"ANTHROPIC_BASE_URL=" + model.URL, "ANTHROPIC_API_KEY=sk-fake"}
}

// fileIn reads a workspace file; "" with ok false when it is absent.
func fileIn(t *testing.T, root, rel string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if os.IsNotExist(err) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}

// TestRealAgentClaude runs the real Claude Code, non-interactively, under
// `prsm run` with prsm's hooks installed in its (temp) user settings,
// against a fake model that plays a Write, an Edit, one Bash command that
// creates, changes and deletes files, a Write, a Read and an Edit aimed at
// the workspace's own paths, and a final answer. Every tool call must come
// in as records under Claude's own tool_use ids and canonical names (the
// shell's files as :N records; the workspace-aimed calls moved onto the
// worktree by prsm's PreToolUse answer, not escaping review), every change
// must reach the workspace byte for byte, the prompt must make one turn
// checkpoint, and a reject must put the file back.
func TestRealAgentClaude(t *testing.T) {
	r := newClaudeRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	r.commit(map[string]string{"a.txt": "alpha\nbeta\n", "b.txt": "one\ntwo\n", "c.txt": "gone soon\n"})

	out := r.prsm(ctx, nil, "hooks", "install", "claude")
	if want := filepath.Join(r.config, "settings.json"); !strings.Contains(out, want) {
		t.Fatalf("hooks install did not write %s:\n%s", want, out)
	}
	s := r.startSession(ctx)
	wt := s.WorktreePath

	const (
		writeID = "toolu_01RealWriteHello"
		editID  = "toolu_02RealEditHello"
		bashID  = "toolu_03RealBashShuffle"
		// wsWriteID and wsEditID name the workspace's own paths.
		wsWriteID = "toolu_04RealWriteWorkspace"
		wsEditID  = "toolu_06RealEditWorkspace"
		prompt    = "Add a greeting, then tidy up the text files."
	)
	shell := "printf 'one\\n' > new1.txt && mkdir -p sub && printf 'two\\n' > sub/new2.txt && sed -i s/one/ONE/ b.txt && rm c.txt"
	model := fakemodel.NewAnthropic(
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: writeID, Name: "Write",
			Input: map[string]any{"file_path": filepath.Join(wt, "hello.txt"), "content": "hello\n"}}}},
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: editID, Name: "Edit",
			Input: map[string]any{"file_path": filepath.Join(wt, "hello.txt"), "old_string": "hello", "new_string": "hello, world"}}}},
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: bashID, Name: "Bash",
			Input: map[string]any{"command": shell, "description": "Shuffle the text files"}}}},
		// The workspace's own paths: prsm's PreToolUse answer moves
		// them onto the worktree.
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: wsWriteID, Name: "Write",
			Input: map[string]any{"file_path": filepath.Join(r.repo, "notes", "ws.txt"), "content": "aimed at the workspace\n"}}}},
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: "toolu_05RealReadWorkspace", Name: "Read",
			Input: map[string]any{"file_path": filepath.Join(r.repo, "a.txt")}}}},
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: wsEditID, Name: "Edit",
			Input: map[string]any{"file_path": filepath.Join(r.repo, "a.txt"), "old_string": "alpha", "new_string": "ALPHA"}}}},
		fakemodel.AnthropicStep{Text: "Done: hello.txt greets, the text files are tidy."},
	)
	defer model.Close()

	r.prsm(ctx, claudeModelEnv(model), append([]string{"run", "--session", s.ID, "--"}, claudeArgs(r.claude, prompt)...)...)
	if n := model.StepsServed(); n != 7 {
		t.Fatalf("Claude Code asked the model for %d scripted steps, want 7: %+v", n, model.Requests())
	}

	cl := r.client(ctx)
	recs, err := cl.Changes(ctx, s.ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	// One line per record: its id, the tool call's id, the tool, the
	// change, the path and the agent.
	var got []string
	byPath := map[string]*prsm.Record{}
	for _, rec := range recs {
		got = append(got, strings.Join([]string{rec.ID, rec.ToolCallID, rec.ToolName, rec.ChangeType, rec.RelPath, rec.AgentID}, " "))
		byPath[rec.RelPath] = rec
	}
	sort.Strings(got)
	// The shell's files are :N records, numbered in an order prsm
	// chooses: the numbers are checked apart.
	var shellN []string
	for i, g := range got {
		if id, rest, ok := strings.Cut(g, " "); ok && strings.HasPrefix(id, bashID+":") {
			shellN = append(shellN, strings.TrimPrefix(id, bashID+":"))
			got[i] = bashID + ":N " + rest
		}
	}
	sort.Strings(got)
	sort.Strings(shellN)
	want := []string{
		writeID + " " + writeID + " Write create hello.txt claude",
		editID + " " + editID + " Edit modify hello.txt claude",
		bashID + ":N " + bashID + " Bash create new1.txt claude",
		bashID + ":N " + bashID + " Bash create sub/new2.txt claude",
		bashID + ":N " + bashID + " Bash delete c.txt claude",
		bashID + ":N " + bashID + " Bash modify b.txt claude",
		wsWriteID + " " + wsWriteID + " Write create notes/ws.txt claude",
		wsEditID + " " + wsEditID + " Edit modify a.txt claude",
	}
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") || strings.Join(shellN, " ") != "0 1 2 3" {
		t.Fatalf("records (id, tool call, tool, change, path, agent):\n%s\nwant:\n%s\nwith the shell's :N %v, want 0 to 3",
			strings.Join(got, "\n"), strings.Join(want, "\n"), shellN)
	}

	// Every change reached the workspace, byte for byte, and the
	// workspace-aimed ones went through the worktree.
	wantFiles := map[string]string{"hello.txt": "hello, world\n", "a.txt": "ALPHA\nbeta\n", "b.txt": "ONE\ntwo\n", "new1.txt": "one\n", "sub/new2.txt": "two\n",
		"notes/ws.txt": "aimed at the workspace\n"}
	for _, root := range []string{r.repo, wt} {
		for rel, content := range wantFiles {
			if got, ok := fileIn(t, root, rel); !ok || got != content {
				t.Errorf("%s/%s = %q (present %v), want %q", root, rel, got, ok, content)
			}
		}
		if _, ok := fileIn(t, root, "c.txt"); ok {
			t.Errorf("%s/c.txt is still there; the shell deleted it", root)
		}
	}

	// The prompt made one turn checkpoint: prsm run's turn and the
	// prompt's, on the same tree, are one.
	cps, err := cl.Checkpoints(ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	var turns []string
	for _, c := range cps {
		if c.Kind == prsm.CheckpointAuto && c.ToolCallID == "" {
			turns = append(turns, c.Name)
		}
	}
	if len(turns) != 1 || turns[0] != "turn 1: "+prompt {
		t.Fatalf("turn checkpoints %q, want one for the prompt", turns)
	}

	// A reject puts the file back, in the worktree and the workspace.
	del := byPath["c.txt"]
	if _, err := cl.Reject(ctx, s.ID, del.ID); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{r.repo, wt} {
		if got, ok := fileIn(t, root, "c.txt"); !ok || got != "gone soon\n" {
			t.Errorf("after the reject %s/c.txt = %q (present %v), want it back", root, got, ok)
		}
	}
	// The workspace-aimed Write is reviewable like any other: its reject
	// takes the file out of the workspace.
	if _, err := cl.Reject(ctx, s.ID, byPath["notes/ws.txt"].ID); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{r.repo, wt} {
		if got, ok := fileIn(t, root, "notes/ws.txt"); ok {
			t.Errorf("after the reject %s/notes/ws.txt = %q, want it gone", root, got)
		}
	}
}

// TestRealAgentClaudeBackground runs the real Claude Code with an Agent
// task in the background (its default): the main agent's Stop comes
// while the subagent's Bash still runs, listing it in background_tasks.
// What that Bash writes after the Stop must be recorded under its own
// call and agent, not lost with a call the Stop closed; the task's
// notification, which comes as a prompt, must make no turn checkpoint.
func TestRealAgentClaudeBackground(t *testing.T) {
	r := newClaudeRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	r.commit(map[string]string{"a.txt": "alpha\n"})
	r.prsm(ctx, nil, "hooks", "install", "claude")
	s := r.startSession(ctx)

	const subBashID = "toolu_41SubagentBash"
	model := fakemodel.NewAnthropicScripts(
		// The subagent's conversation starts with the Agent call's prompt.
		fakemodel.AnthropicScript{Marker: "SUBAGENT-41", Steps: []fakemodel.AnthropicStep{
			{Tools: []fakemodel.AnthropicToolUse{{ID: subBashID, Name: "Bash",
				Input: map[string]any{"command": "sleep 5 && printf 'late\\n' > late.txt", "description": "Write the late file"}}}},
			{Text: "Wrote late.txt."},
		}},
		fakemodel.AnthropicScript{Steps: []fakemodel.AnthropicStep{
			{Tools: []fakemodel.AnthropicToolUse{{ID: "toolu_40Agent", Name: "Agent",
				Input: map[string]any{"description": "Write the late file", "prompt": "SUBAGENT-41: write late.txt", "subagent_type": "general-purpose"}}}},
			// The main agent works on a little, then stops while the
			// subagent's Bash still sleeps.
			{Tools: []fakemodel.AnthropicToolUse{{ID: "toolu_42MainSleep", Name: "Bash",
				Input: map[string]any{"command": "sleep 2", "description": "Wait a moment"}}}},
			{Text: "The subagent works in the background."},
			{Text: "The subagent is done."}, // after its task notification
		}},
	)
	defer model.Close()
	r.prsm(ctx, claudeModelEnv(model), append([]string{"run", "--session", s.ID, "--"}, claudeArgs(r.claude, "Delegate the late file.")...)...)
	if n := model.StepsServed(); n != 6 {
		t.Fatalf("Claude Code asked the model for %d scripted steps, want 6: %+v", n, model.Requests())
	}
	recs, err := r.client(ctx).Changes(ctx, s.ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rec := range recs {
		got = append(got, strings.Join([]string{rec.ID, rec.ToolName, rec.ChangeType, rec.RelPath, rec.AgentID}, " "))
	}
	if want := subBashID + ":0 Bash create late.txt claude/general-purpose"; len(got) != 1 || got[0] != want {
		t.Fatalf("records:\n%s\nwant %s", strings.Join(got, "\n"), want)
	}
	if got, ok := fileIn(t, r.repo, "late.txt"); !ok || got != "late\n" {
		t.Fatalf("workspace late.txt = %q (present %v)", got, ok)
	}
	// The task's notification came as a prompt, and is no turn: the one
	// turn checkpoint is the user's prompt's.
	cps, err := r.client(ctx).Checkpoints(ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	var turns []string
	for _, c := range cps {
		if c.Kind == prsm.CheckpointAuto && c.ToolCallID == "" {
			turns = append(turns, c.Name)
		}
	}
	if len(turns) != 1 || turns[0] != "turn 1: Delegate the late file." {
		t.Fatalf("turn checkpoints %q, want one for the prompt, none for the task's notification", turns)
	}
}

// TestRealAgentClaudeRunSettings runs the real Claude Code under `prsm
// run` without `prsm hooks install claude`: prsm's hooks come in for the
// run through `claude --settings FILE`, so a Write and a Bash still come
// in under Claude's own tool_use ids and canonical names, not as Watch
// records, and Claude's own settings directory gets no settings.json.
// Its http hooks send the session's hook token: the Bash's environment
// holds that one, never the server's token.
func TestRealAgentClaudeRunSettings(t *testing.T) {
	r := newClaudeRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	r.commit(map[string]string{"a.txt": "alpha\n"})
	s := r.startSession(ctx)
	wt := s.WorktreePath
	envFile := filepath.Join(t.TempDir(), "env.txt")

	const (
		writeID = "toolu_51SettingsWrite"
		bashID  = "toolu_52SettingsBash"
	)
	model := fakemodel.NewAnthropic(
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: writeID, Name: "Write",
			Input: map[string]any{"file_path": filepath.Join(wt, "hello.txt"), "content": "hello\n"}}}},
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: bashID, Name: "Bash",
			Input: map[string]any{"command": "printf 'one\\n' > new1.txt && sed -i s/alpha/ALPHA/ a.txt && env > " + envFile, "description": "Change the text files"}}}},
		fakemodel.AnthropicStep{Text: "Done."},
	)
	defer model.Close()
	r.prsm(ctx, claudeModelEnv(model), append([]string{"run", "--session", s.ID, "--"}, claudeArgs(r.claude, "Greet and tidy.")...)...)
	if n := model.StepsServed(); n != 3 {
		t.Fatalf("Claude Code asked the model for %d scripted steps, want 3: %+v", n, model.Requests())
	}
	recs, err := r.client(ctx).Changes(ctx, s.ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rec := range recs {
		got = append(got, strings.Join([]string{rec.ToolCallID, rec.ToolName, rec.ChangeType, rec.RelPath, rec.AgentID}, " "))
	}
	sort.Strings(got)
	want := []string{
		bashID + " Bash create new1.txt claude",
		bashID + " Bash modify a.txt claude",
		writeID + " Write create hello.txt claude",
	}
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("records (tool call, tool, change, path, agent):\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for rel, content := range map[string]string{"hello.txt": "hello\n", "new1.txt": "one\n", "a.txt": "ALPHA\n"} {
		if got, ok := fileIn(t, r.repo, rel); !ok || got != content {
			t.Errorf("workspace %s = %q (present %v), want %q", rel, got, ok, content)
		}
	}
	if _, err := os.Stat(filepath.Join(r.config, "settings.json")); !os.IsNotExist(err) {
		t.Errorf("the run touched Claude's own settings.json (stat: %v)", err)
	}
	// The records above carry Claude's own tool_use ids, which only its
	// hooks send; the one settings file of the run holds http hooks to the
	// server and no command (none is in Claude's config dir or the
	// project either), so no hook process ran: they came over http.
	info, err := api.ReadInfo(r.project)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(r.project, "claude-settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), info.Token) || strings.Contains(string(data), `"command"`) {
		t.Errorf("the run's settings hold the token or a command hook:\n%s", data)
	}
	env, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(env), info.Token) || !strings.Contains(string(env), "\n"+api.HookTokenEnv+"=prsm-hook-") {
		t.Errorf("the agent's environment holds the server's token, or no hook token:\n%s", env)
	}
	var settings struct {
		Hooks map[string][]struct {
			Hooks []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &settings); err != nil || len(settings.Hooks) == 0 {
		t.Fatalf("the run's settings: %v\n%s", err, data)
	}
	for event, groups := range settings.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				if h["type"] != "http" || h["url"] != "http://"+info.Addr+"/hooks/claude" {
					t.Errorf("%s handler %v, want an http hook to %s", event, h, info.Addr)
				}
			}
		}
	}
	if entries, _ := os.ReadDir(r.config); len(entries) > 0 {
		for _, e := range entries {
			if e.Name() == "settings.json" || strings.HasSuffix(e.Name(), "settings.local.json") {
				t.Errorf("Claude's config dir has %s", e.Name())
			}
		}
	}
}

// With the server down, Claude Code's http hooks fail at once and it goes
// on: the model's first step (a Bash) stops the server between its
// PreToolUse and its PostToolUse, the second writes a file with no server
// to tell. The run takes far less than the hooks' 10 s timeout would, and
// the write is recorded when the server is back (reconcile), as a change
// no hook announced.
func TestRealAgentClaudeHTTPServerDown(t *testing.T) {
	r := newClaudeRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	r.commit(map[string]string{"a.txt": "alpha\n"})
	s := r.startSession(ctx)
	wt := s.WorktreePath
	info, err := api.ReadInfo(r.project)
	if err != nil {
		t.Fatal(err)
	}
	stop := fmt.Sprintf("kill %d; while kill -0 %d 2>/dev/null; do sleep 0.05; done", info.PID, info.PID)
	model := fakemodel.NewAnthropic(
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: "toolu_61DownBash", Name: "Bash",
			Input: map[string]any{"command": stop, "description": "Stop the server"}}}},
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: "toolu_62DownWrite", Name: "Write",
			Input: map[string]any{"file_path": filepath.Join(wt, "hello.txt"), "content": "hello\n"}}}},
		fakemodel.AnthropicStep{Text: "Done."},
	)
	defer model.Close()
	t0 := time.Now()
	r.prsm(ctx, claudeModelEnv(model), append([]string{"run", "--session", s.ID, "--"}, claudeArgs(r.claude, "Stop and greet.")...)...)
	took := time.Since(t0)
	if n := model.StepsServed(); n != 3 {
		t.Fatalf("Claude Code asked the model for %d scripted steps, want 3: %+v", n, model.Requests())
	}
	// Three hooks met no server (the Bash's Post, the Write's Pre and
	// Post): waited out, they would take 30 s.
	if took > 25*time.Second {
		t.Errorf("the run took %s: Claude Code waited for the http hooks of a server that is down", took)
	}
	if _, err := os.Stat(filepath.Join(wt, "hello.txt")); err != nil {
		t.Fatalf("Claude did not go on to write hello.txt: %v", err)
	}
	// The server back (the next command starts it): the write is recorded.
	var recs []prsm.Record
	if err := json.Unmarshal([]byte(r.prsm(ctx, nil, "changes", "--session", s.ID, "--json")), &recs); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, rec := range recs {
		if rec.RelPath == "hello.txt" && rec.ChangeType == prsm.ChangeCreate {
			found = true
		}
	}
	if !found {
		t.Fatalf("hello.txt, written while the server was down, is not recorded: %+v", recs)
	}
	if got, ok := fileIn(t, r.repo, "hello.txt"); !ok || got != "hello\n" {
		t.Errorf("workspace hello.txt = %q (present %v)", got, ok)
	}
	t.Logf("the run with the server down took %s", took)
}

// With prsm and prsm-hook side by side, as make install puts them, `prsm
// hooks install claude` writes the lean prsm-hook as the hook command, in
// exec form for the claude on PATH, and the real Claude Code runs it: its records carry Claude's own tool_use
// ids, and a write aimed at the workspace is moved into the worktree by
// prsm-hook's answer.
func TestRealAgentClaudeLeanHook(t *testing.T) {
	r := newClaudeRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	bin := t.TempDir()
	for _, b := range []struct{ name, pkg, cgo string }{{"prsm", ".", "1"}, {"prsm-hook", "../prsm-hook", "0"}} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, b.name), b.pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+b.cgo)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	r.bin = filepath.Join(bin, "prsm")
	r.commit(map[string]string{"a.txt": "alpha\n"})
	// This claude on PATH: the install writes the exec form it takes
	// (no shell between Claude Code and prsm-hook), and the run below
	// shows the real Claude Code running it. The other tests install
	// with no claude on PATH: the shell form.
	r.env = append(r.env, "PATH="+filepath.Dir(r.claude)+string(filepath.ListSeparator)+os.Getenv("PATH"))
	out := r.prsm(ctx, nil, "hooks", "install", "claude")
	if !strings.Contains(out, "exec form") {
		t.Fatalf("hooks install with Claude Code %s on PATH wrote no exec form:\n%s", claudeVersion, out)
	}
	settings, err := os.ReadFile(filepath.Join(r.config, "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	lean := filepath.Join(bin, "prsm-hook")
	if strings.Count(string(settings), `"command": "`+lean+`",`) != 5 || strings.Count(string(settings), `"args": [`) != 5 ||
		strings.Contains(string(settings), " claude\"") {
		t.Fatalf("hooks install wrote no exec form of %s:\n%s", lean, settings)
	}
	s := r.startSession(ctx)
	wt := s.WorktreePath
	const (
		writeID   = "toolu_71LeanWrite"
		wsWriteID = "toolu_72LeanWriteWorkspace"
	)
	model := fakemodel.NewAnthropic(
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: writeID, Name: "Write",
			Input: map[string]any{"file_path": filepath.Join(wt, "hello.txt"), "content": "hello\n"}}}},
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: wsWriteID, Name: "Write",
			Input: map[string]any{"file_path": filepath.Join(r.repo, "ws.txt"), "content": "aimed at the workspace\n"}}}},
		fakemodel.AnthropicStep{Text: "Done."},
	)
	defer model.Close()
	r.prsm(ctx, claudeModelEnv(model), append([]string{"run", "--session", s.ID, "--"}, claudeArgs(r.claude, "Greet.")...)...)
	if n := model.StepsServed(); n != 3 {
		t.Fatalf("Claude Code asked the model for %d scripted steps, want 3: %+v", n, model.Requests())
	}
	recs, err := r.client(ctx).Changes(ctx, s.ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rec := range recs {
		got = append(got, strings.Join([]string{rec.ToolCallID, rec.ToolName, rec.ChangeType, rec.RelPath, rec.AgentID}, " "))
	}
	sort.Strings(got)
	want := []string{writeID + " Write create hello.txt claude", wsWriteID + " Write create ws.txt claude"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := os.Stat(filepath.Join(wt, "ws.txt")); err != nil {
		t.Errorf("the workspace write was not moved into the worktree: %v", err)
	}
}
