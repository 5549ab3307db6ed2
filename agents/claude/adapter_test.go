package claude

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents/agent"
	"github.com/prsm-dev/prsm/agents/agenttest"
)

func TestClaudePayloads(t *testing.T) {
	const wt = "/home/u/.prsm/projects/repo-1234abcd/worktrees/0123456789ab"
	type want struct {
		kind, id, tool, agent string
	}
	tests := map[string]want{
		"pre-write":          {agent.CallStart, "toolu_01WriteHello", "Write", "claude"},
		"post-write":         {agent.CallComplete, "toolu_01WriteHello", "Write", "claude"},
		"pre-edit":           {agent.CallStart, "toolu_02EditAlpha", "Edit", "claude"},
		"post-edit":          {agent.CallComplete, "toolu_02EditAlpha", "Edit", "claude"},
		"pre-multiedit":      {agent.CallStart, "toolu_03MultiEditB", "MultiEdit", "claude"},
		"post-multiedit":     {agent.CallComplete, "toolu_03MultiEditB", "MultiEdit", "claude"},
		"pre-notebookedit":   {agent.CallStart, "toolu_04NotebookCell", "NotebookEdit", "claude"},
		"post-notebookedit":  {agent.CallComplete, "toolu_04NotebookCell", "NotebookEdit", "claude"},
		"pre-bash":           {agent.CallStart, "toolu_05BashShuffle", "Bash", "claude"},
		"post-bash":          {agent.CallComplete, "toolu_05BashShuffle", "Bash", "claude"},
		"pre-bash-ls":        {agent.CallStart, "toolu_06BashList", "Bash", "claude"},
		"post-bash-ls":       {agent.CallComplete, "toolu_06BashList", "Bash", "claude"},
		"post-write-missed":  {agent.CallComplete, "toolu_07WriteMissed", "Write", "claude"},
		"pre-bash-fail":      {agent.CallStart, "toolu_08BashFails", "Bash", "claude"},
		"post-bash-fail":     {agent.CallComplete, "toolu_08BashFails", "Bash", "claude"},
		"pre-subagent-edit":  {agent.CallStart, "toolu_09SubagentEdit", "Edit", "claude/general-purpose"},
		"post-subagent-edit": {agent.CallComplete, "toolu_09SubagentEdit", "Edit", "claude/general-purpose"},
		"pre-write-second":   {agent.CallStart, "toolu_10WriteSecond", "Write", "claude"},
		"post-write-second":  {agent.CallComplete, "toolu_10WriteSecond", "Write", "claude"},
		"pre-edit-noid":      {agent.CallStart, "", "Edit", "claude"},
		"post-edit-noid":     {agent.CallComplete, "", "Edit", "claude"},
		"pre-edit-restart":   {agent.CallStart, "toolu_11EditAfterRestart", "Edit", "claude"},
		"post-edit-restart":  {agent.CallComplete, "toolu_11EditAfterRestart", "Edit", "claude"},
		"pre-bash-env":       {agent.CallStart, "toolu_12BashFromEnv", "Bash", "claude"},
		"post-bash-env":      {agent.CallComplete, "toolu_12BashFromEnv", "Bash", "claude"},
		"pre-write-outside":  {agent.CallStart, "toolu_13WriteOutside", "Write", "claude"},
		"post-write-outside": {agent.CallComplete, "toolu_13WriteOutside", "Write", "claude"},
		"prompt":             {agent.CallTurn, "", "", ""},
		"prompt-second":      {agent.CallTurn, "", "", ""},
		"stop":               {agent.CallTurnEnd, "", "", ""},
		"stop-background":    {}, // a subagent still runs: the turn goes on
		"session-start":      {},
		"session-end":        {},
		"notification":       {},
		// Captured from the real Claude Code 2.1.328 (TestRealAgentClaude):
		// prompt_id and effort (an object) on every event, duration_ms,
		// structuredPatch and originalFile, bashEditDiff, Stop's
		// last_assistant_message and background_tasks.
		"real-session-start": {},
		"real-prompt":        {agent.CallTurn, "", "", ""},
		"real-pre-write":     {agent.CallStart, "toolu_01RealWriteHello", "Write", "claude"},
		"real-post-write":    {agent.CallComplete, "toolu_01RealWriteHello", "Write", "claude"},
		"real-pre-edit":      {agent.CallStart, "toolu_02RealEditHello", "Edit", "claude"},
		"real-post-edit":     {agent.CallComplete, "toolu_02RealEditHello", "Edit", "claude"},
		"real-pre-bash":      {agent.CallStart, "toolu_03RealBashShuffle", "Bash", "claude"},
		"real-post-bash":     {agent.CallComplete, "toolu_03RealBashShuffle", "Bash", "claude"},
		"real-stop":          {agent.CallTurnEnd, "", "", ""},
		"real-session-end":   {},
		// A background task ended: its notification comes as a prompt,
		// and is no turn; what its Agent call left pending is its.
		"real-task-notification": {agent.CallComplete, "toolu_40Agent", "Agent", "claude"},
	}
	files, err := filepath.Glob(filepath.Join(agenttest.Testdata("hooks"), "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in %s: %v", agenttest.Testdata("hooks"), err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			w, ok := tests[name]
			if !ok {
				t.Fatalf("fixture %s has no row in this test", name)
			}
			payload, err := agenttest.Payload(name, wt)
			if err != nil {
				t.Fatal(err)
			}
			p, err := readClaudePayload(bytes.NewReader(payload))
			if err != nil {
				t.Fatal(err)
			}
			if p.Cwd != wt {
				t.Errorf("cwd = %q, want %q", p.Cwd, wt)
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
				if call.Turn.MessageIndex != 0 || call.Turn.Prompt != p.Prompt || p.Prompt == "" {
					t.Errorf("turn = %+v, want the prompt and no message index", call.Turn)
				}
				return
			case agent.CallTurnEnd:
				if call.ToolCallID != "" || call.Turn.Prompt != "" || call.Turn.MessageIndex != 0 {
					t.Errorf("turn end = %+v, want no tool call and no turn", call)
				}
				return
			case agent.CallStart:
				r := call.Start
				if r.ToolCallID != call.ToolCallID || r.ToolName != w.tool || r.AgentID != w.agent || r.Cwd != wt ||
					!bytes.Equal(r.Args, p.ToolInput) || r.MessageIndex != 0 {
					t.Errorf("start = %+v, want tool %s, agent %s, the tool input as args", r, w.tool, w.agent)
				}
			case agent.CallComplete:
				r := call.Complete
				args := string(p.ToolInput)
				if p.HookEventName == "UserPromptSubmit" {
					args = `{"task_id":"aa0e0225ffda4e104"}` // the notification's
				}
				if r.ToolName != w.tool || r.AgentID != w.agent || r.Cwd != wt || string(r.Args) != args {
					t.Errorf("complete = %+v, want tool %s, agent %s, the tool input as args", r, w.tool, w.agent)
				}
				var result map[string]any
				if err := json.Unmarshal(r.Result, &result); err != nil || len(result) == 0 {
					t.Errorf("result %s: want the tool response or the error (%v)", r.Result, err)
				}
				if p.HookEventName == "PostToolUseFailure" && result["error"] != "Command failed with exit code 1" {
					t.Errorf("result %s: want the error", r.Result)
				}
			}
			if w.id != "" && call.ToolCallID != w.id {
				t.Errorf("tool call id = %q, want %q", call.ToolCallID, w.id)
			}
			if !prsm.ValidToolCallID(call.ToolCallID) {
				t.Errorf("tool call id %q is not one the server takes", call.ToolCallID)
			}
		})
	}
}

