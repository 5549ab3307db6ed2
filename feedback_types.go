package prsm

import "time"

// The kinds of a feedback item.
const (
	// FeedbackNote is a note the user gave with a decision.
	FeedbackNote = "note"
	// FeedbackComment is a comment on a change's lines, without a
	// decision.
	FeedbackComment = "comment"
	// FeedbackNotice is a reject or a rewind the user made without a
	// note: the agent hears that its change is gone.
	FeedbackNotice = "notice"
)

// The states of a feedback item.
const (
	// FeedbackQueued: the agent has not heard it yet.
	FeedbackQueued = "queued"
	// FeedbackDelivering: handed to a hook's answer that is not yet
	// known to have reached the agent; handed out again (once) if it is
	// never confirmed.
	FeedbackDelivering = "delivering"
	// FeedbackDelivered: the answer to the hook event in Via carried it.
	FeedbackDelivered = "delivered"
	// FeedbackUndeliverable: it will not be delivered (Why says why).
	FeedbackUndeliverable = "undeliverable"
)

// Feedback is one item of a session's feedback queue (issue 46): what
// the user decided or said about the agent's changes, to be told to the
// agent at its next hook event that can carry text to its model.
type Feedback struct {
	ID        int64  `json:"id"`
	SessionID string `json:"session_id"`
	// RecordID is the change it is about; "" for one about many (a bulk
	// decision, a rewind).
	RecordID string `json:"record_id,omitempty"`
	// Kind is FeedbackNote, FeedbackComment or FeedbackNotice.
	Kind string `json:"kind"`
	// Decision is what was decided ("rejected hunk 2"); "" for a comment.
	Decision string `json:"decision,omitempty"`
	// Path is the file (relative to the workspace root), or a summary of
	// the files of a decision about many; Lines the lines ("12-18").
	Path  string `json:"path,omitempty"`
	Lines string `json:"lines,omitempty"`
	// Excerpt is a short excerpt of the hunk, in unified diff lines.
	Excerpt string `json:"excerpt,omitempty"`
	// Text is the user's words, kept as given (control characters too).
	Text string `json:"text,omitempty"`
	// Author is who said it: the surface ("cli", "page", "extension")
	// and, where known, the user.
	Author    string    `json:"author,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// State is FeedbackQueued, FeedbackDelivering, FeedbackDelivered or
	// FeedbackUndeliverable; Attempts counts the answers it was handed
	// to.
	State    string `json:"state"`
	Attempts int    `json:"attempts"`
	// Via is the hook event (and tool call) whose answer carried it.
	Via         string     `json:"via,omitempty"`
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
	// Why says why it is not delivered (undeliverable, or why it waits).
	Why string `json:"why,omitempty"`
	// TakenAt is when it was last handed to an answer.
	TakenAt *time.Time `json:"-"`
}
