package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/internal/fakemodel"
	"github.com/prsm-dev/prsm/internal/testgit"
)

// TestRealAgentCopilot runs the real GitHub Copilot CLI 1.0.102, headless
// and offline in its BYOK mode (no GitHub login), through `prsm run --
// copilot` against a scripted Chat Completions model: a create, an edit,
// one bash command that creates, changes and deletes several files, and a
// final answer. Once with prsm's hooks installed by `prsm hooks install
// copilot` (in a temp HOME, then uninstalled), once with nothing installed,
// prsm run wiring them in alone. It checks, through the API, the records
// (numbered tool call ids, each exact; prsm's tool names; the shell's
// files as :N records), the bytes in the workspace, the prompt's turn
// checkpoint, a reject, and an accept of all the rest.
func TestRealAgentCopilot(t *testing.T) {
	exe := realAgent(t, "@github/copilot", "1.0.102", "copilot")
	// Copilot's npm package is a loader that extracts the CLI on its
	// first start: once, beside the cached package, not in every HOME.
	pkgCache := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(exe))), "pkg-cache")
	t.Run("installed", func(t *testing.T) { realCopilotRun(t, exe, pkgCache, true) })
	t.Run("run-wired", func(t *testing.T) { realCopilotRun(t, exe, pkgCache, false) })
}

