package claude

import (
	"encoding/json"

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
		Answer: feedbackAnswer,
	}
}

// carries reports whether the answer to event can carry the feedback:
// one of Feedback's Events, or its Stop.
func carries(event string) (ok, stop bool) {
	fb := Agent{}.Feedback()
	for _, e := range fb.Events {
		if e == event {
			return true, false
		}
	}
	return event == fb.Stop, event == fb.Stop
}

// feedbackAnswer is Claude Code's answer to event carrying text, with
// what answer (the adapter's, nil for none) already says: a Stop's is
// {"decision": "block", "reason": text}, the others' additionalContext
// beside the rest of their hookSpecificOutput (a moved path's
// updatedInput).
func feedbackAnswer(event, text string, answer []byte) ([]byte, error) {
	out := map[string]any{}
	if len(answer) > 0 {
		if err := json.Unmarshal(answer, &out); err != nil {
			return nil, err
		}
	}
	if event == "Stop" {
		out["decision"], out["reason"] = "block", text
		return json.Marshal(out)
	}
	spec, _ := out["hookSpecificOutput"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
	}
	spec["hookEventName"], spec["additionalContext"] = event, text
	out["hookSpecificOutput"] = spec
	return json.Marshal(out)
}

// ask is the feedback's ask of event p, nil for an event whose answer
// cannot carry it.
func (p *claudePayload) ask(toolCallID string) *agent.Ask {
	ok, stop := carries(p.HookEventName)
	if !ok {
		return nil
	}
	return &agent.Ask{Agent: "claude", Event: p.HookEventName, ToolCallID: toolCallID, Stop: stop}
}

// withFeedback is answer (JSON, nil for none) with what call heard
// added; answer as it is when it heard nothing, or the error that
// kept it from being added.
func withFeedback(p *claudePayload, call *agent.Call, answer []byte) ([]byte, error) {
	if call == nil || call.Heard == nil || call.Heard.Text == "" {
		return answer, nil
	}
	return feedbackAnswer(p.HookEventName, call.Heard.Text, answer)
}
