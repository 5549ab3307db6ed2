package codex

import "github.com/prsm-dev/prsm/agents/agent"

// Feedback implements agent.Agent. Codex 0.169's hooks answer in Claude
// Code's shape: hookSpecificOutput.additionalContext reaches the model
// on PreToolUse, PostToolUse and UserPromptSubmit (its output schemas
// for those events take it); on Stop, decision "block" with a reason
// keeps the turn going.
func (Agent) Feedback() *agent.Feedback {
	return &agent.Feedback{
		Events: []string{"PreToolUse", "PostToolUse", "UserPromptSubmit"},
		Stop:   "Stop",
		Answer: agent.HookContextAnswer("Stop"),
	}
}