// realCopilotRun is one run of TestRealAgentCopilot; install says whether
// prsm's hooks are installed first, or left to prsm run.
func realCopilotRun(t *testing.T, exe, pkgCache string, install bool) {
	prsmHome, home := copilotEnv(t)

	repo := testgit.Init(t, "repo")
	testgit.Commit(t, repo, "first", map[string]string{
		"a.txt":    "alpha\nbeta\n",
		"c.txt":    "x one\nx two\n",
		"gone.txt": "bye\n",
		"README":   "readme\n",
	})
	repo, err := filepath.EvalSymlinks(repo)
	if err != nil {
		t.Fatal(err)
	}

	const shell = "printf 'one\\n' > new1.txt && printf 'two\\n' > new2.txt && sed -i 's/x/y/' c.txt && rm gone.txt"
	fake, err := fakemodel.ChatStart([]fakemodel.ChatStep{
		{ToolCalls: []fakemodel.ChatToolCall{{ID: "call_create_1", Name: "create",
			Arguments: `{"path":"{{cwd}}/hello.txt","file_text":"hello\n"}`}}},
		{ToolCalls: []fakemodel.ChatToolCall{{ID: "call_edit_2", Name: "edit",
			Arguments: `{"path":"{{cwd}}/a.txt","old_str":"beta","new_str":"BETA"}`}}},
		{ToolCalls: []fakemodel.ChatToolCall{{ID: "call_bash_3", Name: "bash",
			Arguments: `{"command":"` + strings.ReplaceAll(shell, `\`, `\\`) + `","description":"Shuffle the files.","mode":"sync"}`}}},
		{Text: "All done."},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()

	prsmBin := prsmBinary(t)
	env := copilotModelEnv(fake, pkgCache)
	run := func(timeout time.Duration, args ...string) (string, string, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, prsmBin, args...)
		cmd.Dir, cmd.Env, cmd.Stdin = repo, env, nil
		cmd.WaitDelay = 10 * time.Second
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), err
	}
	hooksFile := filepath.Join(home, ".copilot", "hooks", "prsm.json")
	if install {
		if out, errs, err := run(time.Minute, "hooks", "install", "copilot"); err != nil || !strings.Contains(out, "installed prsm's Copilot CLI hooks in "+hooksFile) {
			t.Fatalf("prsm hooks install copilot: %v\n%s%s", err, out, errs)
		}
	}

	const prompt = "Greet, fix a.txt, then shuffle the files."
	out, errs, err := run(4*time.Minute, "run", "--", exe, "-p", prompt, "--allow-all-tools")
	t.Logf("prsm run -- copilot: %v\nstdout:\n%s\nstderr:\n%s", err, out, errs)
	if err != nil {
		t.Fatalf("prsm run -- copilot failed: %v", err)
	}
	if !strings.Contains(out, "All done.") {
		t.Errorf("copilot did not print the final answer")
	}
	if strings.Contains(errs, "Watch") || strings.Contains(errs, "prsm hooks install copilot") {
		t.Errorf("prsm run said Copilot's calls come in as Watch; stderr:\n%s", errs)
	}
	// The model's side: every tool's result handed back under its id.
	results := map[string]bool{}
	steps := 0
	for _, r := range fake.Requests() {
		if r.Step >= 0 {
			steps++
		}
		for _, m := range r.Messages {
			if m.Role == "tool" {
				results[m.ToolCallID] = true
			}
		}
	}
	for _, id := range []string{"call_create_1", "call_edit_2", "call_bash_3"} {
		if !results[id] {
			t.Errorf("copilot never sent the result of %s back", id)
		}
	}
	if steps < 4 {
		t.Errorf("the model played %d steps, want 4", steps)
	}

	// the bytes in the workspace
	for rel, want := range map[string]string{
		"hello.txt": "hello\n", "a.txt": "alpha\nBETA\n", "new1.txt": "one\n", "new2.txt": "two\n", "c.txt": "y one\ny two\n", "README": "readme\n",
	} {
		if got, err := os.ReadFile(filepath.Join(repo, rel)); err != nil || string(got) != want {
			t.Errorf("workspace %s = %q, %v; want %q", rel, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(repo, "gone.txt")); !os.IsNotExist(err) {
		t.Errorf("workspace gone.txt still there: %v", err)
	}
	if st := testgit.Git(t, repo, "status", "--porcelain", "--untracked-files=all"); strings.Contains(st, ".github") || strings.Contains(st, ".copilot") {
		t.Errorf("Copilot's or prsm's own files reached the workspace:\n%s", st)
	}

	// the records, through the API: every call's id exact
	cl := realAgentClient(t, prsmHome)
	ctx := context.Background()
	sessions, err := cl.Sessions(ctx, "")
	if err != nil || len(sessions) != 1 {
		t.Fatalf("sessions %+v, %v; want the one run's", sessions, err)
	}
	s := sessions[0]
	if s.AgentID != "copilot" {
		t.Errorf("session agent %q, want copilot", s.AgentID)
	}
	recs, err := cl.Changes(ctx, s.ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	id := regexp.MustCompile(`^copilot-[0-9a-f]{12}-([0-9]+)$`)
	prefix := ""
	var got []string
	for _, r := range recs {
		m := id.FindStringSubmatch(r.ToolCallID)
		if m == nil {
			got = append(got, strings.Join([]string{r.ID, r.ToolCallID, r.ToolName, r.ChangeType, r.RelPath, r.AgentID}, " "))
			continue
		}
		if prefix == "" {
			prefix = strings.TrimSuffix(r.ToolCallID, m[1])
		}
		rid := strings.Replace(r.ID, prefix, "C", 1)
		got = append(got, strings.Join([]string{rid, strings.Replace(r.ToolCallID, prefix, "C", 1), r.ToolName, r.ChangeType, r.RelPath, r.AgentID}, " "))
	}
	sort.Strings(got)
	want := []string{
		"C1 C1 Write create hello.txt copilot",
		"C2 C2 Edit modify a.txt copilot",
		"C3:0 C3 Bash modify c.txt copilot",
		"C3:1 C3 Bash delete gone.txt copilot",
		"C3:2 C3 Bash create new1.txt copilot",
		"C3:3 C3 Bash create new2.txt copilot",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records (C is %s):\n%s\nwant:\n%s", prefix, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !install {
		// The run's plugin held http hooks alone: the exact ids above came
		// over HTTP (/hooks/copilot), no hook process ran.
		plugins, _ := filepath.Glob(filepath.Join(prsmHome, "projects", "*", "copilot-plugin", "hooks", "hooks.json"))
		if len(plugins) != 1 {
			t.Fatalf("run's Copilot plugins: %v, want one", plugins)
		}
		b, _ := os.ReadFile(plugins[0])
		if !strings.Contains(string(b), `"type": "http"`) || strings.Contains(string(b), `"type": "command"`) || !strings.Contains(string(b), "/hooks/copilot?event=preToolUse") {
			t.Errorf("run's Copilot plugin hooks are not prsm's http hooks:\n%s", b)
		}
	}
	// Paired: Copilot's agentStop forgot the open calls of its session.
	states, _ := filepath.Glob(filepath.Join(prsmHome, "projects", "*", "hooks", "copilot-*.json"))
	for _, st := range states {
		if b, _ := os.ReadFile(st); strings.Contains(string(b), `"open":[{`) {
			t.Errorf("Copilot call state %s still holds open calls: %s", st, b)
		}
	}

	// the prompt's turn checkpoint
	cps, err := cl.Checkpoints(ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	turns := 0
	for _, c := range cps {
		if c.Kind == prsm.CheckpointAuto && strings.Contains(c.Name, prompt) {
			turns++
		}
	}
	if turns != 1 {
		t.Errorf("%d turn checkpoints name the prompt, want 1: %+v", turns, cps)
	}

	// a reject puts the file back; accept-all takes the rest
	byPath := map[string]*prsm.Record{}
	for _, r := range recs {
		byPath[r.RelPath] = r
	}
	for _, rel := range []string{"a.txt", "gone.txt"} {
		if r := byPath[rel]; r == nil {
			t.Fatalf("no record of %s", rel)
		} else if _, err := cl.Reject(ctx, s.ID, r.ID); err != nil {
			t.Fatalf("reject %s: %v", rel, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(got) != "alpha\nbeta\n" {
		t.Errorf("after reject, workspace a.txt = %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(repo, "gone.txt")); string(got) != "bye\n" {
		t.Errorf("after reject, workspace gone.txt = %q", got)
	}
	if _, err := cl.AcceptAll(ctx, s.ID, ""); err != nil {
		t.Fatalf("accept all: %v", err)
	}
	after, err := cl.Changes(ctx, s.ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range after {
		want := prsm.StatusAccepted
		if r.RelPath == "a.txt" || r.RelPath == "gone.txt" {
			want = prsm.StatusRejected
		}
		if r.Status != want {
			t.Errorf("after accept-all, %s (%s) is %s, want %s", r.ID, r.RelPath, r.Status, want)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(repo, "hello.txt")); string(got) != "hello\n" {
		t.Errorf("after accept-all, workspace hello.txt = %q", got)
	}

	if install {
		if out, errs, err := run(time.Minute, "hooks", "uninstall", "copilot"); err != nil || !strings.Contains(out, "removed prsm's Copilot CLI hooks") {
			t.Fatalf("prsm hooks uninstall copilot: %v\n%s%s", err, out, errs)
		}
		if _, err := os.Stat(hooksFile); !os.IsNotExist(err) {
			t.Errorf("uninstall left %s: %v", hooksFile, err)
		}
		if left, _ := os.ReadDir(filepath.Dir(hooksFile)); len(left) != 0 {
			t.Errorf("uninstall left files in %s: %v", filepath.Dir(hooksFile), left)
		}
	}
}

// copilotEnv is the test's environment for a real Copilot CLI: a prsm
// home and a user home of its own (testgit.Env), and none of Copilot's
// own variables; prsm's home and the user's.
func copilotEnv(t *testing.T) (prsmHome, home string) {
	prsmHome = testgit.Env(t)
	home = os.Getenv("HOME")
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	t.Cleanup(func() { stopServers(prsmHome) })
	for _, k := range []string{"COPILOT_HOME", "COPILOT_ALLOW_ALL", "COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "PRSM_SESSION_ID", "PRSM_WORKSPACE"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	return prsmHome, home
}

// copilotModelEnv is the environment that runs Copilot CLI offline
// against fake, its package extracted under pkgCache.
func copilotModelEnv(fake *fakemodel.ChatServer, pkgCache string) []string {
	return append(os.Environ(),
		"COPILOT_OFFLINE=true", "COPILOT_PROVIDER_BASE_URL="+fake.URL, "COPILOT_PROVIDER_API_KEY=x",
		"COPILOT_MODEL=gpt-4.1", "COPILOT_AUTO_UPDATE=false", "COPILOT_PKG_CACHE_HOME="+pkgCache, "NO_COLOR=1")
}

// TestRealAgentCopilotFeedback is issue 46 in Copilot CLI's own loop, as
// TestRealAgentClaudeFeedback is in Claude Code's, through prsm run's
// http hooks: the scripted Copilot edits app.py, then runs a bash
// command that waits; meanwhile the test rejects the edit's hunk with a
// note and lets the command end. The model's next request must hold the
// note and the file's name (prsm's postToolUse answer,
// additionalContext), and the note must be marked delivered with that
// call's postToolUse.
func TestRealAgentCopilotFeedback(t *testing.T) {
	exe := realAgent(t, "@github/copilot", "1.0.102", "copilot")
	pkgCache := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(exe))), "pkg-cache")
	prsmHome, _ := copilotEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	repo, s, cl := feedbackSession(ctx, t, prsmHome)
	fb := newFeedbackScript(t)
	wait, _ := json.Marshal(map[string]any{"command": fb.wait, "description": "Wait.", "mode": "sync"})
	fake, err := fakemodel.ChatStart([]fakemodel.ChatStep{
		{ToolCalls: []fakemodel.ChatToolCall{{ID: "call_edit_1", Name: "edit",
			Arguments: `{"path":"{{cwd}}/app.py","old_str":"    retries = 3\n    timeout = 30","new_str":"    retries = 0\n    timeout = 5"}`}}},
		{ToolCalls: []fakemodel.ChatToolCall{{ID: "call_wait_2", Name: "bash", Arguments: string(wait)}}},
		{ToolCalls: []fakemodel.ChatToolCall{{ID: "call_read_3", Name: "bash",
			Arguments: `{"command":"cat app.py","description":"Read.","mode":"sync"}`}}},
		{Text: "Done."},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	prsmBin := prsmBinary(t)
	cmd := exec.CommandContext(ctx, prsmBin, "run", "--session", s.ID, "--", exe, "-p", "Make fetch fail faster.", "--allow-all-tools")
	cmd.Dir, cmd.Env = repo, copilotModelEnv(fake, pkgCache)
	editID := fb.rejectWhileWaiting(ctx, cmd, cl, s.ID, "")
	heard := chatHeard(fake)
	// Copilot's calls are numbered: the edit is <id>-1, the wait <id>-2.
	waitID := strings.TrimSuffix(editID, "-1") + "-2"
	fb.check(ctx, heard, cl, s.ID, editID, "copilot postToolUse "+waitID, repo)
}
