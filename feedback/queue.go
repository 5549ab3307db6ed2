// Package feedback owns the review's feedback to the agents (issue 46):
// each session's queue of what its agent has not heard yet (the notes a
// user gives with a decision, the comments on a change's lines, and the
// notice of every reject and rewind), the one message a hook's answer
// carries to the agent's model, and what became of each item (queued,
// delivering, delivered with which hook event, or not deliverable and
// why). It reads and writes only its own table of the store (feedback,
// migration 0017); the decisions themselves stay the engine's, and the
// server tells the queue of each one after it is made. Delivery only
// reads the queue: an item is marked delivering as it is handed to an
// answer and delivered once the answer is out (Confirm); one never
// confirmed is handed out once more, so none is lost and none is
// delivered more than twice. The agents' own part (which events can
// carry text to the model, and how their answer holds it) is
// agent.Feedback in their folders.
package feedback

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
)

// Staleness is how long an item handed to an answer waits for its
// confirm before it is handed out again: longer than any hook waits for
// its answer.
const Staleness = 30 * time.Second

// MaxItems bounds the items one message carries; the rest wait for the
// next event.
const MaxItems = 20

// Queue is the workspace's feedback queues, one a session, in its store.
type Queue struct {
	DB *store.DB
	// NoNotices turns off the notice of a reject or a rewind made
	// without a note (PRSM_FEEDBACK_NOTICES=0); notes and comments are
	// queued whatever it says.
	NoNotices bool
	// OnStop hands the feedback out at the end of the agent's turn too,
	// for agents whose Stop can keep the turn going
	// (PRSM_FEEDBACK_ON_STOP=1).
	OnStop bool
	// Content is one side ("before" or "after") of a record
	// (engine.Content): the excerpts of its hunks come from it. nil: no
	// excerpts.
	Content func(ctx context.Context, sessionID, recordID, side string) ([]byte, error)
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

func (q *Queue) now() time.Time {
	if q.Now != nil {
		return q.Now()
	}
	return time.Now()
}

// CheckText refuses a note or a comment over api.MaxNote (413).
func CheckText(text string) error {
	if len(text) > api.MaxNote {
		return prsm.Errorf(nil, string(api.CodeNoteTooLarge), "say less, or put the rest in a file the agent can read",
			"the note is %d bytes; a note or a comment may be at most %d bytes (16 KiB)", len(text), api.MaxNote)
	}
	return nil
}

// add stores items, each of session s: an item of an ended session is
// stored undeliverable, as no hook of its agent will come.
func (q *Queue) add(ctx context.Context, s *prsm.Session, items ...*prsm.Feedback) error {
	now := q.now()
	return q.DB.Tx(ctx, func(qq store.Querier) error {
		for _, f := range items {
			f.SessionID, f.CreatedAt = s.ID, now
			if s.Status == prsm.SessionEnded {
				f.State, f.Why = prsm.FeedbackUndeliverable, WhyEnded
			}
			if err := store.AddFeedback(ctx, qq, f); err != nil {
				return err
			}
		}
		return nil
	})
}

// WhyEnded is why an item of an ended session is not delivered.
const WhyEnded = "the session has ended"

// Decision is one decision the user made, as the queue hears of it.
type Decision struct {
	Session *prsm.Session
	// Verb is what was decided: DecidedAccept, DecidedReject,
	// DecidedResolve (How says how) or DecidedRewind (Checkpoint: to
	// what, "checkpoint 3f2a…").
	Verb, How, Checkpoint string
	// Records are the changes it decided (a bulk decision's answer
	// lists the first 1000; Total counts them all); Hunks the hunks of
	// Records[0] when it decided hunks.
	Records []*prsm.Record
	Hunks   []int
	Total   int
	// Where names what it decided when Records do not (a job that runs
	// on: "every pending change of src/a.go").
	Where string
	// Say is the user's note ("" for none), Author who decided.
	Say, Author string
}

// The verbs of a Decision.
const (
	DecidedAccept  = "accepted"
	DecidedReject  = "rejected"
	DecidedResolve = "resolved"
	DecidedRewind  = "rewound"
)

// Decided queues what the agent should hear of d: its note, or, for a
// reject or a rewind without one, its notice (unless NoNotices). A
// decision of one change is one item with the file, the lines and an
// excerpt; a decision of many is one item that sums up their files, so
// that a reject of thousands of files is a few lines.
func (q *Queue) Decided(ctx context.Context, d Decision) error {
	if err := CheckText(d.Say); err != nil {
		return err
	}
	kind := prsm.FeedbackNote
	if strings.TrimSpace(d.Say) == "" {
		if q.NoNotices || (d.Verb != DecidedReject && d.Verb != DecidedRewind) {
			return nil
		}
		kind = prsm.FeedbackNotice
	}
	total := max(d.Total, len(d.Records))
	if total == 0 && d.Verb != DecidedRewind && d.Where == "" {
		return nil
	}
	f := &prsm.Feedback{Kind: kind, Text: d.Say, Author: d.Author, Decision: d.describe(total)}
	if len(d.Records) == 1 && total == 1 {
		r := d.Records[0]
		f.RecordID, f.Path = r.ID, r.RelPath
		f.Lines = hunkLines(r, d.Hunks)
		f.Excerpt = q.excerpt(ctx, r, d.Hunks)
	} else if d.Where == "" {
		f.Path = SummarizePaths(d.Records, total)
	}
	return q.add(ctx, d.Session, f)
}

// describe says what d decided, of total changes.
func (d Decision) describe(total int) string {
	verb := d.Verb
	switch {
	case d.Verb == DecidedResolve && d.How != "":
		verb = "resolved (" + d.How + ")"
	case d.Verb == DecidedRewind:
		s := "rewound the session to " + d.Checkpoint
		if total > 0 {
			s += fmt.Sprintf(", undoing %s", plural(total, "change"))
		}
		return s
	}
	if d.Where != "" {
		if total > 0 {
			return fmt.Sprintf("%s %s (%s)", verb, d.Where, plural(total, "change"))
		}
		return verb + " " + d.Where
	}
	if len(d.Hunks) > 0 {
		names := make([]string, len(d.Hunks))
		for i, h := range d.Hunks {
			names[i] = fmt.Sprint(h)
		}
		return verb + " " + pluralWord(len(d.Hunks), "hunk") + " " + strings.Join(names, ", ")
	}
	if total == 1 {
		return verb + " the change"
	}
	return verb + " " + plural(total, "change")
}

// Comment queues a comment on lines of record r, without a decision.
func (q *Queue) Comment(ctx context.Context, s *prsm.Session, r *prsm.Record, req api.CommentRequest) (*prsm.Feedback, error) {
	if err := CheckText(req.Text); err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.Text) == "" {
		return nil, prsm.Errorf(prsm.ErrInvalid, string(api.CodeInvalidInput), "", "a comment needs text")
	}
	lo, hi, err := ParseLines(req.Lines)
	if err != nil {
		return nil, err
	}
	f := &prsm.Feedback{Kind: prsm.FeedbackComment, RecordID: r.ID, Path: r.RelPath, Text: req.Text, Author: req.Author}
	if lo > 0 {
		f.Lines = fmt.Sprintf("%d-%d", lo, hi)
		if lo == hi {
			f.Lines = fmt.Sprint(lo)
		}
		f.Excerpt = q.linesExcerpt(ctx, r, lo, hi)
	}
	if err := q.add(ctx, s, f); err != nil {
		return nil, err
	}
	return f, nil
}

