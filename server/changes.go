package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/feedback"
	"github.com/prsm-dev/prsm/sync"
)

func (s *Server) startToolCall(c echo.Context) error {
	var req api.ToolCallRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	ans, err := s.eng.StartToolCall(c.Request().Context(), c.Param("id"), req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ans)
}

func (s *Server) completeToolCall(c echo.Context) error {
	var req api.CompleteRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	if prefersAsync(c.Request().Header) {
		// An agent's hook, which does not read the records: 202 once the
		// session's lock is taken, the work after the answer (see
		// engine.CompleteToolCallLater).
		if err := s.eng.CompleteToolCallLater(c.Request().Context(), c.Param("id"), c.Param("call"), req); err != nil {
			return err
		}
		c.Response().Header().Set("Preference-Applied", "respond-async")
		return c.JSON(http.StatusAccepted, api.Records{Records: []*prsm.Record{}})
	}
	recs, err := s.eng.CompleteToolCall(c.Request().Context(), c.Param("id"), c.Param("call"), req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, recs)
}

// prefersAsync reports whether the request asks for an answer before the
// work is done: `Prefer: respond-async` (RFC 7240), among other
// preferences or alone.
func prefersAsync(h http.Header) bool {
	for _, v := range h.Values("Prefer") {
		for _, p := range strings.Split(v, ",") {
			name, _, _ := strings.Cut(strings.TrimSpace(p), ";")
			if strings.EqualFold(strings.TrimSpace(name), "respond-async") {
				return true
			}
		}
	}
	return false
}

// listPage is how many records the list of a session's changes reads,
// fills and writes at a time.
const listPage = 500

// listChanges answers with a session's records, as a JSON array written
// a page at a time (engine.EachRecord): the list of 200k records an
// agent's npm install made costs the server the memory of one page.
func (s *Server) listChanges(c echo.Context) error {
	w := c.Response()
	n := 0
	begin := func() {
		w.Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("["))
	}
	err := s.eng.EachRecord(c.Request().Context(), c.Param("id"), c.QueryParam("status"), c.QueryParam("file"), listPage,
		func(page []*prsm.Record) error {
			if n == 0 {
				begin()
			}
			for _, r := range page {
				b, err := json.Marshal(r)
				if err != nil {
					return err
				}
				if n > 0 {
					w.Write([]byte(","))
				}
				n++
				if _, err := w.Write(b); err != nil {
					return err
				}
			}
			return nil
		})
	if err != nil && n == 0 {
		return err // nothing written: a clean error answer
	}
	if err != nil {
		// Cut short (the client left, or a read failed): the client
		// finds the list unfinished.
		s.log.Warn("list of changes cut short", "session", c.Param("id"), "err", err)
		return nil
	}
	if n == 0 {
		begin()
	}
	_, err = w.Write([]byte("]\n"))
	return err
}

func (s *Server) getChanges(c echo.Context) error {
	ctx := c.Request().Context()
	recs, err := s.eng.RecordsOf(ctx, c.Param("id"), c.Param("record"))
	if err != nil {
		return err
	}
	if err := s.eng.FillContent(ctx, recs); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.Records{Records: recs})
}

func (s *Server) diffChanges(c echo.Context) error {
	d, err := s.eng.Diff(c.Request().Context(), c.Param("id"), c.Param("record"))
	if err != nil {
		return err
	}
	return c.String(http.StatusOK, d)
}

func (s *Server) changeContent(c echo.Context) error {
	b, _, err := s.eng.Content(c.Request().Context(), c.Param("id"), c.Param("record"), c.QueryParam("side"))
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, "application/octet-stream", b)
}

// accept accepts a change; its body (api.AcceptRequest) may be left out.
// In review mode, one that would apply earlier pending changes of the
// file first is refused without with_earlier (409 needs_earlier).
func (s *Server) accept(c echo.Context) error {
	var req api.AcceptRequest
	if err := bindNote(c, &req, &req.Say); err != nil {
		return err
	}
	recs, err := s.eng.AcceptChange(c.Request().Context(), c.Param("id"), c.Param("record"), req)
	if err != nil {
		return err
	}
	if !req.DryRun {
		notes{s}.decidedAll(c.Request().Context(), feedback.DecidedAccept, recs, req.Say, req.Author)
	}
	return c.JSON(http.StatusOK, recs)
}

