package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/agents/agent"
	"github.com/prsm-dev/prsm/api"
)

// fakeServer takes an event's calls and hands out text as the feedback,
// noting what was asked and confirmed, and when (order).
type fakeServer struct {
	text    string
	asked   []api.TakeFeedbackRequest
	order   []string
	failAsk bool
}

func (f *fakeServer) StartToolCall(context.Context, string, api.ToolCallRequest) error {
	f.order = append(f.order, "start")
	return nil
}

func (f *fakeServer) CompleteToolCall(context.Context, string, string, api.CompleteRequest) error {
	f.order = append(f.order, "complete")
	return nil
}

func (f *fakeServer) Turn(context.Context, string, api.TurnRequest) error {
	f.order = append(f.order, "turn")
	return nil
}

func (f *fakeServer) EndTurn(context.Context, string) error {
	f.order = append(f.order, "turn-end")
	return nil
}

func (f *fakeServer) TakeFeedback(_ context.Context, _ string, req api.TakeFeedbackRequest) (*api.Delivery, error) {
	f.asked = append(f.asked, req)
	f.order = append(f.order, "take")
	if f.failAsk {
		return nil, errors.New("server gone")
	}
	if f.text == "" {
		return &api.Delivery{IDs: []int64{}}, nil
	}
	return &api.Delivery{IDs: []int64{7}, Text: f.text}, nil
}

func (f *fakeServer) ConfirmFeedback(_ context.Context, _ string, ids []int64) error {
	f.order = append(f.order, "confirm")
	return nil
}

// runHandle runs the command hook's adapter on one event, its calls
// delivered to srv; the order notes when the answer was written.
func runHandle(t *testing.T, srv *fakeServer, event map[string]any) (string, string) {
	t.Helper()
	b, _ := json.Marshal(event)
	var out, errb bytes.Buffer
	w := writerFunc(func(p []byte) (int, error) {
		srv.order = append(srv.order, "answer")
		return out.Write(p)
	})
	h := &agent.Host{Stdout: w, Stderr: &errb, Getenv: func(string) string { return "" },
		Send: func(ctx context.Context, _ string, call *agent.Call, _ string) error {
			return agent.Deliver(ctx, srv, "0123456789ab", call)
		}}
	if err := handle(context.Background(), h, bytes.NewReader(b)); err != nil {
		t.Fatalf("handle: %v (%s)", err, errb.String())
	}
	return out.String(), errb.String()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Each event whose answer reaches Claude's model asks for the feedback
// after its own call, and answers with it as additionalContext (Stop:
// decision block with it as reason), then confirms: after the answer is
// written, never before. Events that carry none ask nothing and print
// nothing; a failed ask is one line on stderr and the event goes on.
func TestClaudeFeedbackAnswers(t *testing.T) {
	const wt = "/tmp/not-a-session"
	tool := func(event, id string) map[string]any {
		return map[string]any{"hook_event_name": event, "cwd": wt, "session_id": "c", "tool_name": "Read",
			"tool_use_id": id, "tool_input": map[string]any{"file_path": "x"}, "tool_response": map[string]any{}}
	}
	for _, tc := range []struct {
		event   map[string]any
		ask     string // the event asked for; "" none
		stop    bool
		order   string
		context string // hookSpecificOutput.additionalContext's event; "" for Stop
	}{
		{tool("PreToolUse", "toolu_a"), "PreToolUse", false, "start take answer confirm", "PreToolUse"},
		{tool("PostToolUse", "toolu_b"), "PostToolUse", false, "complete take answer confirm", "PostToolUse"},
		{map[string]any{"hook_event_name": "UserPromptSubmit", "cwd": wt, "prompt": "go"}, "UserPromptSubmit", false, "turn take answer confirm", "UserPromptSubmit"},
		{map[string]any{"hook_event_name": "Stop", "cwd": wt}, "Stop", true, "turn-end take answer confirm", ""},
		{tool("PostToolUseFailure", "toolu_c"), "", false, "complete", ""},
	} {
		name := tc.event["hook_event_name"].(string)
		srv := &fakeServer{text: "prsm: the user rejected hunk 0 of a.go"}
		out, _ := runHandle(t, srv, tc.event)
		if got := strings.Join(srv.order, " "); got != tc.order {
			t.Errorf("%s: order %q, want %q", name, got, tc.order)
		}
		if tc.ask == "" {
			if len(srv.asked) != 0 || out != "" {
				t.Errorf("%s asked %v and answered %q", name, srv.asked, out)
			}
			continue
		}
		if len(srv.asked) != 1 || srv.asked[0].Event != tc.ask || srv.asked[0].Agent != "claude" || srv.asked[0].Stop != tc.stop {
			t.Errorf("%s asked %+v", name, srv.asked)
		}
		var ans map[string]any
		if err := json.Unmarshal([]byte(out), &ans); err != nil {
			t.Fatalf("%s answered %q", name, out)
		}
		if tc.context == "" {
			if ans["decision"] != "block" || ans["reason"] != srv.text {
				t.Errorf("Stop answered %s", out)
			}
			continue
		}
		spec, _ := ans["hookSpecificOutput"].(map[string]any)
		if spec["hookEventName"] != tc.context || spec["additionalContext"] != srv.text {
			t.Errorf("%s answered %s", name, out)
		}
	}

	// Nothing to hear: nothing on stdout, no confirm.
	srv := &fakeServer{}
	if out, _ := runHandle(t, srv, tool("PostToolUse", "toolu_d")); out != "" || strings.Contains(strings.Join(srv.order, " "), "confirm") {
		t.Errorf("nothing to hear: %q, %v", out, srv.order)
	}
	// A failed ask: said on stderr, the event itself went through.
	srv = &fakeServer{failAsk: true}
	out, errs := runHandle(t, srv, tool("PostToolUse", "toolu_e"))
	if out != "" || !strings.Contains(errs, "prsm hook: feedback: server gone") || srv.order[0] != "complete" {
		t.Errorf("failed ask: %q %q %v", out, errs, srv.order)
	}
}

// A PreToolUse answer that moves a path keeps its updatedInput and
// permissionDecision beside the feedback.
func TestClaudeFeedbackBesideMove(t *testing.T) {
	moved := []byte(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"r","updatedInput":{"file_path":"/wt/a"}}}`)
	b, err := Agent{}.Feedback().Answer("PreToolUse", "heard", moved)
	if err != nil {
		t.Fatal(err)
	}
	var ans struct {
		HookSpecificOutput map[string]any `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(b, &ans); err != nil {
		t.Fatal(err)
	}
	h := ans.HookSpecificOutput
	if h["permissionDecision"] != "allow" || h["additionalContext"] != "heard" || h["updatedInput"].(map[string]any)["file_path"] != "/wt/a" {
		t.Fatalf("answer %s", b)
	}
}

// Copilot's events in Claude's shape never ask: Copilot's answer does
// not carry Claude's feedback.
func TestTranslateAsksNothing(t *testing.T) {
	b, _ := json.Marshal(map[string]any{"hook_event_name": "PostToolUse", "cwd": "/x", "tool_name": "Read", "tool_use_id": "toolu_z"})
	call, _, _, err := Translate(b, "PostToolUse", "copilot")
	if err != nil || call == nil || call.Ask != nil {
		t.Fatalf("Translate: %+v %v", call, err)
	}
}
