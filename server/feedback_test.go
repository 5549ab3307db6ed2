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

	// A hook's call is answered with whether feedback waits.
	for sid, want := range map[string]string{s1.ID: api.FeedbackWaiting, s2.ID: api.FeedbackNone} {
		code, hdr, out := ts.do(t, "POST", "/sessions/"+sid+"/turns", `{"prompt": "go"}`, nil)
		if code >= 300 || hdr.Get(api.FeedbackHeader) != want {
			t.Fatalf("turn of %s: %d %q %s, want %s", sid, code, hdr.Get(api.FeedbackHeader), out, want)
		}
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
	// A hook token takes only its own session's feedback.
	code, _, out = ts.do(t, "POST", "/sessions/"+s2.ID+"/hook-tokens", "", nil)
	var tok api.HookToken
	if code != 201 && code != 200 || json.Unmarshal([]byte(out), &tok) != nil || tok.Token == "" {
		t.Fatalf("mint: %d %s", code, out)
	}
	code, _, out = ts.do(t, "POST", "/sessions/"+s1.ID+"/feedback/take", `{"agent": "claude", "event": "PostToolUse"}`,
		map[string]string{"Authorization": "Bearer " + tok.Token})
	if code != 403 || !strings.Contains(out, "hook_token_scope") {
		t.Fatalf("another session's token took: %d %s", code, out)
	}
	code, _, out = ts.do(t, "POST", "/sessions/"+s2.ID+"/feedback/take", `{"agent": "claude", "event": "PostToolUse"}`,
		map[string]string{"Authorization": "Bearer " + tok.Token})
	if code != 200 || !strings.Contains(out, `"ids":[]`) {
		t.Fatalf("own token's take: %d %s", code, out)
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

// A bulk reject with a note is one item that sums up its files, however
// many; one that runs on as a job names every pending change; a rewind
// without a note queues its notice.
func TestFeedbackOfBulkAndRewind(t *testing.T) {
	ts := start(t, server.Config{})
	ctx := context.Background()
	s, err := ts.eng.StartSession(ctx, api.StartRequest{Name: "bulk", AgentID: "cursor"})
	if err != nil {
		t.Fatal(err)
	}
	call := func(id string, files ...string) {
		t.Helper()
		args, _ := json.Marshal(map[string]any{"tool_call_id": id, "tool_name": "Bash", "args": map[string]string{"command": "gen"}})
		if code, _, out := ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls", string(args), nil); code != 200 {
			t.Fatalf("capture: %d %s", code, out)
		}
		for _, f := range files {
			p := filepath.Join(s.WorktreePath, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(f+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if code, _, out := ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls/"+id+"/complete", `{"result":{}}`, nil); code != 200 {
			t.Fatalf("complete: %d %s", code, out)
		}
	}
	code, _, out := ts.do(t, "POST", "/sessions/"+s.ID+"/checkpoints", `{"name": "before"}`, nil)
	var cp prsm.Checkpoint
	if code != 201 || json.Unmarshal([]byte(out), &cp) != nil {
		t.Fatalf("checkpoint: %d %s", code, out)
	}
	var files []string
	for i := 0; i < 30; i++ {
		files = append(files, "gen/f"+jsonInt(int64(i))+".txt")
	}
	call("toolu_b1", append(files, "top.txt")...)

	code, _, out = ts.do(t, "POST", "/sessions/"+s.ID+"/file-changes/reject-all", `{"say": "no generated files"}`, nil)
	if code != 200 {
		t.Fatalf("reject-all: %d %s", code, out)
	}
	call("toolu_b2", "late.txt")
	code, _, out = ts.do(t, "POST", "/sessions/"+s.ID+"/file-changes/reject-all", `{}`, map[string]string{"Prefer": "respond-async"})
	if code != 202 {
		t.Fatalf("reject-all async: %d %s", code, out)
	}
	code, _, out = ts.do(t, "POST", "/sessions/"+s.ID+"/checkpoints/"+cp.ID+"/rewind", `{}`, nil)
	if code != 200 {
		t.Fatalf("rewind: %d %s", code, out)
	}
	code, _, out = ts.do(t, "GET", "/sessions/"+s.ID+"/feedback", "", nil)
	var items []prsm.Feedback
	if code != 200 || json.Unmarshal([]byte(out), &items) != nil || len(items) != 3 {
		t.Fatalf("feedback: %d %s", code, out)
	}
	if f := items[0]; f.Kind != prsm.FeedbackNote || f.Decision != "rejected 31 changes" || f.Path != "gen/… (30 files), top.txt" ||
		f.Text != "no generated files" || f.RecordID != "" {
		t.Errorf("the bulk reject's item: %+v", f)
	}
	if f := items[1]; f.Kind != prsm.FeedbackNotice || f.Path != "" || f.Decision != "rejected every pending change (1 change)" {
		t.Errorf("the async bulk reject's item: %+v", f)
	}
	if f := items[2]; f.Kind != prsm.FeedbackNotice || !strings.HasPrefix(f.Decision, "rewound the session to checkpoint "+cp.ID) {
		t.Errorf("the rewind's item: %+v", f)
	}
	// Cursor does not hear it yet, and says so.
	if !strings.Contains(items[0].Why, "prsm does not deliver feedback to Cursor yet") {
		t.Errorf("why %q", items[0].Why)
	}
}
