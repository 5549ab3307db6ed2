package server_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/server"
)

// The review talks back over Claude Code's http hooks (issue 46): a note
// over 16 KiB is 413 and changes nothing; a hunk's reject with a note
// reaches the session's agent at its next PostToolUse, as
// additionalContext naming the file and the words, once, and is marked
// delivered with that call; the other session hears nothing of it; a
// comment on an unknown change is 404 and stores nothing.
func TestFeedbackOverHTTPHooks(t *testing.T) {
	ts := start(t, server.Config{})
	ctx := context.Background()
	s1, err := ts.eng.StartSession(ctx, api.StartRequest{Name: "one", AgentID: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := ts.eng.StartSession(ctx, api.StartRequest{Name: "two", AgentID: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	hook := func(body string) string {
		t.Helper()
		code, _, out := ts.do(t, "POST", "/hooks/claude", body, nil)
		if code != 200 {
			t.Fatalf("hook: %d %s", code, out)
		}
		return out
	}
	wt := s1.WorktreePath
	in := map[string]any{"file_path": filepath.Join(wt, "n.txt"), "content": "one\ntwo\n"}
	hook(claudeEvent(t, "PreToolUse", wt, "toolu_w1", "Write", in))
	if err := os.WriteFile(filepath.Join(wt, "n.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hook(claudeEvent(t, "PostToolUse", wt, "toolu_w1", "Write", in))
	feedback := func(session string) []prsm.Feedback {
		t.Helper()
		code, _, out := ts.do(t, "GET", "/sessions/"+session+"/feedback", "", nil)
		var items []prsm.Feedback
		if code != 200 || json.Unmarshal([]byte(out), &items) != nil {
			t.Fatalf("list feedback: %d %s", code, out)
		}
		return items
	}

	// Too long: 413 naming the limit, nothing decided or stored.
	long, _ := json.Marshal(api.RejectRequest{Say: strings.Repeat("x", api.MaxNote+1)})
	code, _, out := ts.do(t, "POST", "/sessions/"+s1.ID+"/file-changes/toolu_w1/hunks/0/reject", string(long), nil)
	if code != 413 || !strings.Contains(out, `"note_too_large"`) || !strings.Contains(out, "16384") {
		t.Fatalf("long note: %d %s", code, out)
	}
	if recs, _ := ts.eng.Records(ctx, s1.ID, "", ""); len(recs) != 1 || recs[0].Status != prsm.StatusPending {
		t.Fatalf("after a refused note the record is %+v", recs)
	}
	// Unknown change: 404, nothing stored.
	code, _, out = ts.do(t, "POST", "/sessions/"+s1.ID+"/file-changes/nosuch/comments", `{"text": "hi"}`, nil)
	if code != 404 || !strings.Contains(out, "not_found") {
		t.Fatalf("comment on an unknown change: %d %s", code, out)
	}
	if items := feedback(s1.ID); len(items) != 0 {
		t.Fatalf("refused notes stored: %+v", items)
	}

	say := "keep the retry loop; only fix the timeout"
	body, _ := json.Marshal(api.RejectRequest{Say: say, Author: "test"})
	if code, _, out := ts.do(t, "POST", "/sessions/"+s1.ID+"/file-changes/toolu_w1/hunks/0/reject", string(body), nil); code != 200 {
		t.Fatalf("reject: %d %s", code, out)
	}
	items := feedback(s1.ID)
	if len(items) != 1 || items[0].State != prsm.FeedbackQueued || items[0].Text != say || items[0].Path != "n.txt" ||
		items[0].Lines != "1-2" || !strings.Contains(items[0].Excerpt, "+two") || items[0].Why != "waiting for the agent's next hook" {
		t.Fatalf("queued: %+v", items)
	}

	// The other session's agent hears nothing of it.
	if out := hook(claudeEvent(t, "PostToolUse", s2.WorktreePath, "toolu_o1", "Read", map[string]any{"file_path": "x"})); out != "{}" {
		t.Fatalf("session two heard %s", out)
	}
	// Session one's next tool call carries it.
	out = hook(claudeEvent(t, "PostToolUse", wt, "toolu_r1", "Read", map[string]any{"file_path": filepath.Join(wt, "n.txt")}))
	var ans struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(out), &ans); err != nil || ans.HookSpecificOutput.HookEventName != "PostToolUse" {
		t.Fatalf("answer %s", out)
	}
	for _, want := range []string{"n.txt, lines 1-2", "rejected hunk 0", say, "+two"} {
		if !strings.Contains(ans.HookSpecificOutput.AdditionalContext, want) {
			t.Errorf("additionalContext lacks %q: %s", want, ans.HookSpecificOutput.AdditionalContext)
		}
	}
	items = feedback(s1.ID)
	if len(items) != 1 || items[0].State != prsm.FeedbackDelivered || items[0].Via != "claude PostToolUse toolu_r1" || items[0].Attempts != 1 {
		t.Fatalf("after delivery: %+v", items)
	}
	// Once: the next event carries nothing.
	if out := hook(claudeEvent(t, "PostToolUse", wt, "toolu_r2", "Read", map[string]any{"file_path": "x"})); out != "{}" {
		t.Fatalf("delivered twice: %s", out)
	}

	// A comment on lines of the change, and the change's own list.
	code, _, out = ts.do(t, "POST", "/sessions/"+s1.ID+"/file-changes/toolu_w1/comments", `{"lines": "2", "text": "why \u001b[31mtwo?"}`, nil)
	if code != 201 || !strings.Contains(out, `"kind":"comment"`) {
		t.Fatalf("comment: %d %s", code, out)
	}
	code, _, out = ts.do(t, "POST", "/sessions/"+s1.ID+"/file-changes/toolu_w1/comments", `{"lines": "9-2", "text": "x"}`, nil)
	if code != 400 || !strings.Contains(out, "bad_lines") {
		t.Fatalf("bad lines: %d %s", code, out)
	}
	code, _, out = ts.do(t, "GET", "/sessions/"+s1.ID+"/file-changes/toolu_w1/feedback", "", nil)
	var mine []prsm.Feedback
	if code != 200 || json.Unmarshal([]byte(out), &mine) != nil || len(mine) != 2 || mine[1].Text != "why \x1b[31mtwo?" {
		t.Fatalf("the change's feedback: %d %s", code, out)
	}
	// The command hooks' route: take, then confirm.
	code, _, out = ts.do(t, "POST", "/sessions/"+s1.ID+"/feedback/take", `{"agent": "claude", "event": "UserPromptSubmit"}`, nil)
	var d api.Delivery
	if code != 200 || json.Unmarshal([]byte(out), &d) != nil || len(d.IDs) != 1 || !strings.Contains(d.Text, "why ^[[31mtwo?") {
		t.Fatalf("take: %d %s", code, out)
	}
	if code, _, out := ts.do(t, "POST", "/sessions/"+s2.ID+"/feedback/confirm", `{"ids": [`+jsonInt(d.IDs[0])+`]}`, nil); code != 200 {
		t.Fatalf("confirm of another session: %d %s", code, out)
	}
	if items := feedback(s1.ID); items[1].State != prsm.FeedbackDelivering {
		t.Fatalf("another session's confirm marked it: %+v", items[1])
	}
	if code, _, out := ts.do(t, "POST", "/sessions/"+s1.ID+"/feedback/confirm", `{"ids": [`+jsonInt(d.IDs[0])+`]}`, nil); code != 200 {
		t.Fatalf("confirm: %d %s", code, out)
	}
	if items := feedback(s1.ID); items[1].State != prsm.FeedbackDelivered || items[1].Via != "claude UserPromptSubmit" {
		t.Fatalf("after confirm: %+v", items[1])
	}
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
