package copilot

import "github.com/prsm-dev/prsm/agents/agent"

// Feedback implements agent.Agent, for Copilot CLI's camelCase events
// (its own hooks; the Claude-shaped ones it reads from Claude Code's
// settings hear nothing). Copilot CLI 1.0.x takes additionalContext at
// the top of a hook's answer on preToolUse, postToolUse (added to the
// tool's result for the model) and userPromptSubmitted (added to the
// prompt); on agentStop, decision "block" queues reason as the next
// user message.
func (Agent) Feedback() *agent.Feedback {
	return &agent.Feedback{
		Events: []string{"preToolUse", "postToolUse", "userPromptSubmitted"},
		Stop:   "agentStop",
		Answer: agent.TopContextAnswer("agentStop"),
	}
}
