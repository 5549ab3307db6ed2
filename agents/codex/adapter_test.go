package codex

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents/agent"
	"github.com/prsm-dev/prsm/agents/agenttest"
)

func TestCodexPayloads(t *testing.T) {
	const wt = "/home/u/.prsm/projects/repo-1234abcd/worktrees/0123456789ab/sub"
	type want struct{ kind, id, tool string }
	tests := map[string]want{
		"prompt":             {agent.CallTurn, "", ""},
		"pre-patch-add":      {agent.CallStart, "call_add1", "Edit"},
		"post-patch-add":     {agent.CallComplete, "call_add1", "Edit"},
		"pre-patch-multi":    {agent.CallStart, "call_upd2", "Edit"},
		"post-patch-multi":   {agent.CallComplete, "call_upd2", "Edit"},
		"pre-bash":           {agent.CallStart, "call_sh3", "Bash"},
		"post-bash":          {agent.CallComplete, "call_sh3", "Bash"},
		"pre-bash-noid":      {agent.CallStart, "", "Bash"},
		"post-bash-noid":     {agent.CallComplete, "", "Bash"},
		"stop":               {agent.CallTurnEnd, "", ""},
		"session-start":      {},
		"permission-request": {},
	}
	files, err := filepath.Glob(filepath.Join(agenttest.Testdata("hooks-codex"), "*.json"))
	if err != nil || len(files) != len(tests) {
		t.Fatalf("%d fixtures in %s, want %d: %v", len(files), agenttest.Testdata("hooks-codex"), len(tests), err)
	}
	ids := map[string]string{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			w, ok := tests[name]
			if !ok {
				t.Fatalf("fixture %s has no row in this test", name)
			}
			payload, err := agenttest.Payload(f, wt)
			if err != nil {
				t.Fatal(err)
			}
			p, err := readCodexPayload(bytes.NewReader(payload))
			if err != nil {
				t.Fatal(err)
			}
			call, err := p.call()
			if err != nil {
				t.Fatal(err)
			}
			if w.kind == "" {
				if call != nil {
					t.Fatalf("%s makes a %s call, want none", p.HookEventName, call.Kind)
				}
				return
			}
			if call == nil || call.Kind != w.kind {
				t.Fatalf("call = %+v, want kind %s", call, w.kind)
			}
			switch call.Kind {
			case agent.CallTurn:
				if call.Turn.Prompt != "do it" || call.Turn.MessageIndex != 0 {
					t.Errorf("turn = %+v, want the prompt", call.Turn)
				}
				return
			case agent.CallTurnEnd:
				if call.ToolCallID != "" || call.Turn.Prompt != "" {
					t.Errorf("turn end = %+v", call)
				}
				return
			case agent.CallStart:
				r := call.Start
				if r.ToolCallID != call.ToolCallID || r.ToolName != w.tool || r.AgentID != "codex" || r.Cwd != wt || !bytes.Equal(r.Args, p.ToolInput) {
					t.Errorf("start = %+v, want tool %s, agent codex, cwd %s, the tool input as args", r, w.tool, wt)
				}
			case agent.CallComplete:
				r := call.Complete
				if r.ToolName != w.tool || r.AgentID != "codex" || r.Cwd != wt || !bytes.Equal(r.Args, p.ToolInput) || !bytes.Equal(r.Result, p.ToolResponse) || len(r.Result) == 0 {
					t.Errorf("complete = %+v, want tool %s, agent codex, the tool input and response", r, w.tool)
				}
			}
			if w.id != "" && call.ToolCallID != w.id {
				t.Errorf("tool call id = %q, want %q", call.ToolCallID, w.id)
			}
			if !prsm.ValidToolCallID(call.ToolCallID) {
				t.Errorf("tool call id %q is not one the server takes", call.ToolCallID)
			}
			ids[name] = call.ToolCallID
		})
	}
	// Without tool_use_id, Pre and Post meet on one derived id.
	if pre, post := ids["pre-bash-noid"], ids["post-bash-noid"]; pre != post || !regexp.MustCompile(`^codex-[0-9a-f]{32}$`).MatchString(pre) {
		t.Errorf("derived ids: pre %q, post %q", pre, post)
	}
	if odd := (&codexPayload{ToolUseID: "call/../x y"}).toolCallID(); !prsm.ValidToolCallID(odd) || odd == "call/../x y" {
		t.Errorf("a tool_use_id the server refuses is passed on as %q", odd)
	}
}
