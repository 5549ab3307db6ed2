package cursor

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/agents/agent"
)

// The same shell command twice in one Cursor generation gets two tool call
// ids, and so do two identical afterFileEdits; the before and after of one
// command share its id.
func TestCursorIdenticalCallsApart(t *testing.T) {
	base := cursorPayload{ConversationID: "c1", GenerationID: "g1", WorkspaceRoots: []string{"/w"}, Cwd: "/w"}
	dir := t.TempDir()
	var ids []string
	for i := 0; i < 2; i++ {
		for _, event := range []string{"beforeShellExecution", "afterShellExecution"} {
			p := base
			p.HookEventName, p.Command = event, "echo x >> f"
			if event == "afterShellExecution" {
				p.Output = json.RawMessage(`""`)
			}
			call, err := p.call(dir)
			if err != nil || call == nil {
				t.Fatalf("%s: %v", event, err)
			}
			ids = append(ids, call.ToolCallID)
		}
	}
	if ids[0] != ids[1] || ids[2] != ids[3] || ids[0] == ids[2] {
		t.Fatalf("shell ids %v: want one per command, shared by its before and after", ids)
	}
	var edits []string
	for i := 0; i < 2; i++ {
		p := base
		p.HookEventName, p.FilePath, p.Edits = "afterFileEdit", "/w/a.txt", json.RawMessage(`[{"old_string":"a","new_string":"b"}]`)
		call, err := p.call(dir)
		if err != nil || call == nil {
			t.Fatalf("afterFileEdit: %v", err)
		}
		edits = append(edits, call.ToolCallID)
	}
	if edits[0] == edits[1] {
		t.Fatalf("edit ids %v: two edits share one id", edits)
	}
}

// Cursor's newer tool events (preToolUse, postToolUse, postToolUseFailure):
// tool_name and tool_input as Claude Code sends them; tool_use_id is the
// call's id when it is one, else the calls are numbered as the shell's
// are; the tool's name becomes prsm's, the output or error the result.
func TestCursorToolEvents(t *testing.T) {
	dir := t.TempDir()
	base := `"conversation_id":"c7","generation_id":"g7","workspace_roots":["/w"],"cwd":"/w"`
	for _, tc := range []struct {
		name, payload, kind, id, tool, result string
	}{
		{"pre with id", `{` + base + `,"hook_event_name":"preToolUse","tool_name":"Write","tool_use_id":"tool_abc1","tool_input":{"file_path":"/w/a.txt","contents":"x"}}`,
			agent.CallStart, "tool_abc1", "Write", ""},
		{"post with id", `{` + base + `,"hook_event_name":"postToolUse","tool_name":"Write","tool_use_id":"tool_abc1","tool_input":{"file_path":"/w/a.txt","contents":"x"},"tool_output":"{\"ok\":true}"}`,
			agent.CallComplete, "tool_abc1", "Write", `{"output":"{\"ok\":true}"}`},
		{"pre without id", `{` + base + `,"hook_event_name":"preToolUse","tool_name":"Shell","tool_input":{"command":"make"}}`,
			agent.CallStart, "cursor-", "Bash", ""},
		{"failure without id", `{` + base + `,"hook_event_name":"postToolUseFailure","tool_name":"Shell","tool_input":{"command":"make"},"error":"exit 2"}`,
			agent.CallComplete, "cursor-", "Bash", `{"error":"exit 2"}`},
	} {
		var p cursorPayload
		if err := json.Unmarshal([]byte(tc.payload), &p); err != nil {
			t.Fatal(err)
		}
		call, err := p.call(dir)
		if err != nil || call == nil || call.Kind != tc.kind {
			t.Fatalf("%s: %+v %v, want %s", tc.name, call, err, tc.kind)
		}
		tool, result, who := call.Start.ToolName, "", call.Start.AgentID
		if call.Kind == agent.CallComplete {
			tool, result, who = call.Complete.ToolName, string(call.Complete.Result), call.Complete.AgentID
		}
		if !strings.HasPrefix(call.ToolCallID, tc.id) || tool != tc.tool || result != tc.result || who != "cursor" {
			t.Errorf("%s: id %q tool %q result %s agent %q; want %s* %q %s", tc.name, call.ToolCallID, tool, result, who, tc.id, tc.tool, tc.result)
		}
	}
	// The numbered pre and its failure are one call.
	var pre, post cursorPayload
	json.Unmarshal([]byte(`{"conversation_id":"c8","hook_event_name":"preToolUse","tool_name":"Shell","tool_input":{"command":"ls"}}`), &pre)
	json.Unmarshal([]byte(`{"conversation_id":"c8","hook_event_name":"postToolUseFailure","tool_name":"Shell","tool_input":{"command":"ls"},"error":"x"}`), &post)
	a, _ := pre.call(dir)
	b, _ := post.call(dir)
	if a == nil || b == nil || a.ToolCallID != b.ToolCallID {
		t.Fatalf("pre %+v and its failure %+v: want one id", a, b)
	}
}
