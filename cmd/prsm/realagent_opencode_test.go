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
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/internal/fakemodel"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/server"
)

// TestRealAgentOpencode runs the real opencode 1.18.33 (`opencode run
// --auto`) under `prsm run`, against a scripted Chat Completions model: a
// write, an edit, one bash command that creates, changes and deletes
// files, then a final answer. prsm's plugin reports each tool call: once
// installed by `prsm hooks install opencode` into opencode's user plugin
// directory (in a temp HOME), once added by prsm run alone. The test
// checks through the API that every call became records with opencode's
// own ids and prsm's tool names, that the shell's files are :N records,
// that the workspace holds every change byte for byte, that the prompt
// made a turn checkpoint, and that a reject puts a file back.
func TestRealAgentOpencode(t *testing.T) {
	exe := realAgent(t, "opencode-ai", "1.18.33", "opencode")
	t.Run("installed", func(t *testing.T) { realOpencodeRun(t, exe, true) })
	t.Run("run-wired", func(t *testing.T) { realOpencodeRun(t, exe, false) })
}

// TestRealAgentOpencodeFeedback is issue 46 in opencode's own loop, as
// TestRealAgentClaudeFeedback is in Claude Code's: the real opencode
// 1.18.33 under prsm run (which adds prsm's plugin) edits app.py, then
// runs a bash that waits while the test rejects the edit's hunk with a
// note through the API. prsm's answer to the bash's tool.execute.after
// carries the note, and the plugin appends it to the bash's result: the
// model's next request must hold the note's words and the file's name,
// and the note must be marked delivered with that call's
// tool.execute.after; the read after it carries nothing more. Then a
// comment made between runs reaches the model with the next run's prompt
// (chat.message: the plugin adds it to the user's message).
func TestRealAgentOpencodeFeedback(t *testing.T) {
	exe := realAgent(t, "opencode-ai", "1.18.33", "opencode")
	prsmHome, config, env := opencodeEnv(t)
	t.Cleanup(func() { stopServers(prsmHome) })
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	repo, s, cl := feedbackSession(ctx, t, prsmHome)
	fb := newFeedbackScript(t)
	wait, _ := json.Marshal(map[string]string{"command": fb.wait, "description": "Wait"})
	fake := opencodeModelStart(t, config, []fakemodel.ChatStep{
		{ToolCalls: []fakemodel.ChatToolCall{{ID: "call_edit_1", Name: "edit",
			Arguments: `{"filePath":"app.py","oldString":"    retries = 3\n    timeout = 30","newString":"    retries = 0\n    timeout = 5"}`}}},
		{ToolCalls: []fakemodel.ChatToolCall{{ID: "call_wait_2", Name: "bash", Arguments: string(wait)}}},
		{ToolCalls: []fakemodel.ChatToolCall{{ID: "call_read_3", Name: "bash",
			Arguments: `{"command":"cat app.py","description":"Read"}`}}},
		{Text: "Done."},
	})
	run := func(prompt string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, prsmBinary(t), "run", "--session", s.ID, "--", exe, "run", "--auto", prompt)
		// PWD as the user's shell sets it (opencode takes its directory
		// from it).
		cmd.Dir, cmd.Env = repo, append(env, "PWD="+repo)
		return cmd
	}
	start := time.Now()
	fb.rejectWhileWaiting(ctx, run("Make fetch fail faster."), cl, s.ID, "call_edit_1")
	t.Logf("prsm run -- opencode took %s", time.Since(start).Round(time.Millisecond))
	fb.check(ctx, chatHeard(fake), cl, s.ID, "call_edit_1", "opencode tool.execute.after call_wait_2", repo)

	// A comment made between two runs reaches the model with the next
	// prompt: the plugin adds it to the user's message (chat.message).
	const comment = "the timeout lives in config.py now"
	if _, err := cl.Comment(ctx, s.ID, "call_edit_1", api.CommentRequest{Text: comment, Author: "test"}); err != nil {
		t.Fatal(err)
	}
	second := opencodeModelStart(t, config, []fakemodel.ChatStep{{Text: "Heard."}})
	if out, err := run("Go on.").CombinedOutput(); err != nil {
		t.Fatalf("prsm run -- opencode, again: %v\n%s", err, out)
	}
	last := chatHeard(second)[0]
	if !strings.Contains(last, comment) || !strings.Contains(last, "Go on.") {
		t.Errorf("the second run's request lacks the comment or the prompt:\n%s", last)
	}
	items, err := cl.Feedback(ctx, s.ID, "call_edit_1")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[1].Text != comment || items[1].State != prsm.FeedbackDelivered || items[1].Via != "opencode chat.message" {
		b, _ := json.Marshal(items)
		t.Errorf("feedback after the second run: %s", b)
	}
}

