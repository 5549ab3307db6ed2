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
	"github.com/prsm-dev/prsm/internal/fakemodel"
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
	r.commit(map[string]string{"app.py": "def fetch():\n    retries = 3\n    timeout = 30\n    return get(timeout)\n"})
	r.prsm(ctx, nil, "hooks", "install", "claude")
	s := r.startSession(ctx)
	wt := s.WorktreePath
	// The Bash says it started (started), then waits for the test
	// (marker): the reject comes while it runs, after its PreToolUse.
	signals := t.TempDir()
	started, marker := filepath.Join(signals, "started"), filepath.Join(signals, "go")

	const (
		editID = "toolu_61FeedbackEdit"
		bashID = "toolu_62FeedbackWait"
		readID = "toolu_63FeedbackRead"
		note   = "keep the retries at three; only lower the timeout to ten"
	)
	model := fakemodel.NewAnthropic(
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: editID, Name: "Edit",
			Input: map[string]any{"file_path": filepath.Join(wt, "app.py"), "old_string": "    retries = 3\n    timeout = 30", "new_string": "    retries = 0\n    timeout = 5"}}}},
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: bashID, Name: "Bash",
			Input: map[string]any{"command": "touch " + started + "; for i in $(seq 600); do [ -e " + marker + " ] && break; sleep 0.1; done; echo waited", "description": "Wait"}}}},
		fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{ID: readID, Name: "Read",
			Input: map[string]any{"file_path": filepath.Join(wt, "app.py")}}}},
		fakemodel.AnthropicStep{Text: "Done."},
	)
	defer model.Close()

	// Claude Code runs under prsm run; the test decides while the Bash
	// waits.
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, prsmBinary(t), append([]string{"run", "--session", s.ID, "--"}, claudeArgs(r.claude, "Make fetch fail faster.")...)...)
	cmd.Dir, cmd.Env = r.repo, append(append([]string{}, r.env...), claudeModelEnv(model)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	cl := r.client(ctx)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		recs, err := cl.Changes(ctx, s.ID, "", "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(started); err == nil && len(recs) == 1 && recs[0].ID == editID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no record of the Edit; records %v\n%s%s", recs, stdout.String(), stderr.String())
		}
		select {
		case err := <-done:
			t.Fatalf("prsm run ended (%v) before the Edit was recorded\n%s%s", err, stdout.String(), stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	if _, err := cl.DecideHunksWith(ctx, s.ID, editID, api.HunksRequest{Reject: []int{0}, Say: note, Author: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("prsm run: %v\n%s%s", err, stdout.String(), stderr.String())
	}
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
	for _, want := range []string{note, "app.py", "rejected hunk 0"} {
		if !strings.Contains(heard[2], want) {
			t.Errorf("the model's request after the Bash lacks %q:\n%s", want, heard[2])
		}
	}
	if strings.Contains(heard[1], note) {
		t.Errorf("the note reached the model before it was given")
	}
	if n := strings.Count(heard[3], note); n != 1 {
		t.Errorf("the last request holds the note %d times, want once (delivered once)", n)
	}
	items, err := cl.Feedback(ctx, s.ID, editID)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].State != prsm.FeedbackDelivered || items[0].Via != "claude PostToolUse "+bashID || items[0].Attempts != 1 {
		b, _ := json.Marshal(items)
		t.Fatalf("feedback after the run: %s", b)
	}
	if got, _ := fileIn(t, r.repo, "app.py"); !strings.Contains(got, "timeout = 30") {
		t.Errorf("the rejected hunk is still in the workspace: %q", got)
	}
}