// reject rejects a change; its body (api.RejectRequest, a note) may be
// left out.
func (s *Server) reject(c echo.Context) error {
	var req api.RejectRequest
	if err := bindNote(c, &req, &req.Say); err != nil {
		return err
	}
	recs, err := s.eng.Reject(c.Request().Context(), c.Param("id"), c.Param("record"))
	if err != nil {
		return err
	}
	notes{s}.decidedAll(c.Request().Context(), feedback.DecidedReject, recs, req.Say, req.Author)
	return c.JSON(http.StatusOK, recs)
}

// bindNote binds a decision's body and refuses its note (*say) over
// api.MaxNote before anything is decided.
func bindNote(c echo.Context, v any, say *string) error {
	if err := bind(c, v); err != nil {
		return err
	}
	return feedback.CheckText(*say)
}

// decidedAll tells the queue of a decision of whole changes (recs's
// records; a job's count when it decided more than it lists).
func (s notes) decidedAll(ctx context.Context, verb string, recs *api.Records, say, author string) {
	d := feedback.Decision{Verb: verb, Say: say, Author: author}
	if recs.Job != nil {
		d.Total = recs.Job.Total
	}
	s.decided(ctx, d, recs.Records)
}

// decideHunk accepts or rejects hunk n of one record.
func (s *Server) decideHunk(accept bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		n, err := strconv.Atoi(c.Param("n"))
		if err != nil || n < 0 {
			return apiError(api.CodeNoHunk, "hunk %q: a hunk is named by its index, from 0", c.Param("n"))
		}
		// An accept may say with_earlier (api.AcceptRequest), as a
		// change's accept does.
		var body api.AcceptRequest
		if err := bindNote(c, &body, &body.Say); err != nil {
			return err
		}
		if body.DryRun {
			return apiError(api.CodeInvalidDryRun, "a hunk's decision has no dry run; POST .../accept with dry_run says what accepting the change would take")
		}
		req := api.HunksRequest{WithEarlier: body.WithEarlier, Say: body.Say, Author: body.Author}
		if accept {
			req.Accept = []int{n}
		} else {
			req.Reject = []int{n}
		}
		recs, err := s.eng.DecideHunksWith(c.Request().Context(), c.Param("id"), c.Param("record"), req)
		if err != nil {
			return err
		}
		notes{s}.decidedHunks(c.Request().Context(), req, recs)
		return c.JSON(http.StatusOK, recs)
	}
}

// resolve settles a change in conflict: mine, agent or markers.
func (s *Server) resolve(c echo.Context) error {
	var req api.ResolveRequest
	if err := bindNote(c, &req, &req.Say); err != nil {
		return err
	}
	if req.How == "" {
		return apiError(api.CodeInvalidHow, "name how to resolve it: {\"how\": \"mine\" | \"agent\" | \"markers\"}")
	}
	recs, err := s.eng.Resolve(c.Request().Context(), c.Param("id"), c.Param("record"), req.How)
	if err != nil {
		return err
	}
	notes{s}.decided(c.Request().Context(), feedback.Decision{Verb: feedback.DecidedResolve, How: req.How, Say: req.Say, Author: req.Author}, recs.Records)
	return c.JSON(http.StatusOK, recs)
}

// decideHunks decides several hunks of one record at once.
func (s *Server) decideHunks(c echo.Context) error {
	var req api.HunksRequest
	if err := bindNote(c, &req, &req.Say); err != nil {
		return err
	}
	recs, err := s.eng.DecideHunksWith(c.Request().Context(), c.Param("id"), c.Param("record"), req)
	if err != nil {
		return err
	}
	notes{s}.decidedHunks(c.Request().Context(), req, recs)
	return c.JSON(http.StatusOK, recs)
}

// decidedHunks tells the queue of a decision of hunks of one record (the
// first of recs; the rest are the cascade's): its rejects, or, when it
// rejected none, its accepts with their note.
func (s notes) decidedHunks(ctx context.Context, req api.HunksRequest, recs *api.Records) {
	if len(recs.Records) == 0 {
		return
	}
	d := feedback.Decision{Verb: feedback.DecidedReject, Hunks: req.Reject, Say: req.Say, Author: req.Author}
	if len(req.Reject) == 0 {
		d.Verb, d.Hunks = feedback.DecidedAccept, req.Accept
	}
	s.decided(ctx, d, recs.Records[:1])
}

