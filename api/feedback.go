package api

// FeedbackHeader is the header field with which the server's answer to
// a hook's call (a tool call's start and complete, a turn, a turn's end)
// says whether the session's agent has feedback waiting (FeedbackWaiting)
// or none (FeedbackNone), as the queue stood when the call came: a
// command hook asks for it (POST .../feedback/take) only when it waits,
// or when the answer does not say.
const (
	FeedbackHeader  = "Prsm-Feedback"
	FeedbackWaiting = "waiting"
	FeedbackNone    = "none"
)

// MaxNote bounds a note's or a comment's text, in bytes: a longer one is
// refused with 413 (CodeNoteTooLarge).
const MaxNote = 16 << 10

// RejectRequest is the body of POST .../file-changes/{id}/reject and of
// .../hunks/{n}/reject; it may be left out.
type RejectRequest struct {
	// Say is the user's note on the decision, told to the agent (see
	// Feedback); "" for none.
	Say string `json:"say,omitempty"`
	// Author says who decided: the surface ("cli", "page",
	// "extension"), and the user where known.
	Author string `json:"author,omitempty"`
}

// BulkRequest is the body of the bulk decisions (POST
// .../file-changes/accept-all and reject-all, of one session or of
// every session); it may be left out.
type BulkRequest = RejectRequest

// CommentRequest is the body of POST .../file-changes/{record}/comments:
// a comment on lines of the change, without a decision, as a pull
// request's review comment is.
type CommentRequest struct {
	// Lines are the lines of the change's new side it is about: "12" or
	// "12-18", from 1; "" for the whole change.
	Lines  string `json:"lines,omitempty"`
	Text   string `json:"text"`
	Author string `json:"author,omitempty"`
}

// TakeFeedbackRequest is the body of POST /sessions/{id}/feedback/take:
// an agent's hook asks for what the agent has not heard yet, to carry it
// in its answer to Event.
type TakeFeedbackRequest struct {
	// Agent and Event name the hook event whose answer carries it
	// ("claude", "PostToolUse"); ToolCallID the tool call, if any.
	Agent      string `json:"agent"`
	Event      string `json:"event"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Stop asks for the feedback at the end of the agent's turn, to keep
	// the turn going with it: only a server with PRSM_FEEDBACK_ON_STOP=1
	// hands it out there.
	Stop bool `json:"stop,omitempty"`
}

// Delivery is the answer of POST /sessions/{id}/feedback/take: the
// message the hook puts in its answer, and the items it carries, which
// the hook confirms (POST .../feedback/confirm) once its answer is out.
// No items: nothing to say.
type Delivery struct {
	IDs  []int64 `json:"ids"`
	Text string  `json:"text"`
}

// ConfirmFeedbackRequest is the body of POST
// /sessions/{id}/feedback/confirm.
type ConfirmFeedbackRequest struct {
	IDs []int64 `json:"ids"`
}
