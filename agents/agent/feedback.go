package agent

import (
	"context"

	"github.com/prsm-dev/prsm/api"
)

// Feedback is how an agent's hooks carry the review's feedback (package
// feedback: the user's notes, comments and the notices of rejects and
// rewinds) to its model: which of its hook events can carry text that
// reaches the model, and how its answer holds it. An agent whose hooks
// cannot carry it yet returns nil from Agent.Feedback, and its notes
// stay queued with Pending's words beside them.
type Feedback struct {
	// Events are the hook events whose answer reaches the model, as the
	// agent names them; the adapter asks for the feedback (Call.Ask) on
	// these.
	Events []string
	// Stop is the event that ends the agent's turn and can keep it going
	// with the feedback as its reason, "" for none. The server hands the
	// feedback out there only when PRSM_FEEDBACK_ON_STOP=1.
	Stop string
	// Answer is the answer to event that carries text to the model,
	// built on the answer the adapter already has (nil for none).
	Answer func(event, text string, answer []byte) ([]byte, error)
}

// NotYet is the Pending of an agent whose hooks do not carry feedback
// yet: what `prsm hooks status` and a note's status say of it.
func NotYet(title string) string {
	return "prsm does not deliver feedback to " + title + " yet (its hooks are not wired for it); tell it yourself"
}

// Ask is what an event asks of the feedback queue: set on a Call whose
// answer can carry it.
type Ask = api.TakeFeedbackRequest

// FeedbackServer is the part of a Server that hands out the feedback
// queue: a session's server over HTTP, or the queue in process.
type FeedbackServer interface {
	TakeFeedback(ctx context.Context, sessionID string, req api.TakeFeedbackRequest) (*api.Delivery, error)
	ConfirmFeedback(ctx context.Context, sessionID string, ids []int64) error
}
