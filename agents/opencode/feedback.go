package opencode

import (
	"encoding/json"

	"github.com/prsm-dev/prsm/agents/agent"
)

// Feedback implements agent.Agent. opencode has no hook answer of its
// own: both ends of the plugin are prsm's, so `prsm hook opencode`
// answers {"feedback": text} and the plugin puts the text where the
// model reads it. opencode 1.18.33 hands tool.execute.after the tool's
// result object, which it returns to the model after every plugin ran:
// the plugin appends the text to output.output (an MCP tool's: a text
// item in output.content). chat.message gets the user's message parts
// before they are saved: the plugin adds the text as one more (synthetic)
// text part. session.idle cannot keep the turn going, so there is no
// Stop; tool.execute.before's output is only the tool's arguments.
func (Agent) Feedback() *agent.Feedback {
	return &agent.Feedback{
		Events: []string{opencodeAfter, opencodeMessage},
		Answer: feedbackAnswer,
	}
}

// opencodeAnswer is what `prsm hook opencode` prints for the plugin.
type opencodeAnswer struct {
	// Feedback is the review's feedback for the model.
	Feedback string `json:"feedback,omitempty"`
}

// feedbackAnswer is the Feedback's Answer: answer (the adapter has
// none) with text as its feedback.
func feedbackAnswer(_, text string, answer []byte) ([]byte, error) {
	var a opencodeAnswer
	if len(answer) > 0 {
		if err := json.Unmarshal(answer, &a); err != nil {
			return nil, err
		}
	}
	a.Feedback = text
	return json.Marshal(a)
}
