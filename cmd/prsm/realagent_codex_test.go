package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/internal/fakemodel"
)

// codexVersion is the Codex the real-agent test runs.
const codexVersion = "0.169.0"

// codexRead reads a file under root; "" with ok false when it is absent.
func codexRead(t *testing.T, root, rel string) (string, bool) {
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

// TestRealAgentCodex runs the real Codex, non-interactively (codex exec),
// under `prsm run -- codex`, which wires prsm's hooks in for the run with
// -c overrides and trusts exactly those, against a fake Responses model
// that plays an apply_patch adding a file, an apply_patch changing it, one
// exec_command shell call that creates, changes and deletes files, an
// apply_patch of two files, and a final answer. Every tool call must come in as records under Codex's own
// call ids and canonical names (the shell's files as :N records), every
// change must reach the workspace byte for byte, the prompt must make a
// turn checkpoint, and a reject must put the file back. Codex's config and
// home are in the test's temp dir; the user's ~/.codex is never read.
func TestRealAgentCodex(t *testing.T) { codexRealRun(t, "") }

// TestRealAgentCodexInstalled is TestRealAgentCodex with prsm's hooks
// installed in the (temp) user's ~/.codex/hooks.json by `prsm hooks
// install codex`, which has the codex on PATH trust them: `prsm run`
// then adds none of its own, and every event still arrives once.
func TestRealAgentCodexInstalled(t *testing.T) { codexRealRun(t, "trusted") }

// TestRealAgentCodexInstalledUntrusted is TestRealAgentCodex with prsm's
// hooks installed but never trusted (no codex on PATH at the install):
// Codex skips those, and the run's own, trusted, still fire.
func TestRealAgentCodexInstalledUntrusted(t *testing.T) { codexRealRun(t, "untrusted") }

// codexRealRun is the real Codex under prsm run; with install "trusted"
// or "untrusted", prsm's hooks are installed in the user's hooks.json
// first, and trusted or not.
func codexRealRun(t *testing.T, install string) {
	codex := realAgent(t, "@openai/codex", codexVersion, "codex")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const (
		addID   = "call_codexAddHello"
		patchID = "call_codexPatchHello"
		shellID = "call_codexShellShuffle"
		twoID   = "call_codexPatchTwo"
		prompt  = "Add a greeting, then tidy up the text files."
	)
	model := fakemodel.ResponsesStart(t, []fakemodel.ResponsesStep{
		{CallID: addID, ApplyPatch: "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n"},
		{CallID: patchID, ApplyPatch: "*** Begin Patch\n*** Update File: hello.txt\n@@\n-hello\n+hello, world\n*** End Patch\n"},
		{CallID: shellID, Exec: "printf 'one\\n' > new1.txt && mkdir -p sub && printf 'two\\n' > sub/new2.txt && sed -i s/one/ONE/ b.txt && rm c.txt"},
		{CallID: twoID, ApplyPatch: "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n*** Add File: docs/notes.txt\n+notes\n*** End Patch\n"},
		{Message: "Done: hello.txt greets, the text files are tidy."},
	})
	r := newCodexRig(t, codex, model)
	repo, codexHome, prsmHome, config, env := r.repo, r.codexHome, r.prsmHome, r.config, r.env
	var stderrOf string // the last run's stderr
	run := func(name string, args ...string) string {
		t.Helper()
		stdout, stderr := r.run(ctx, name, args...)
		stderrOf = stderr
		return stdout
	}
	for rel, content := range map[string]string{"a.txt": "alpha\n", "b.txt": "one\ntwo\n", "c.txt": "gone soon\n"} {
		if err := os.WriteFile(filepath.Join(repo, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("git", "init", "-q")
	run("git", "add", "-A")
	run("git", "commit", "-qm", "first")

	if install == "untrusted" {
		// prsm alone on PATH: no codex to trust the hooks with.
		cmd := exec.CommandContext(ctx, prsmBinary(t), "hooks", "install", "codex")
		cmd.Dir, cmd.Env = repo, append(append([]string{}, env...), "PATH="+filepath.Dir(prsmBinary(t)))
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "prsm could not have Codex trust them (no codex on PATH)") {
			t.Fatalf("hooks install without codex on PATH: %v\n%s", err, out)
		}
	}
	if install == "trusted" {
		out := run(prsmBinary(t), "hooks", "install", "codex")
		if want := "trusted them in Codex: it wrote their hashes under hooks.state in " + filepath.Join(codexHome, "config.toml"); !strings.Contains(out, want) {
			t.Fatalf("hooks install did not have Codex trust the hooks:\n%s", out)
		}
		b, err := os.ReadFile(filepath.Join(codexHome, "config.toml"))
		if err != nil || !strings.HasPrefix(string(b), config) || strings.Count(string(b), "trusted_hash") != 4 {
			t.Fatalf("config.toml after the install, want the user's config and 4 trusted hashes (%v):\n%s", err, b)
		}
		config = string(b)
	}
	if install != "" {
		// Uninstall puts Codex's files back byte for byte: config.toml
		// as the test wrote it, and no hooks.json.
		userConfig := config
		if i := strings.Index(config, "\n[hooks.state]"); i >= 0 {
			userConfig = config[:i]
		}
		defer func() {
			run(prsmBinary(t), "hooks", "uninstall", "codex")
			if b, err := os.ReadFile(filepath.Join(codexHome, "config.toml")); err != nil || string(b) != userConfig {
				t.Errorf("config.toml after the uninstall (%v):\n%s\nwant:\n%s", err, b, userConfig)
			}
			if b, err := os.ReadFile(filepath.Join(codexHome, "hooks.json")); !os.IsNotExist(err) {
				t.Errorf("hooks.json left after the uninstall (%v):\n%s", err, b)
			}
		}()
	}
	var s prsm.Session
	if err := json.Unmarshal([]byte(run(prsmBinary(t), "session", "start", "--json")), &s); err != nil {
		t.Fatal(err)
	}
	projects, err := filepath.Glob(filepath.Join(prsmHome, "projects", "*"))
	if err != nil || len(projects) != 1 {
		t.Fatalf("want one project under %s: %v %v", prsmHome, projects, err)
	}
	// Codex reports each hook it ran on stderr.
	run(prsmBinary(t), "run", "--session", s.ID, "--", codex, "exec", "--dangerously-bypass-approvals-and-sandbox", prompt)
	if n := strings.Count(stderrOf, "hook: PreToolUse Completed"); n != 4 {
		t.Errorf("codex ran %d PreToolUse hooks, want one for each of its 4 tool calls:\n%s", n, stderrOf)
	}
	if n := len(model.ResponsesRequests()); n < 5 {
		t.Fatalf("Codex asked the model %d times, want the 5 scripted steps", n)
	}
	if _, err := os.Stat(filepath.Join(codexHome, "hooks.json")); install == "" && !os.IsNotExist(err) {
		t.Errorf("prsm run wrote Codex's hooks.json (%v); it must wire the run with -c alone", err)
	}
	if b, _ := os.ReadFile(filepath.Join(codexHome, "config.toml")); string(b) != config {
		t.Errorf("prsm run changed Codex's config.toml:\n%s", b)
	}

	cl := liveClient(ctx, t, projects[0])
	recs, err := cl.Changes(ctx, s.ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	// One line per record: its id, the tool call's id, the tool, the
	// change, the path and the agent; the shell's :N numbers apart.
	// The patch of two files makes two records, :0 and :1, in prsm's
	// path order.
	var got, shellN []string
	byPath := map[string]*prsm.Record{}
	for _, rec := range recs {
		id := rec.ID
		if n, ok := strings.CutPrefix(id, shellID+":"); ok {
			shellN = append(shellN, n)
			id = shellID + ":N"
		}
		got = append(got, strings.Join([]string{id, rec.ToolCallID, rec.ToolName, rec.ChangeType, rec.RelPath, rec.AgentID}, " "))
		byPath[rec.RelPath] = rec
	}
	sort.Strings(got)
	sort.Strings(shellN)
	want := []string{
		addID + " " + addID + " Edit create hello.txt codex",
		patchID + " " + patchID + " Edit modify hello.txt codex",
		shellID + ":N " + shellID + " Bash create new1.txt codex",
		shellID + ":N " + shellID + " Bash create sub/new2.txt codex",
		shellID + ":N " + shellID + " Bash delete c.txt codex",
		shellID + ":N " + shellID + " Bash modify b.txt codex",
		twoID + ":0 " + twoID + " Edit modify a.txt codex",
		twoID + ":1 " + twoID + " Edit create docs/notes.txt codex",
	}
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") || strings.Join(shellN, " ") != "0 1 2 3" {
		t.Fatalf("records (id, tool call, tool, change, path, agent):\n%s\nwant:\n%s\nwith the shell's :N %v, want 0 to 3",
			strings.Join(got, "\n"), strings.Join(want, "\n"), shellN)
	}

	// Every change reached the workspace, byte for byte.
	for rel, content := range map[string]string{"hello.txt": "hello, world\n", "a.txt": "ALPHA\n", "docs/notes.txt": "notes\n", "b.txt": "ONE\ntwo\n", "new1.txt": "one\n", "sub/new2.txt": "two\n"} {
		if got, ok := codexRead(t, repo, rel); !ok || got != content {
			t.Errorf("workspace %s = %q (present %v), want %q", rel, got, ok, content)
		}
	}
	if _, ok := codexRead(t, repo, "c.txt"); ok {
		t.Errorf("workspace c.txt is still there; the shell deleted it")
	}

	// The prompt made a turn checkpoint.
	cps, err := cl.Checkpoints(ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	// (prsm run's own turn is named by the whole command, which holds
	// the prompt too: the prompt's turn is named by the prompt alone.)
	var turns []string
	n := 0
	for _, c := range cps {
		if c.Kind == prsm.CheckpointAuto && c.ToolCallID == "" {
			turns = append(turns, c.Name)
			if _, name, ok := strings.Cut(c.Name, ": "); ok && name == prompt {
				n++
			}
		}
	}
	if n != 1 {
		t.Fatalf("%d turn checkpoints for the prompt, want 1; turn checkpoints: %q", n, turns)
	}

	// A reject puts the file back, in the worktree and the workspace.
	if _, err := cl.Reject(ctx, s.ID, byPath["c.txt"].ID); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{repo, s.WorktreePath} {
		if got, ok := codexRead(t, dir, "c.txt"); !ok || got != "gone soon\n" {
			t.Errorf("after the reject %s/c.txt = %q (present %v), want it back", dir, got, ok)
		}
	}
}

// codexRig is a repo, Codex's home and prsm's and the user's, all in
// the test's temp dir, and the environment that runs Codex against a
// scripted model: the user's ~/.codex is never read.
type codexRig struct {
	t                                   *testing.T
	repo, codexHome, userHome, prsmHome string
	config                              string // Codex's config.toml as written
	env                                 []string
}

// newCodexRig makes the rig for the codex binary at codex and model.
func newCodexRig(t *testing.T, codex string, model *fakemodel.ResponsesServer) *codexRig {
	root := t.TempDir()
	r := &codexRig{t: t, repo: filepath.Join(root, "repo"), codexHome: filepath.Join(root, "codex-home"), userHome: filepath.Join(root, "home"), prsmHome: filepath.Join(root, "prsm")}
	for _, d := range []string{r.repo, r.codexHome, r.userHome} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { stopServers(r.prsmHome) })
	gitcfg := filepath.Join(r.userHome, ".gitconfig")
	if err := os.WriteFile(gitcfg, []byte("[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.config = `model = "gpt-5.5"
model_provider = "fake"
[model_providers.fake]
name = "fake"
base_url = "` + model.URL + `"
wire_api = "responses"
env_key = "PRSM_FAKE_OPENAI_KEY"
`
	if err := os.WriteFile(filepath.Join(r.codexHome, "config.toml"), []byte(r.config), 0o600); err != nil {
		t.Fatal(err)
	}
	r.env = append(os.Environ(),
		"PATH="+filepath.Dir(codex)+string(filepath.ListSeparator)+os.Getenv("PATH"),
		"HOME="+r.userHome, "PRSM_HOME="+r.prsmHome, "CODEX_HOME="+r.codexHome, "PRSM_FAKE_OPENAI_KEY=sk-fake",
		"GIT_CONFIG_GLOBAL="+gitcfg, "GIT_CONFIG_NOSYSTEM=1", "GORACE=atexit_sleep_ms=0")
	return r
}

// run runs name in the repo, failing the test when it fails; its
// stdout and stderr.
func (r *codexRig) run(ctx context.Context, name string, args ...string) (string, string) {
	t := r.t
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = r.repo, r.env, &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	t.Logf("%s %s:\n%s%s", filepath.Base(name), args[0], stdout.String(), stderr.String())
	return stdout.String(), stderr.String()
}

// TestRealAgentCodexFeedback is issue 46 in Codex's own loop, as
// TestRealAgentClaudeFeedback is in Claude Code's: the scripted Codex
// patches app.py, then runs a shell command that waits; meanwhile
// (after its PreToolUse) the test rejects the patch's hunk with a note
// through the API and lets the command end. The model's next request
// must hold the note's words and the file's name (prsm's PostToolUse
// answer, hookSpecificOutput.additionalContext), the note must be
// marked delivered with that call's PostToolUse, and the request after
// the next call holds it no more than once.
func TestRealAgentCodexFeedback(t *testing.T) {
	codex := realAgent(t, "@openai/codex", codexVersion, "codex")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	fb := newFeedbackScript(t)
	const (
		editID = "call_codexFeedbackEdit"
		waitID = "call_codexFeedbackWait"
		readID = "call_codexFeedbackRead"
	)
	model := fakemodel.ResponsesStart(t, []fakemodel.ResponsesStep{
		{CallID: editID, ApplyPatch: "*** Begin Patch\n*** Update File: app.py\n@@\n def fetch():\n-    retries = 3\n-    timeout = 30\n+    retries = 0\n+    timeout = 5\n*** End Patch\n"},
		{CallID: waitID, Exec: fb.wait},
		{CallID: readID, Exec: "cat app.py"},
		{Message: "Done."},
	})
	r := newCodexRig(t, codex, model)
	if err := os.WriteFile(filepath.Join(r.repo, "app.py"), []byte(feedbackApp), 0o644); err != nil {
		t.Fatal(err)
	}
	r.run(ctx, "git", "init", "-q")
	r.run(ctx, "git", "add", "-A")
	r.run(ctx, "git", "commit", "-qm", "first")
	out, _ := r.run(ctx, prsmBinary(t), "session", "start", "--json")
	var s prsm.Session
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	projects, err := filepath.Glob(filepath.Join(r.prsmHome, "projects", "*"))
	if err != nil || len(projects) != 1 {
		t.Fatalf("want one project under %s: %v %v", r.prsmHome, projects, err)
	}

	// Codex runs under prsm run; the test decides while the command
	// waits.
	cmd := exec.CommandContext(ctx, prsmBinary(t), "run", "--session", s.ID, "--", codex, "exec", "--dangerously-bypass-approvals-and-sandbox", "Make fetch fail faster.")
	cmd.Dir, cmd.Env = r.repo, r.env
	cl := liveClient(ctx, t, projects[0])
	fb.rejectWhileWaiting(ctx, cmd, cl, s.ID, editID)

	// A request's step is the number of tool outputs it carries: the
	// one for step 2 (after the waiting command) holds the note and
	// the file; the one for step 1 (before the reject) does not.
	heard := map[int]string{}
	for _, body := range model.ResponsesRequests() {
		var req struct {
			Input []struct {
				Type string `json:"type"`
			} `json:"input"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, in := range req.Input {
			if in.Type == "function_call_output" || in.Type == "custom_tool_call_output" {
				n++
			}
		}
		heard[n] = string(body)
	}
	if len(heard) < 4 {
		t.Fatalf("Codex asked the model for %d scripted steps, want 4", len(heard))
	}
	fb.check(ctx, heard, cl, s.ID, editID, "codex PostToolUse "+waitID, r.repo)
}
