package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/feedback"
)

func (s *Server) turn(c echo.Context) error {
	var req api.TurnRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	cp, err := s.eng.Turn(c.Request().Context(), c.Param("id"), req)
	if err != nil {
		return err
	}
	if cp == nil {
		// Automatic checkpoints are off for the session: the turn is
		// counted and no checkpoint was made.
		return c.JSON(http.StatusOK, nil)
	}
	return c.JSON(http.StatusCreated, cp)
}

func (s *Server) listCheckpoints(c echo.Context) error {
	list, err := s.eng.Checkpoints(c.Request().Context(), c.Param("id"), c.QueryParam("grep"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, list)
}

func (s *Server) createCheckpoint(c echo.Context) error {
	var req api.CheckpointRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	cp, err := s.eng.CreateCheckpoint(c.Request().Context(), c.Param("id"), req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, cp)
}

func (s *Server) getCheckpoint(c echo.Context) error {
	_, cp, err := s.eng.Checkpoint(c.Request().Context(), c.Param("id"), c.Param("cid"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cp)
}

func (s *Server) annotateCheckpoint(c echo.Context) error {
	var req api.AnnotateRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	if req.Annotation == nil {
		return apiError(api.CodeMissingAnnotation, "the body needs an annotation field")
	}
	cp, err := s.eng.Annotate(c.Request().Context(), c.Param("id"), c.Param("cid"), *req.Annotation)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cp)
}

func (s *Server) deleteCheckpoint(c echo.Context) error {
	cp, err := s.eng.DeleteCheckpoint(c.Request().Context(), c.Param("id"), c.Param("cid"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cp)
}

func (s *Server) diffCheckpoint(c echo.Context) error {
	d, err := s.eng.DiffCheckpoints(c.Request().Context(), c.Param("id"), c.Param("cid"), c.Param("other"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d)
}

func (s *Server) rewindPreview(c echo.Context) error {
	p, err := s.eng.RewindPlan(c.Request().Context(), c.Param("id"), c.Param("cid"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, p)
}

func (s *Server) rewindCheckpoint(c echo.Context) error {
	var req api.RewindRequest
	if err := bindNote(c, &req, &req.Say); err != nil {
		return err
	}
	if v := c.QueryParam("dry_run"); v == "true" || v == "1" {
		req.DryRun = true
	}
	p, err := s.eng.Rewind(c.Request().Context(), c.Param("id"), c.Param("cid"), req.DryRun)
	if err != nil {
		return err
	}
	to := p.CheckpointID
	if to == "" {
		to = c.Param("cid")
	}
	notes{s}.rewound(c, p, "checkpoint "+to, req.Say, req.Author)
	return c.JSON(http.StatusOK, p)
}

// rewound tells the session's queue of a rewind or a rollback that ran
// (not a dry run), to what, with the records whose status it changed.
func (s notes) rewound(c echo.Context, p *api.Plan, to, say, author string) {
	if p.DryRun {
		return
	}
	recs := make([]*prsm.Record, len(p.Decisions))
	for i, d := range p.Decisions {
		recs[i] = &prsm.Record{ID: d.RecordID, RelPath: d.RelPath}
	}
	s.queue(c.Request().Context(), c.Param("id"), feedback.Decision{Verb: feedback.DecidedRewind, Checkpoint: to,
		Records: recs, Total: len(recs), Say: say, Author: author})
}

func (s *Server) rollbackSelect(c echo.Context) error {
	var req api.RollbackRequest
	if err := bindNote(c, &req, &req.Say); err != nil {
		return err
	}
	p, err := s.eng.SelectRewind(c.Request().Context(), c.Param("id"), req)
	if err != nil {
		return err
	}
	notes{s}.rewound(c, p, "before the changes the rollback picked", req.Say, req.Author)
	return c.JSON(http.StatusOK, p)
}

func (s *Server) gc(c echo.Context) error {
	var req api.GCRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	rep, err := s.eng.GC(c.Request().Context(), req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rep)
}
