package agent

import (
	"context"
	"encoding/json"
	"fmt"

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

// Carries reports whether the answer to event can carry the feedback:
// one of f's Events, or its Stop.
func (f *Feedback) Carries(event string) (ok, stop bool) {
	if f == nil || event == "" {
		return false, false
	}
	for _, e := range f.Events {
		if e == event {
			return true, false
		}
	}
	return event == f.Stop, event == f.Stop
}

// AskOf is the ask (Call.Ask) of event of agent name for the tool call
// toolCallID ("" for none), nil for an event whose answer cannot carry
// the feedback.
func (f *Feedback) AskOf(name, event, toolCallID string) *Ask {
	ok, stop := f.Carries(event)
	if !ok {
		return nil
	}
	return &Ask{Agent: name, Event: event, ToolCallID: toolCallID, Stop: stop}
}

// With is answer (nil for none) with what call heard added to the
// answer to event; answer as it is when the call heard nothing, or the
// error that kept it from being added.
func (f *Feedback) With(event string, call *Call, answer []byte) ([]byte, error) {
	if f == nil || call == nil || call.Heard == nil || call.Heard.Text == "" {
		return answer, nil
	}
	return f.Answer(event, call.Heard.Text, answer)
}

// HookContextAnswer is Feedback.Answer for hooks shaped as Claude
// Code's (Codex's, Gemini CLI's are): the answer to stop is
// {"decision": "block", "reason": text}, to any other event
// hookSpecificOutput's additionalContext beside what the rest of answer
// says.
func HookContextAnswer(stop string) func(event, text string, answer []byte) ([]byte, error) {
	return contextAnswer(stop, false)
}

// TopContextAnswer is HookContextAnswer for hooks that take
// additionalContext at the top of their answer (Copilot CLI's camelCase
// ones).
func TopContextAnswer(stop string) func(event, text string, answer []byte) ([]byte, error) {
	return contextAnswer(stop, true)
}

// contextAnswer is HookContextAnswer, or with top TopContextAnswer.
func contextAnswer(stop string, top bool) func(event, text string, answer []byte) ([]byte, error) {
	return func(event, text string, answer []byte) ([]byte, error) {
		out := map[string]any{}
		if len(answer) > 0 {
			if err := json.Unmarshal(answer, &out); err != nil {
				return nil, err
			}
		}
		switch {
		case stop != "" && event == stop:
			out["decision"], out["reason"] = "block", text
		case top:
			out["additionalContext"] = text
		default:
			spec, _ := out["hookSpecificOutput"].(map[string]any)
			if spec == nil {
				spec = map[string]any{}
			}
			spec["hookEventName"], spec["additionalContext"] = event, text
			out["hookSpecificOutput"] = spec
		}
		return json.Marshal(out)
	}
}

// Answer writes an event's answer to h.Stdout: out (nil for none) with
// what call heard added by f (With), then confirms it (Call.Confirm).
// What fails about the feedback is only reported on h.Stderr: the
// event's answer goes out without it.
func (h *Host) Answer(ctx context.Context, f *Feedback, event string, call *Call, out []byte) error {
	if call != nil && call.HeardErr != nil {
		fmt.Fprintln(h.Stderr, OneLine("prsm hook: feedback: "+call.HeardErr.Error()))
	}
	if heard, err := f.With(event, call, out); err != nil {
		fmt.Fprintln(h.Stderr, OneLine("prsm hook: feedback: "+err.Error()))
	} else {
		out = heard
	}
	if out == nil {
		return nil
	}
	if _, err := h.Stdout.Write(append(out, '\n')); err != nil {
		return err
	}
	// The answer is out: its feedback is delivered. Unconfirmed, it is
	// handed out once more after a while (feedback.Staleness).
	if call != nil {
		if err := call.Confirm(ctx); err != nil {
			fmt.Fprintln(h.Stderr, OneLine("prsm hook: feedback: "+err.Error()))
		}
	}
	return nil
}

// SendHearing is Send of an adapter that has no answer of its own to
// give: it asks for the feedback on event when f's answer to it can
// carry it (AskOf, as agent name), sends call, and writes the answer
// that carries what it heard (Answer).
func (h *Host) SendHearing(ctx context.Context, f *Feedback, name, cwd string, call *Call, event string) error {
	call.Ask = f.AskOf(name, event, call.ToolCallID)
	if err := h.Send(ctx, cwd, call, event); err != nil {
		return err
	}
	return h.Answer(ctx, f, event, call, nil)
}
