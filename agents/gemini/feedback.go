package gemini

import "github.com/prsm-dev/prsm/agents/agent"

// Feedback implements agent.Agent. Gemini CLI 0.61 adds a hook's
// hookSpecificOutput.additionalContext to what the model reads on
// AfterTool (appended to the tool's result, in <hook_context>) and on
// BeforeAgent (appended to the prompt); BeforeTool's reaches only a
// tool whose input is a prompt, so it is not one. On AfterAgent,
// decision "block" sends reason to the model as the next request.
func (Agent) Feedback() *agent.Feedback {
	return &agent.Feedback{
		Events: []string{"AfterTool", "BeforeAgent"},
		Stop:   "AfterAgent",
		Answer: agent.HookContextAnswer("AfterAgent"),
	}
}