func TestClaudeDerivedToolCallID(t *testing.T) {
	id := func(name string) string {
		t.Helper()
		payload, err := agenttest.Payload(name, "/wt")
		if err != nil {
			t.Fatal(err)
		}
		p, err := readClaudePayload(bytes.NewReader(payload))
		if err != nil {
			t.Fatal(err)
		}
		return p.toolCallID()
	}
	pre, post := id("pre-edit-noid"), id("post-edit-noid")
	if !regexp.MustCompile(`^claude-[0-9a-f]{32}$`).MatchString(pre) {
		t.Fatalf("derived id %q", pre)
	}
	if pre != post {
		t.Fatalf("pre id %s != post id %s", pre, post)
	}
	other := &claudePayload{SessionID: "8c35adc1-2f6e-4c8e-9d1a-3b7f0e5a9c42", ToolName: "Edit", ToolInput: json.RawMessage(`{"file_path":"/wt/other.txt"}`)}
	if other.toolCallID() == pre {
		t.Fatal("a different tool input gets the same id")
	}
	for _, bad := range []string{"toolu/../x y", "..", "...", strings.Repeat("a", 129), "toolé"} {
		odd := &claudePayload{ToolUseID: bad}
		if got := odd.toolCallID(); !prsm.ValidToolCallID(got) || got == odd.ToolUseID {
			t.Fatalf("a tool_use_id the server refuses (%q) is passed on as %q", bad, got)
		}
	}
	if got := (&claudePayload{AgentID: "a1", AgentType: "bad\x00type\n"}).agentID(); got != "claude/badtype" {
		t.Fatalf("agent id = %q", got)
	}
	if got := (&claudePayload{AgentType: "reviewer"}).agentID(); got != "claude" {
		t.Fatalf("main thread of a --agent session: agent id = %q, want claude", got)
	}
}