// realOpencodeRun is one run of TestRealAgentOpencode; install says whether
// prsm's plugin is installed first, or left to prsm run.
func realOpencodeRun(t *testing.T, exe string, install bool) {

	prsmHome, config, env := opencodeEnv(t)
	ws := testgit.Init(t, "ws")
	testgit.Commit(t, ws, "first", map[string]string{"a.txt": "abc\n", "gone.txt": "bye\n", "keep.txt": "keep\n"})
	absArgs, _ := json.Marshal(map[string]string{"filePath": filepath.Join(ws, "abs.txt"), "content": "abs\n"})

	fake, err := fakemodel.ChatStart([]fakemodel.ChatStep{
		{ToolCalls: []fakemodel.ChatToolCall{{ID: "call_write_1", Name: "write",
			Arguments: `{"filePath":"hello.txt","content":"hello\n"}`}}},
		{ToolCalls: []fakemodel.ChatToolCall{{ID: "call_edit_2", Name: "edit",
			Arguments: `{"filePath":"hello.txt","oldString":"hello","newString":"hello world"}`}}},
		{ToolCalls: []fakemodel.ChatToolCall{{ID: "call_bash_3", Name: "bash",
			Arguments: `{"command":"printf 'one\\n' > one.txt && printf 'two\\n' > two.txt && sed -i 's/a/A/' a.txt && rm gone.txt","description":"Tidy the text files"}`}}},
		// The workspace's own path, not the worktree's: prsm's plugin
		// maps it onto the worktree, or the write would escape review.
		{ToolCalls: []fakemodel.ChatToolCall{{ID: "call_abs_4", Name: "write",
			Arguments: string(absArgs)}}},
		{Text: "Done: hello.txt written and edited, text files tidied."},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()

	prsmExe := prsmBinary(t)
	if install {
		cmd := exec.Command(prsmExe, "hooks", "install", "opencode")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "installed prsm's opencode plugin") {
			t.Fatalf("prsm hooks install opencode: %v\n%s", err, out)
		}
	}
	opencodeModel(t, config, fake)

	const prompt = "Write hello.txt, edit it, then tidy the text files."
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, prsmExe, "run", "--", exe, "run", "--auto", prompt)
	// PWD as the user's shell sets it: the workspace, where prsm run is
	// started. opencode takes its directory from PWD, so a PWD prsm left
	// as it was would send it to work in the workspace itself.
	run.Dir, run.Env, run.Stdin = ws, append(env, "PWD="+ws), nil
	run.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	run.Stdout, run.Stderr = &out, &out
	start := time.Now()
	if err := run.Run(); err != nil {
		t.Fatalf("prsm run -- opencode: %v\n%s", err, out.String())
	}
	t.Logf("prsm run -- opencode took %s", time.Since(start).Round(time.Millisecond))
	if !strings.Contains(out.String(), "Done: hello.txt written") {
		t.Errorf("opencode did not print the final answer:\n%s", out.String())
	}

	// The model's side: a plain first request (the title), and every
	// tool's result handed back under the model's call id.
	reqs := fake.Requests()
	results := map[string]bool{}
	steps := 0
	for _, r := range reqs {
		if r.Step >= 0 {
			steps++
		}
		for _, m := range r.Messages {
			if m.Role == "tool" {
				results[m.ToolCallID] = true
			}
		}
	}
	for _, id := range []string{"call_write_1", "call_edit_2", "call_bash_3", "call_abs_4"} {
		if !results[id] {
			t.Errorf("opencode never sent the result of %s back; requests: %+v", id, reqs)
		}
	}
	if steps < 5 {
		t.Errorf("the model played %d steps, want 5", steps)
	}

	files, err := filepath.Glob(filepath.Join(prsmHome, "projects", "*", server.InfoFile))
	if err != nil || len(files) != 1 {
		t.Fatalf("want one server.json, found %v (%v)\n%s", files, err, out.String())
	}
	info, err := server.ReadInfo(filepath.Dir(files[0]))
	if err != nil {
		t.Fatal(err)
	}
	cl := client.New(info)
	sessions, err := cl.Sessions(ctx, "")
	if err != nil || len(sessions) != 1 {
		t.Fatalf("sessions: %+v, %v", sessions, err)
	}
	sid := sessions[0].ID
	recs, err := cl.Changes(ctx, sid, "", "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, strings.Join([]string{r.ID, r.ToolCallID, r.ToolName, r.ChangeType, r.RelPath, r.AgentID}, " "))
	}
	sort.Strings(got)
	want := []string{
		"call_bash_3:0 call_bash_3 Bash modify a.txt opencode",
		"call_bash_3:1 call_bash_3 Bash delete gone.txt opencode",
		"call_bash_3:2 call_bash_3 Bash create one.txt opencode",
		"call_bash_3:3 call_bash_3 Bash create two.txt opencode",
		"call_abs_4 call_abs_4 Write create abs.txt opencode",
		"call_edit_2 call_edit_2 Edit modify hello.txt opencode",
		"call_write_1 call_write_1 Write create hello.txt opencode",
	}
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records:\n%s\nwant:\n%s\nprsm run said:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), out.String())
	}

	// Every change reached the workspace, byte for byte.
	wantFiles := map[string]string{"abs.txt": "abs\n", "a.txt": "Abc\n", "hello.txt": "hello world\n", "one.txt": "one\n", "two.txt": "two\n", "keep.txt": "keep\n"}
	for rel, content := range wantFiles {
		b, err := os.ReadFile(filepath.Join(ws, rel))
		if err != nil || string(b) != content {
			t.Errorf("workspace %s = %q (%v), want %q", rel, b, err, content)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "gone.txt")); !os.IsNotExist(err) {
		t.Errorf("workspace gone.txt still there: %v", err)
	}
	if st := testgit.Git(t, ws, "status", "--porcelain", "--untracked-files=all"); strings.Contains(st, ".opencode") || strings.Contains(st, "opencode.json") {
		t.Errorf("opencode's own files reached the workspace:\n%s", st)
	}

	// The prompt made a turn checkpoint (the plugin's chat.message), not
	// only the run's.
	cps, err := cl.Checkpoints(ctx, sid, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	turn := false
	for _, c := range cps {
		names = append(names, c.Name)
		if c.Kind == prsm.CheckpointAuto && strings.HasPrefix(c.Name, "turn ") && !strings.Contains(c.Name, "prsm run") && strings.Contains(c.Name, "Write hello.txt, edit it") {
			turn = true
		}
	}
	if !turn {
		t.Errorf("no turn checkpoint for the prompt; checkpoints: %q", names)
	}

	// A reject puts the file back.
	if _, err := cl.Reject(ctx, sid, "call_bash_3:1"); err != nil {
		t.Fatalf("reject the delete of gone.txt: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "gone.txt")); err != nil || string(b) != "bye\n" {
		t.Errorf("after the reject, gone.txt = %q (%v), want %q", b, err, "bye\n")
	}
}

// opencodeEnv is the environment of a real opencode run: testgit.Env's
// homes (prsm's is prsmHome), opencode's XDG directories under the test's
// HOME (its config directory config), and no network of its own; the
// user's npm cache (under the HOME before testgit.Env's) spares the
// download of the plugin SDK opencode installs into its config directory
// at start.
func opencodeEnv(t *testing.T) (prsmHome, config string, env []string) {
	realHome, _ := os.UserHomeDir()
	prsmHome = testgit.Env(t)
	home := os.Getenv("HOME")
	config = filepath.Join(home, ".config")
	env = append(os.Environ(),
		"XDG_CONFIG_HOME="+config,
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"OPENCODE_DISABLE_MODELS_FETCH=true",
		"OPENCODE_DISABLE_AUTOUPDATE=true",
		"OPENCODE_DISABLE_SHARE=true",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=true",
	)
	if realHome != "" {
		env = append(env, "npm_config_cache="+filepath.Join(realHome, ".npm"))
	}
	return prsmHome, config, env
}

// opencodeModelStart starts a scripted model of steps, stopped when the
// test ends, and points opencode at it (opencodeModel).
func opencodeModelStart(t *testing.T, config string, steps []fakemodel.ChatStep) *fakemodel.ChatServer {
	fake, err := fakemodel.ChatStart(steps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	opencodeModel(t, config, fake)
	return fake
}

// opencodeModel points opencode (its user config under config) at the
// scripted model fake, as its only provider and model.
func opencodeModel(t *testing.T, config string, fake *fakemodel.ChatServer) {
	ocConfig, _ := json.Marshal(map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"provider": map[string]any{"fake": map[string]any{
			"npm":     "@ai-sdk/openai-compatible",
			"name":    "Fake",
			"options": map[string]any{"baseURL": fake.URL, "apiKey": "x"},
			"models":  map[string]any{"scripted": map[string]any{"name": "scripted", "tool_call": true}},
		}},
		"model":      "fake/scripted",
		"autoupdate": false,
		"share":      "disabled",
	})
	testgit.Write(t, config, "opencode/opencode.json", string(ocConfig), 0o644)
}
