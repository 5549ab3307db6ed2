package claude

import (
	"github.com/prsm-dev/prsm/agents/agent"
)

// Feedback implements agent.Agent. Claude Code 2.1.x adds a hook's
// hookSpecificOutput.additionalContext to the model's context on
// PreToolUse, PostToolUse and UserPromptSubmit; on Stop, decision
// "block" keeps the turn going with reason as the model's next input.
func (Agent) Feedback() *agent.Feedback {
	return &agent.Feedback{
		Events: []string{"PreToolUse", "PostToolUse", "UserPromptSubmit"},
		Stop:   "Stop",
		Answer: agent.HookContextAnswer("Stop"),
	}
}

// ask is the feedback's ask of event p, nil for an event whose answer
// cannot carry it.
func (p *claudePayload) ask(toolCallID string) *agent.Ask {
	return Agent{}.Feedback().AskOf("claude", p.HookEventName, toolCallID)
}