// ParseLines reads "N" or "N-M" (from 1, N <= M); "" is 0, 0.
func ParseLines(s string) (lo, hi int, err error) {
	if strings.TrimSpace(s) == "" {
		return 0, 0, nil
	}
	a, b, ok := strings.Cut(strings.TrimSpace(s), "-")
	if !ok {
		b = a
	}
	_, e1 := fmt.Sscanf(a, "%d", &lo)
	_, e2 := fmt.Sscanf(b, "%d", &hi)
	if e1 != nil || e2 != nil || lo < 1 || hi < lo || fmt.Sprint(lo) != strings.TrimSpace(a) || fmt.Sprint(hi) != strings.TrimSpace(b) {
		return 0, 0, prsm.Errorf(prsm.ErrInvalid, string(api.CodeBadLines), "write --lines 12 or --lines 12-18",
			"lines %q: want N or N-M, from 1, N <= M", s)
	}
	return lo, hi, nil
}

// Waiting reports whether the session has items to hand out; it only
// reads.
func (q *Queue) Waiting(ctx context.Context, sessionID string) (bool, error) {
	return store.FeedbackWaiting(ctx, q.DB.Q(), sessionID, q.now().Add(-Staleness))
}

// Take hands the session's undelivered items to the answer of a hook
// event (req): the message, and the items it carries, marked delivering
// (store.TakeFeedback). It reads the queue first without a write, so
// that an event with nothing to hear costs one read. A Stop takes
// nothing unless OnStop.
func (q *Queue) Take(ctx context.Context, sessionID string, req api.TakeFeedbackRequest) (*api.Delivery, error) {
	out := &api.Delivery{IDs: []int64{}}
	if req.Stop && !q.OnStop {
		return out, nil
	}
	now := q.now()
	waiting, err := q.Waiting(ctx, sessionID)
	if err != nil || !waiting {
		return out, err
	}
	via := strings.TrimSpace(req.Agent + " " + req.Event)
	if req.ToolCallID != "" {
		via += " " + req.ToolCallID
	}
	var items []*prsm.Feedback
	err = q.DB.Tx(ctx, func(qq store.Querier) error {
		items, err = store.TakeFeedback(ctx, qq, sessionID, via, now, now.Add(-Staleness), MaxItems)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, f := range items {
		out.IDs = append(out.IDs, f.ID)
	}
	out.Text = Message(items)
	return out, nil
}

// Confirm marks the session's items ids delivered: the answer that
// carried them is out.
func (q *Queue) Confirm(ctx context.Context, sessionID string, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	return q.DB.Tx(ctx, func(qq store.Querier) error { return store.ConfirmFeedback(ctx, qq, sessionID, ids, q.now()) })
}

// List is a session's items (those of the records recordIDs, when
// given), oldest first, each with Why saying what it waits for when it
// is not delivered: the agent's next hook, or, for an agent prsm cannot
// deliver to yet (carrier says so; nil: any), that.
func (q *Queue) List(ctx context.Context, s *prsm.Session, carrier func(agentID string) string, recordIDs ...string) ([]*prsm.Feedback, error) {
	items, err := store.ListFeedback(ctx, q.DB.Q(), s.ID, recordIDs...)
	if err != nil {
		return nil, err
	}
	for _, f := range items {
		Explain(f, s, carrier)
	}
	return items, nil
}

// Explain sets what f, an item of session s, waits for when it is not
// delivered (List says what).
func Explain(f *prsm.Feedback, s *prsm.Session, carrier func(agentID string) string) {
	if f.State != prsm.FeedbackQueued && f.State != prsm.FeedbackDelivering {
		return
	}
	switch {
	case s.Status == prsm.SessionEnded:
		f.State, f.Why = prsm.FeedbackUndeliverable, WhyEnded
	case carrier != nil && carrier(s.AgentID) != "":
		f.Why = carrier(s.AgentID)
	default:
		f.Why = WhyWaiting
	}
}

// WhyWaiting is what an item not yet delivered waits for.
const WhyWaiting = "waiting for the agent's next hook"

// Status is an item's state as a person reads it.
func Status(f *prsm.Feedback) string {
	switch f.State {
	case prsm.FeedbackDelivered:
		if f.Via != "" {
			return "delivered with " + f.Via
		}
		return "delivered"
	case prsm.FeedbackUndeliverable:
		return "not delivered: " + f.Why
	}
	if f.Why != "" {
		return "queued: " + f.Why
	}
	return "queued"
}
