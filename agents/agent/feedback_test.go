package agent

import "testing"

// The answers that carry feedback: in hookSpecificOutput beside what the
// answer says, at the top, and at the stop event as a block.
func TestContextAnswers(t *testing.T) {
	for _, c := range []struct {
		answer      func(event, text string, answer []byte) ([]byte, error)
		event, have string
		want        string
	}{
		{HookContextAnswer("Stop"), "PostToolUse", "", `{"hookSpecificOutput":{"additionalContext":"heard","hookEventName":"PostToolUse"}}`},
		{HookContextAnswer("Stop"), "PreToolUse", `{"hookSpecificOutput":{"updatedInput":{"a":1}}}`, `{"hookSpecificOutput":{"additionalContext":"heard","hookEventName":"PreToolUse","updatedInput":{"a":1}}}`},
		{HookContextAnswer("AfterAgent"), "AfterAgent", "", `{"decision":"block","reason":"heard"}`},
		{TopContextAnswer("agentStop"), "postToolUse", "{}", `{"additionalContext":"heard"}`},
		{TopContextAnswer("agentStop"), "agentStop", "", `{"decision":"block","reason":"heard"}`},
	} {
		got, err := c.answer(c.event, "heard", []byte(c.have))
		if err != nil || string(got) != c.want {
			t.Errorf("%s on %s: %s (%v), want %s", c.event, c.have, got, err, c.want)
		}
	}
	f := &Feedback{Events: []string{"postToolUse"}, Stop: "agentStop"}
	if a := f.AskOf("x", "postToolUse", "c1"); a == nil || a.Stop || a.ToolCallID != "c1" || a.Agent != "x" {
		t.Errorf("ask of postToolUse: %+v", a)
	}
	if a := f.AskOf("x", "agentStop", ""); a == nil || !a.Stop {
		t.Errorf("ask of agentStop: %+v", a)
	}
	if a := f.AskOf("x", "sessionEnd", ""); a != nil {
		t.Errorf("ask of sessionEnd: %+v", a)
	}
	var none *Feedback
	if a := none.AskOf("x", "postToolUse", ""); a != nil {
		t.Errorf("nil feedback asks: %+v", a)
	}
}
