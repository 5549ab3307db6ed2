package copilot

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/agents/agent"
)

// Two identical Copilot calls in a row (the same command twice) get two
// tool call ids; the preToolUse and postToolUse of each share its id.
func TestCopilotIdenticalCallsApart(t *testing.T) {
	dir := t.TempDir()
	var ids []string
	for i := 0; i < 2; i++ {
		for _, event := range []string{"preToolUse", "postToolUse"} {
			p := &copilotPayload{SessionID: "s1", Cwd: "/w", ToolName: "bash", ToolArgs: json.RawMessage(`{"command":"echo x >> f"}`)}
			if event == "postToolUse" {
				p.ToolResult = json.RawMessage(`{"resultType":"success"}`)
			}
			call, err := p.call(event, dir)
			if err != nil || call == nil {
				t.Fatalf("%s: %v", event, err)
			}
			ids = append(ids, call.ToolCallID)
		}
	}
	if ids[0] != ids[1] || ids[2] != ids[3] {
		t.Fatalf("ids %v: each pre and post must share an id", ids)
	}
	if ids[0] == ids[2] {
		t.Fatalf("ids %v: two calls share one id", ids)
	}
}

// Copilot CLI's camelCase events as its hooks reference documents them
// (toolArgs a JSON string, toolResult an object); postToolUseFailure
// carries the error instead of a result and completes the call all the
// same, whether $PRSM_COPILOT_EVENT names it or only its fields do.
func TestCopilotPayloads(t *testing.T) {
	const (
		pre     = `{"sessionId":"s9","timestamp":1704614600000,"cwd":"/w","toolName":"bash","toolArgs":"{\"command\":\"npm test\",\"description\":\"Run the tests\"}"}`
		post    = `{"sessionId":"s9","timestamp":1704614700000,"cwd":"/w","toolName":"bash","toolArgs":"{\"command\":\"npm test\",\"description\":\"Run the tests\"}","toolResult":{"resultType":"success","textResultForLlm":"All tests passed (15/15)"}}`
		failure = `{"sessionId":"s9","timestamp":1704614700000,"cwd":"/w","toolName":"edit","toolArgs":{"path":"/w/a.txt","old_str":"a","new_str":"b"},"error":{"message":"old_str not found","name":"ToolError"}}`
	)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, payload, env, event, kind, tool, result string
	}{
		{"pre", pre, "preToolUse", "preToolUse", agent.CallStart, "Bash", ""},
		{"post", post, "postToolUse", "postToolUse", agent.CallComplete, "Bash", `{"resultType":"success","textResultForLlm":"All tests passed (15/15)"}`},
		{"failure named by env", failure, "postToolUseFailure", "postToolUseFailure", agent.CallComplete, "Edit", `{"error":{"message":"old_str not found","name":"ToolError"}}`},
		{"failure told by its fields", failure, "", "postToolUseFailure", agent.CallComplete, "Edit", `{"error":{"message":"old_str not found","name":"ToolError"}}`},
	} {
		var p copilotPayload
		if err := json.Unmarshal([]byte(tc.payload), &p); err != nil {
			t.Fatal(err)
		}
		event := p.event(func(string) string { return tc.env })
		if event != tc.event {
			t.Errorf("%s: event %q, want %q", tc.name, event, tc.event)
			continue
		}
		call, err := p.call(event, dir)
		if err != nil || call == nil || call.Kind != tc.kind {
			t.Errorf("%s: %+v %v, want %s", tc.name, call, err, tc.kind)
			continue
		}
		tool, result, who := call.Start.ToolName, "", call.Start.AgentID
		if call.Kind == agent.CallComplete {
			tool, result, who = call.Complete.ToolName, string(call.Complete.Result), call.Complete.AgentID
		}
		if tool != tc.tool || result != tc.result || who != "copilot" || !strings.HasPrefix(call.ToolCallID, "copilot-") {
			t.Errorf("%s: tool %q result %s agent %q id %q; want %q %s", tc.name, tool, result, who, call.ToolCallID, tc.tool, tc.result)
		}
	}
}
