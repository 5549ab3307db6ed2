package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents"
	"github.com/prsm-dev/prsm/agents/agent"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/feedback"
)

// The review's feedback to the agents (package feedback): each decision
// handler checks its note before it decides (413 over api.MaxNote,
// nothing changed) and tells the queue after; the comment and list
// routes; and the hooks' take and confirm.

// notes is the server's part that tells the feedback queue: its
// handlers, and what the decision handlers call after a decision.
type notes struct{ *Server }

// decided tells the queue of a decision the server made: recs (of one
// session or several) and their hunks, with the user's note. A failure
// to queue fails no decision (it is made): it is logged.
func (s notes) decided(ctx context.Context, d feedback.Decision, recs []*prsm.Record) {
	bySession := map[string][]*prsm.Record{}
	var order []string
	for _, r := range recs {
		if _, ok := bySession[r.SessionID]; !ok {
			order = append(order, r.SessionID)
		}
		bySession[r.SessionID] = append(bySession[r.SessionID], r)
	}
	for _, id := range order {
		dd := d
		dd.Records = bySession[id]
		if len(order) > 1 {
			dd.Total = len(dd.Records)
		}
		s.queue(ctx, id, dd)
	}
}

// queue tells the queue of decision d of session id.
func (s notes) queue(ctx context.Context, id string, d feedback.Decision) {
	sess, err := s.eng.Session(ctx, id)
	if err == nil {
		d.Session = sess
		err = s.fb.Decided(ctx, d)
	}
	if err != nil {
		s.log.Warn("feedback not queued", "session", id, "err", err)
	}
}

// hookCalls are the routes of a hook's call, whose answers say whether
// the session's agent has feedback waiting (api.FeedbackHeader).
var hookCalls = map[api.RouteID]bool{api.RouteStartToolCall: true, api.RouteCompleteToolCall: true,
	api.RouteTurn: true, api.RouteTurnEnd: true}

// waitingHeader sets api.FeedbackHeader on the answer, from one read of
// the queue as the call comes: a command hook then asks for the
// feedback only when some waits. A failed read says nothing (the hook
// asks).
func (s notes) waitingHeader(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if waiting, err := s.fb.Waiting(c.Request().Context(), c.Param("id")); err == nil {
			v := api.FeedbackNone
			if waiting {
				v = api.FeedbackWaiting
			}
			c.Response().Header().Set(api.FeedbackHeader, v)
		}
		return next(c)
	}
}

// comment is POST .../file-changes/{record}/comments.
func (s notes) comment(c echo.Context) error {
	var req api.CommentRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := feedback.CheckText(req.Text); err != nil {
		return err
	}
	rec, sess, err := s.oneRecord(ctx, c.Param("id"), c.Param("record"))
	if err != nil {
		return err
	}
	f, err := s.fb.Comment(ctx, sess, rec, req)
	if err != nil {
		return err
	}
	feedback.Explain(f, sess, notYet)
	return c.JSON(http.StatusCreated, f)
}

// oneRecord is the one record id names in session sessionID, and its
// session.
func (s notes) oneRecord(ctx context.Context, sessionID, id string) (*prsm.Record, *prsm.Session, error) {
	recs, err := s.eng.RecordsOf(ctx, sessionID, id)
	if err != nil {
		return nil, nil, err
	}
	if len(recs) != 1 {
		return nil, nil, prsm.Errorf(prsm.ErrInvalid, string(api.CodeSeveralRecords), "name one of its records (ID:N)",
			"%s names a tool call that changed %d files; a comment is on one", id, len(recs))
	}
	sess, err := s.eng.Session(ctx, sessionID)
	return recs[0], sess, err
}

// listFeedback is GET /sessions/{id}/feedback: every item of the
// session's queue, with what became of it.
func (s notes) listFeedback(c echo.Context) error {
	ctx := c.Request().Context()
	sess, err := s.eng.Session(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	items, err := s.fb.List(ctx, sess, notYet)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, nonNil(items))
}

// changeFeedback is GET .../file-changes/{record}/feedback: the items
// about the change (every record of a tool call's id).
func (s notes) changeFeedback(c echo.Context) error {
	ctx := c.Request().Context()
	sess, err := s.eng.Session(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	recs, err := s.eng.RecordsOf(ctx, sess.ID, c.Param("record"))
	if err != nil {
		return err
	}
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	items, err := s.fb.List(ctx, sess, notYet, ids...)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, nonNil(items))
}

// notYet is what an item of a session of agentID waits for when its
// agent's hooks do not carry feedback yet (agent.NotYet); "" for an
// agent whose hooks do, or one prsm does not know.
func notYet(agentID string) string {
	name, _, _ := strings.Cut(agentID, "/")
	ag := agents.Lookup(name)
	if ag == nil || ag.Feedback() != nil {
		return ""
	}
	return agent.NotYet(ag.Title())
}

// takeFeedback is POST /sessions/{id}/feedback/take, a hook's ask: what
// the session's agent has not heard yet (api.Delivery), marked
// delivering until the hook confirms it.
func (s notes) takeFeedback(c echo.Context) error {
	var req api.TakeFeedbackRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	d, err := s.fb.Take(c.Request().Context(), c.Param("id"), req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d)
}

// confirmFeedback is POST /sessions/{id}/feedback/confirm: the hook's
// answer that carried the items is out.
func (s notes) confirmFeedback(c echo.Context) error {
	var req api.ConfirmFeedbackRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	if err := s.fb.Confirm(c.Request().Context(), c.Param("id"), req.IDs); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, struct{}{})
}

// nonNil is s, or an empty slice for nil.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
