package opencode

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/agents/agent"
)

func TestOpencodePayloads(t *testing.T) {
	decode := func(s string) *opencodePayload {
		t.Helper()
		var p opencodePayload
		if err := json.Unmarshal([]byte(s), &p); err != nil {
			t.Fatal(err)
		}
		return &p
	}
	before := decode(`{"hook_event_name":"tool.execute.before","session_id":"ses_1","cwd":"/w","tool":"edit","call_id":"call_e1","args":{"filePath":"a.txt","oldString":"a","newString":"b"}}`)
	c, err := before.call()
	if err != nil || c.Kind != agent.CallStart || c.ToolCallID != "call_e1" || c.Start.ToolName != "Edit" || c.Start.AgentID != "opencode" || c.Start.Cwd != "/w" {
		t.Fatalf("before: %+v, %v", c, err)
	}
	var args map[string]string
	if err := json.Unmarshal(c.Start.Args, &args); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"filePath": "a.txt", "file_path": "a.txt", "oldString": "a", "old_string": "a", "newString": "b", "new_string": "b"}
	if len(args) != len(want) {
		t.Fatalf("args %v, want %v", args, want)
	}
	for k, v := range want {
		if args[k] != v {
			t.Fatalf("args %v, want %v", args, want)
		}
	}

	after := decode(`{"hook_event_name":"tool.execute.after","session_id":"ses_1","cwd":"/w","tool":"bash","call_id":"call_b1","args":{"command":"rm x"},"title":"rm x","exit":3}`)
	c, err = after.call()
	if err != nil || c.Kind != agent.CallComplete || c.ToolCallID != "call_b1" || c.Complete.ToolName != "Bash" || string(c.Complete.Result) != `{"exit":3,"title":"rm x"}` || string(c.Complete.Args) != `{"command":"rm x"}` {
		t.Fatalf("after: %+v, %v", c, err)
	}

	c, err = decode(`{"hook_event_name":"chat.message","cwd":"/w","prompt":"hi"}`).call()
	if err != nil || c.Kind != agent.CallTurn || c.Turn.Prompt != "hi" {
		t.Fatalf("chat.message: %+v, %v", c, err)
	}
	c, err = decode(`{"hook_event_name":"session.idle","cwd":"/w"}`).call()
	if err != nil || c.Kind != agent.CallTurnEnd {
		t.Fatalf("session.idle: %+v, %v", c, err)
	}
	if c, err := decode(`{"hook_event_name":"file.edited"}`).call(); c != nil || err != nil {
		t.Fatalf("file.edited: %+v, %v", c, err)
	}
	if _, err := decode(`{"tool":"bash"}`).call(); err == nil || !strings.Contains(err.Error(), "no hook_event_name") {
		t.Fatalf("no event name: %v", err)
	}

	// A callID the server would refuse is hashed, the same for before and
	// after; two calls differ.
	b1 := decode(`{"hook_event_name":"tool.execute.before","session_id":"s","tool":"bash","call_id":"bad id/with space","args":{"command":"ls"}}`).toolCallID()
	a1 := decode(`{"hook_event_name":"tool.execute.after","session_id":"s","tool":"bash","call_id":"bad id/with space","args":{"command":"ls"}}`).toolCallID()
	b2 := decode(`{"hook_event_name":"tool.execute.before","session_id":"s","tool":"bash","call_id":"bad id/with space 2","args":{"command":"ls"}}`).toolCallID()
	if b1 != a1 || b1 == b2 || !strings.HasPrefix(b1, "opencode-") {
		t.Fatalf("derived ids: %s %s %s", b1, a1, b2)
	}
}

// TestOpencodeFeedback: the events that ask for the feedback are
// tool.execute.after (for its tool call) and chat.message, and the answer
// the plugin reads is {"feedback": text}.
func TestOpencodeFeedback(t *testing.T) {
	f := Agent{}.Feedback()
	if a := f.AskOf("opencode", opencodeAfter, "call_1"); a == nil || a.Event != opencodeAfter || a.ToolCallID != "call_1" || a.Stop {
		t.Errorf("tool.execute.after asks %+v", a)
	}
	if a := f.AskOf("opencode", opencodeMessage, ""); a == nil || a.Stop {
		t.Errorf("chat.message asks %+v", a)
	}
	for _, e := range []string{opencodeBefore, opencodeIdle} {
		if a := f.AskOf("opencode", e, "call_1"); a != nil {
			t.Errorf("%s asks %+v", e, a)
		}
	}
	b, err := f.Answer(opencodeAfter, "note <\"x\">", nil)
	if err != nil || string(b) != `{"feedback":"note \u003c\"x\"\u003e"}` {
		t.Errorf("answer %s, %v", b, err)
	}
}
