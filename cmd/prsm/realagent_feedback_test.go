package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/internal/fakemodel"
	"github.com/prsm-dev/prsm/internal/testgit"
)

// TestRealAgentClaudeFeedback is issue 46 in Claude Code's own loop: the
// scripted agent edits app.py, then runs a Bash that waits; meanwhile
// (after the Bash's PreToolUse) the test rejects the edit's hunk with a
// note through the API, and lets the Bash end. The model's next request must hold the note's words and the
// file's name (prsm's PostToolUse answer, additionalContext), and the
// note must be marked delivered with that Bash call's PostToolUse; the
// Read after it carries nothing more.
func TestRealAgentClaudeFeedback(t *testing.T) {
	r := newClaudeRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	r.commit(map[string]string{"app.py": feedbackApp})
	r.prsm(ctx, nil, "hooks", "install", "claude")
	s := r.startSession(ctx)
	wt := s.WorktreePath
	fb := newFeedbackScript(t)

	const (
		editID = "toolu_61FeedbackEdit"
		bashID = "toolu_62FeedbackWait"
		readID = "toolu_63FeedbackRead"
	)
	model := fakemodel.NewAnthropic(
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: editID, Name: "Edit",
			Input: map[string]any{"file_path": filepath.Join(wt, "app.py"), "old_string": "    retries = 3\n    timeout = 30", "new_string": "    retries = 0\n    timeout = 5"}}}},
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: bashID, Name: "Bash",
			Input: map[string]any{"command": fb.wait, "description": "Wait"}}}},
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: readID, Name: "Read",
			Input: map[string]any{"file_path": filepath.Join(wt, "app.py")}}}},
		fakemodel.AnthropicStep{Text: "Done."},
	)
	defer model.Close()

	// Claude Code runs under prsm run; the test decides while the Bash
	// waits.
	cmd := exec.CommandContext(ctx, prsmBinary(t), append([]string{"run", "--session", s.ID, "--"}, claudeArgs(r.claude, "Make fetch fail faster.")...)...)
	cmd.Dir, cmd.Env = r.repo, append(append([]string{}, r.env...), claudeModelEnv(model)...)
	cl := r.client(ctx)
	fb.rejectWhileWaiting(ctx, cmd, cl, s.ID, editID)
	if n := model.StepsServed(); n != 4 {
		t.Fatalf("Claude Code asked the model for %d scripted steps, want 4", n)
	}

	// The request for step 2 (after the Bash) holds the note and the
	// file; the one for step 1 (before the reject) does not.
	heard := map[int]string{}
	for _, req := range model.Requests() {
		if req.Step >= 0 {
			heard[req.Step] = string(req.Messages)
		}
	}
	fb.check(ctx, heard, cl, s.ID, editID, "claude PostToolUse "+bashID, r.repo)
}

// feedbackApp is app.py before a feedback test's agent edits it.
const feedbackApp = "def fetch():\n    retries = 3\n    timeout = 30\n    return get(timeout)\n"

// feedbackNote is what the user says of the rejected hunk.
const feedbackNote = "keep the retries at three; only lower the timeout to ten"

// feedbackScript is what the real agents' feedback tests share: the
// agent edits app.py (feedbackApp), then runs wait, a shell command
// that says it started and waits for the test, which rejects the edit's
// hunk with feedbackNote meanwhile, after the command's pre-tool event;
// the model's next request must hold the note.
type feedbackScript struct {
	t               *testing.T
	started, marker string // the signal files
	wait            string // the waiting shell command (at most 9 s)
}

// newFeedbackScript makes the signal files' place and the command.
func newFeedbackScript(t *testing.T) *feedbackScript {
	dir := t.TempDir()
	f := &feedbackScript{t: t, started: filepath.Join(dir, "started"), marker: filepath.Join(dir, "go")}
	// (No command substitution: Gemini CLI refuses a command with one.)
	f.wait = "touch " + f.started + "; timeout 9 sh -c 'until [ -e " + f.marker + " ]; do sleep 0.1; done'; echo waited"
	return f
}