// bulk accepts or rejects every pending change of a session (of one
// file), as a job (engine.Bulk): a client that prefers an early answer
// (`Prefer: respond-async`) gets 202 and the job as soon as it runs, and
// follows it with GET /jobs/{id} or the job_progress events; any other
// gets what it decided at its end. Either way the job goes to its end if
// the client leaves.
func (s *Server) bulk(accept bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.QueryParams().Has("file") && c.QueryParam("file") == "" {
			return apiError(api.CodeInvalidPath, "file= is empty: name a file, or leave file out for every file of the session")
		}
		var req api.BulkRequest
		if err := bindNote(c, &req, &req.Say); err != nil {
			return err
		}
		ctx, id, file := c.Request().Context(), c.Param("id"), c.QueryParam("file")
		verb := bulkVerb(accept)
		if prefersAsync(c.Request().Header) {
			job, err := s.eng.StartBulk(ctx, id, accept, file)
			if err != nil {
				return err
			}
			notes{s}.bulkStarted(ctx, job, nil, verb, file, req)
			return jobStarted(c, job)
		}
		recs, err := s.eng.Bulk(ctx, id, accept, file)
		if err != nil {
			return err
		}
		notes{s}.decidedAll(ctx, verb, recs, req.Say, req.Author)
		return c.JSON(http.StatusOK, recs)
	}
}

func (s *Server) bulkAll(accept bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req api.BulkRequest
		if err := bindNote(c, &req, &req.Say); err != nil {
			return err
		}
		ctx := c.Request().Context()
		if prefersAsync(c.Request().Header) {
			before, err := s.eng.Sessions(ctx, prsm.SessionActive)
			if err != nil {
				return err
			}
			job, err := s.eng.StartBulkAll(ctx, accept)
			if err != nil {
				return err
			}
			notes{s}.bulkStarted(ctx, job, before, bulkVerb(accept), "", req)
			return jobStarted(c, job)
		}
		recs, err := s.eng.BulkAll(ctx, accept)
		if err != nil {
			return err
		}
		// Of every session: each hears of its own records.
		notes{s}.decided(ctx, feedback.Decision{Verb: bulkVerb(accept), Say: req.Say, Author: req.Author}, recs.Records)
		return c.JSON(http.StatusOK, recs)
	}
}

func bulkVerb(accept bool) string {
	if accept {
		return feedback.DecidedAccept
	}
	return feedback.DecidedReject
}

// bulkStarted tells the queue of a bulk decision that runs on as a job
// (of one session, or of every session: sessions, as they were before
// it, those with pending changes): its records are not known yet, so
// the item names the file (or every pending change) and the job's count.
func (s notes) bulkStarted(ctx context.Context, job *api.Job, sessions []*prsm.Session, verb, file string, req api.BulkRequest) {
	d := feedback.Decision{Verb: verb, Say: req.Say, Author: req.Author, Total: job.Total, Where: "every pending change"}
	if file != "" {
		d.Where += " of " + sync.QuotePath(file)
	}
	if job.SessionID != "" {
		s.queue(ctx, job.SessionID, d)
		return
	}
	for _, sess := range sessions {
		if sess.PendingCount > 0 {
			dd := d
			dd.Total = sess.PendingCount
			s.queue(ctx, sess.ID, dd)
		}
	}
}

// jobStarted answers 202 with a job that runs on, and where to follow it.
func jobStarted(c echo.Context, job *api.Job) error {
	c.Response().Header().Set("Preference-Applied", "respond-async")
	c.Response().Header().Set("Location", api.JobPath(job.ID))
	return c.JSON(http.StatusAccepted, job)
}

// getJob answers with a job as it stands (GET /jobs/{id}).
func (s *Server) getJob(c echo.Context) error {
	job, err := s.eng.Job(c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, job)
}

// flush records, as a Watch tool call, what changed in the session's
// worktree that no tool call claimed (prsm run calls it when the agent
// exits).
func (s *Server) flush(c echo.Context) error {
	return s.recordNow(c, s.eng.WatchNow)
}

// turnEnd is the end of the agent's turn: its dangling tool calls are
// closed and what no call claimed is recorded (engine.EndTurn).
func (s *Server) turnEnd(c echo.Context) error {
	return s.recordNow(c, s.eng.EndTurn)
}

// recordNow answers with the records that fn made for the session.
func (s *Server) recordNow(c echo.Context, fn func(context.Context, string) ([]*prsm.Record, error)) error {
	ctx := c.Request().Context()
	recs, err := fn(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	if err := s.eng.FillContent(ctx, recs); err != nil {
		return err
	}
	if recs == nil {
		recs = []*prsm.Record{}
	}
	return c.JSON(http.StatusOK, api.Records{Records: recs})
}
