package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/internal/fakemodel"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/server"
)

// TestRealAgentGemini runs the real Gemini CLI 0.61.0, headless, through
// `prsm run -- gemini` against a fake Gemini API that plays a write_file,
// a replace, one shell command that creates, changes and deletes several
// files, and a final answer. Gemini trusts only the workspace, so the run
// must carry that trust to the worktree. prsm's hooks are installed in
// Gemini's user settings (HOME is a temp dir), or, in run-wired, nothing
// is installed and prsm run gives Gemini a home of the run's own (the
// user's settings, login and trust, with prsm's hooks). It then checks,
// through the API, the records (derived tool call ids, paired; canonical
// tool names; the shell's files as :N records), the bytes in the
// workspace, the prompt's turn checkpoint, and that a reject puts a file
// back.
func TestRealAgentGemini(t *testing.T) {
	gemini := realAgent(t, "@google/gemini-cli", "0.61.0", "gemini")
	t.Run("installed", func(t *testing.T) { realGeminiRun(t, gemini, true) })
	t.Run("run-wired", func(t *testing.T) { realGeminiRun(t, gemini, false) })
}

// realGeminiRun is one run of TestRealAgentGemini; install says whether
// prsm's hooks are installed first, or left to prsm run.
func realGeminiRun(t *testing.T, gemini string, install bool) {
	prsmHome, home := geminiEnv(t)

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
	fake := fakemodel.NewGeminiServer(t, []fakemodel.GeminiStep{
		{Tool: "write_file", Args: map[string]any{"file_path": "hello.txt", "content": "hello\n"}},
		{Tool: "replace", Args: map[string]any{"file_path": "a.txt", "instruction": "Upper-case beta.", "old_string": "beta", "new_string": "BETA"}},
		{Tool: "run_shell_command", Args: map[string]any{"command": shell, "description": "Shuffle the files."}},
		{Text: "All done."},
	})

	// Gemini's user settings: API-key auth (else it exits 41), and only
	// the workspace trusted.
	gdir := geminiUserSettings(t, home, repo)

	prsmBin, err := exec.LookPath("prsm")
	if err != nil {
		t.Fatal(err)
	}
	run := func(timeout time.Duration, args ...string) (string, string, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, prsmBin, args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GOOGLE_GEMINI_BASE_URL="+fake.URL, "GEMINI_API_KEY=fake-key", "NO_COLOR=1")
		cmd.Stdin = nil
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), err
	}
	if install {
		if out, errs, err := run(time.Minute, "hooks", "install", "gemini"); err != nil {
			t.Fatalf("prsm hooks install gemini: %v\n%s%s", err, out, errs)
		}
	}
	userSettings, err := os.ReadFile(filepath.Join(gdir, "settings.json"))
	if err != nil {
		t.Fatal(err)
	}

	const prompt = "Greet, fix a.txt, then shuffle the files."
	out, errs, err := run(4*time.Minute, "run", "--", gemini, "-p", prompt, "--yolo")
	t.Logf("prsm run -- gemini: %v\nstdout:\n%s\nstderr:\n%s", err, out, errs)
	if err != nil {
		for _, r := range fake.Requests() {
			t.Logf("request %s side=%v: %.600s", r.Path, r.Side, r.Body)
		}
		t.Fatalf("prsm run -- gemini failed: %v", err)
	}
	side, main := 0, 0
	for _, r := range fake.Requests() {
		t.Logf("model request %s (side request: %v)", r.Path, r.Side)
		if r.Side {
			side++
		} else {
			main++
		}
	}
	if side == 0 || main != 4 {
		t.Errorf("%d side requests and %d of the main loop; want the router's and 4", side, main)
	}
	if fake.Played() != 4 {
		t.Fatalf("the model played %d of 4 steps", fake.Played())
	}
	if !strings.Contains(errs, "trusts the workspace "+repo+"; the session's worktree is trusted for this run too") {
		t.Errorf("prsm run did not say it carried Gemini's trust over; stderr:\n%s", errs)
	}
	if strings.Contains(errs, "prsm hooks install gemini") || strings.Contains(errs, "Watch") {
		t.Errorf("prsm run said Gemini's calls come in as Watch; stderr:\n%s", errs)
	}
	// Without an install, the user's settings stay as they were (Gemini
	// rewrites them itself only to migrate old keys, as with an install
	// it did: disableAutoUpdate became enableAutoUpdate).
	if after, err := os.ReadFile(filepath.Join(gdir, "settings.json")); !install && (err != nil || string(after) != string(userSettings)) {
		t.Errorf("the run changed the user's Gemini settings:\n%s\nwas:\n%s", after, userSettings)
	}

	// the bytes in the workspace
	for rel, want := range map[string]string{
		"hello.txt": "hello\n", "a.txt": "alpha\nBETA\n", "new1.txt": "one\n", "new2.txt": "two\n", "c.txt": "y one\ny two\n",
	} {
		if got, err := os.ReadFile(filepath.Join(repo, rel)); err != nil || string(got) != want {
			t.Errorf("workspace %s = %q, %v; want %q", rel, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(repo, "gone.txt")); !os.IsNotExist(err) {
		t.Errorf("workspace gone.txt still there: %v", err)
	}

	// the records, through the API
	cl := realAgentClient(t, prsmHome)
	ctx := context.Background()
	sessions, err := cl.Sessions(ctx, "")
	if err != nil || len(sessions) != 1 {
		t.Fatalf("sessions %+v, %v; want the one run's", sessions, err)
	}
	s := sessions[0]
	if s.AgentID != "gemini" || s.Status != prsm.SessionActive {
		t.Errorf("session %+v", s)
	}
	recs, err := cl.Changes(ctx, s.ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	derived := regexp.MustCompile(`^gemini-[0-9a-f]{12}-([0-9]+)$`)
	byPath := map[string]*prsm.Record{}
	var summary []string
	for _, r := range recs {
		summary = append(summary, r.RelPath+" "+r.ID+" "+r.ToolName+" "+r.AgentID)
		byPath[r.RelPath] = r
	}
	sort.Strings(summary)
	t.Logf("records:\n%s", strings.Join(summary, "\n"))
	if len(recs) != 6 {
		t.Errorf("%d records, want 6 (hello.txt, a.txt, and 4 from the shell)", len(recs))
	}
	calls := map[string]string{} // tool call id: tool name
	for _, c := range []struct{ rel, tool, seq string }{
		{"hello.txt", "Write", "1"}, {"a.txt", "Edit", "2"},
		{"new1.txt", "Bash", "3"}, {"new2.txt", "Bash", "3"}, {"c.txt", "Bash", "3"}, {"gone.txt", "Bash", "3"},
	} {
		r := byPath[c.rel]
		if r == nil {
			t.Errorf("no record of %s", c.rel)
			continue
		}
		m := derived.FindStringSubmatch(r.ToolCallID)
		if m == nil || m[1] != c.seq || r.ToolName != c.tool || r.AgentID != "gemini" {
			t.Errorf("%s: tool call %q (want gemini-<hash>-%s), tool %s (want %s), agent %s", c.rel, r.ToolCallID, c.seq, r.ToolName, c.tool, r.AgentID)
		}
		if c.tool == "Bash" {
			if !regexp.MustCompile(`^` + regexp.QuoteMeta(r.ToolCallID) + `:[0-9]+$`).MatchString(r.ID) {
				t.Errorf("%s: shell record id %q, want %s:N", c.rel, r.ID, r.ToolCallID)
			}
		} else if r.ID != r.ToolCallID {
			t.Errorf("%s: record id %q, want its tool call's %q", c.rel, r.ID, r.ToolCallID)
		}
		if prev, ok := calls[r.ToolCallID]; ok && prev != c.tool {
			t.Errorf("tool call %s made %s and %s records", r.ToolCallID, prev, c.tool)
		}
		calls[r.ToolCallID] = c.tool
	}
	if len(calls) != 3 {
		t.Errorf("%d tool calls made records, want 3: %v", len(calls), calls)
	}
	// Paired: an AfterTool that missed its BeforeTool would have taken a
	// number of its own (the records say 1, 2, 3); Gemini's session end
	// removed the call state.
	if states, _ := filepath.Glob(filepath.Join(prsmHome, "projects", "*", "hooks", "gemini-*.json")); len(states) != 0 {
		t.Errorf("Gemini call state files left after its session ended: %v", states)
	}

	// the prompt's turn checkpoint
	cps, err := cl.Checkpoints(ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	turns := 0
	for _, c := range cps {
		t.Logf("checkpoint %s %s %q", c.ID, c.Kind, c.Name)
		if strings.Contains(c.Name, prompt) {
			turns++
		}
	}
	if turns != 1 {
		t.Errorf("%d checkpoints name the prompt, want one turn checkpoint", turns)
	}

	// a reject puts the file back
	if _, err := cl.Reject(ctx, s.ID, byPath["a.txt"].ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(got) != "alpha\nbeta\n" {
		t.Errorf("after reject, workspace a.txt = %q", got)
	}
	if _, err := cl.Reject(ctx, s.ID, byPath["gone.txt"].ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(repo, "gone.txt")); string(got) != "bye\n" {
		t.Errorf("after reject, workspace gone.txt = %q", got)
	}
}

// realAgentClient is a client of the one prsm server under prsmHome.
func realAgentClient(t *testing.T, prsmHome string) *client.Client {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(prsmHome, "projects", "*", server.InfoFile))
	if err != nil || len(files) != 1 {
		t.Fatalf("want one server.json under %s, found %v (%v)", prsmHome, files, err)
	}
	info, err := server.ReadInfo(filepath.Dir(files[0]))
	if err != nil {
		t.Fatal(err)
	}
	return client.New(info)
}

func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// geminiEnv is the test's environment for a real Gemini CLI: a prsm
// home and a user home of its own (testgit.Env), and none of Gemini's
// own variables; prsm's home and the user's.
func geminiEnv(t *testing.T) (prsmHome, home string) {
	prsmHome = testgit.Env(t)
	home = os.Getenv("HOME")
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	t.Cleanup(func() { stopServers(prsmHome) })
	for _, k := range []string{"GEMINI_CLI_HOME", "GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
		"GEMINI_CLI_SYSTEM_SETTINGS_PATH", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "PRSM_SESSION_ID", "PRSM_WORKSPACE"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	return prsmHome, home
}

// geminiUserSettings writes Gemini's user settings under home: API-key
// auth (else it exits 41), and only repo trusted; its ~/.gemini.
func geminiUserSettings(t *testing.T, home, repo string) string {
	gdir := filepath.Join(home, ".gemini")
	writeJSONFile(t, filepath.Join(gdir, "settings.json"), map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"general":  map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"privacy":  map[string]any{"usageStatisticsEnabled": false},
	})
	writeJSONFile(t, filepath.Join(gdir, "trustedFolders.json"), map[string]any{repo: "TRUST_FOLDER"})
	return gdir
}

// TestRealAgentGeminiFeedback is issue 46 in Gemini CLI's own loop, as
// TestRealAgentClaudeFeedback is in Claude Code's: the scripted Gemini
// replaces lines of app.py, then runs a shell command that waits;
// meanwhile the test rejects the edit's hunk with a note and lets the
// command end. The model's next request must hold the note and the
// file's name (prsm's AfterTool answer, additionalContext, which Gemini
// appends to the tool's result), and the note must be marked delivered
// with that call's AfterTool.
func TestRealAgentGeminiFeedback(t *testing.T) {
	gemini := realAgent(t, "@google/gemini-cli", "0.61.0", "gemini")
	prsmHome, home := geminiEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	repo, s, cl := feedbackSession(ctx, t, prsmHome)
	fb := newFeedbackScript(t)
	fake := fakemodel.NewGeminiServer(t, []fakemodel.GeminiStep{
		{Tool: "replace", Args: map[string]any{"file_path": "app.py", "instruction": "Fail faster.", "old_string": "    retries = 3\n    timeout = 30", "new_string": "    retries = 0\n    timeout = 5"}},
		{Tool: "run_shell_command", Args: map[string]any{"command": fb.wait, "description": "Wait."}},
		{Tool: "run_shell_command", Args: map[string]any{"command": "cat app.py", "description": "Read."}},
		{Text: "Done."},
	})
	// The fake's own log cuts bodies: the test keeps the main loop's
	// whole, in order (step k's request is the k-th).
	var mu sync.Mutex
	var bodies []string
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"functionDeclarations"`) && strings.Contains(r.URL.Path, ":streamGenerateContent") {
			mu.Lock()
			bodies = append(bodies, string(body))
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		fake.ServeHTTP(w, r)
	}))
	defer model.Close()
	geminiUserSettings(t, home, repo)

	prsmBin, err := exec.LookPath("prsm")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, prsmBin, "run", "--session", s.ID, "--", gemini, "-p", "Make fetch fail faster.", "--yolo")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "GOOGLE_GEMINI_BASE_URL="+model.URL, "GEMINI_API_KEY=fake-key", "NO_COLOR=1")
	editID := fb.rejectWhileWaiting(ctx, cmd, cl, s.ID, "")
	if fake.Played() != 4 {
		t.Fatalf("the model played %d of 4 steps", fake.Played())
	}
	heard := map[int]string{}
	mu.Lock()
	for i, b := range bodies {
		heard[i] = b
	}
	mu.Unlock()
	// Gemini numbers its calls: the edit is <id>-1, the wait <id>-2.
	waitID := strings.TrimSuffix(editID, "-1") + "-2"
	fb.check(ctx, heard, cl, s.ID, editID, "gemini AfterTool "+waitID, repo)
}