// rejectWhileWaiting runs cmd (the agent under prsm run) and, once the
// edit editID is recorded and the waiting command has started, rejects
// the edit's hunk 0 with the note and lets the command end; then waits
// for cmd, failing the test when it fails. With editID "", the one
// record there is is the edit's; rejectWhileWaiting returns its id.
func (f *feedbackScript) rejectWhileWaiting(ctx context.Context, cmd *exec.Cmd, cl *client.Client, sessionID, editID string) string {
	t := f.t
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		recs, err := cl.Changes(ctx, sessionID, "", "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(f.started); err == nil && len(recs) == 1 && (editID == "" || recs[0].ID == editID) {
			editID = recs[0].ID
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no record of the edit; records %v\n%s%s", recs, stdout.String(), stderr.String())
		}
		select {
		case err := <-done:
			t.Fatalf("prsm run ended (%v) before the edit was recorded\n%s%s", err, stdout.String(), stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	if _, err := cl.DecideHunksWith(ctx, sessionID, editID, api.HunksRequest{Reject: []int{0}, Say: feedbackNote, Author: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("prsm run: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	t.Logf("prsm run:\n%s%s", stdout.String(), stderr.String())
	return editID
}

// check checks what the model heard, its requests by scripted step:
// step 2's (after the waiting command) holds the note, the file's name
// and the decision, step 1's (before the reject) not the note, step 3's
// the note once; and that the note was marked delivered via (the event
// and tool call that carried it), once, with the hunk out of the
// workspace at repo.
func (f *feedbackScript) check(ctx context.Context, heard map[int]string, cl *client.Client, sessionID, editID, via, repo string) {
	t := f.t
	t.Helper()
	for _, want := range []string{feedbackNote, "app.py", "rejected hunk 0"} {
		if !strings.Contains(heard[2], want) {
			t.Errorf("the model's request after the waiting command lacks %q:\n%s", want, heard[2])
		}
	}
	if strings.Contains(heard[1], feedbackNote) {
		t.Errorf("the note reached the model before it was given")
	}
	if n := strings.Count(heard[3], feedbackNote); n != 1 {
		t.Errorf("the last request holds the note %d times, want once (delivered once)", n)
	}
	items, err := cl.Feedback(ctx, sessionID, editID)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].State != prsm.FeedbackDelivered || items[0].Via != via || items[0].Attempts != 1 {
		b, _ := json.Marshal(items)
		t.Fatalf("feedback after the run: %s", b)
	}
	if got, _ := fileIn(t, repo, "app.py"); !strings.Contains(got, "timeout = 30") {
		t.Errorf("the rejected hunk is still in the workspace: %q", got)
	}
}

// chatHeard is what a scripted Chat Completions model heard: the
// messages of each request (JSON) by the step it answered (side requests
// left out), for feedbackScript.check.
func chatHeard(fake *fakemodel.ChatServer) map[int]string {
	heard := map[int]string{}
	for _, req := range fake.Requests() {
		if req.Step >= 0 {
			b, _ := json.Marshal(req.Messages)
			heard[req.Step] = string(b)
		}
	}
	return heard
}

// feedbackSession is a repo holding feedbackApp (under testgit.Env's
// homes, prsm's at prsmHome), a session of it started by prsm, and a
// client of its server.
func feedbackSession(ctx context.Context, t *testing.T, prsmHome string) (string, prsm.Session, *client.Client) {
	t.Helper()
	repo := testgit.Init(t, "repo")
	testgit.Commit(t, repo, "first", map[string]string{"app.py": feedbackApp})
	repo, err := filepath.EvalSymlinks(repo)
	if err != nil {
		t.Fatal(err)
	}
	start := exec.CommandContext(ctx, prsmBinary(t), "session", "start", "--json")
	start.Dir = repo
	out, err := start.Output()
	var s prsm.Session
	if err != nil || json.Unmarshal(out, &s) != nil {
		t.Fatalf("session start: %v %s", err, out)
	}
	return repo, s, realAgentClient(t, prsmHome)
}
