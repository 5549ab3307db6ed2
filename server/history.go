package server

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// Where kept work came from and where it goes (package history): blame,
// prsm commit, and the Agent Trace records.

// kept is the server's part that serves package history.
type kept struct{ *Server }

// blame is GET /blame?path=FILE[&start=A&end=B].
func (s kept) blame(c echo.Context) error {
	var lines [2]int
	for i, name := range []string{"start", "end"} {
		if v := c.QueryParam(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return prsm.Errorf(prsm.ErrInvalid, string(api.CodeBadParam), "a line number is 1 or more",
					"%s=%q is not a line number", name, v)
			}
			lines[i] = n
		}
	}
	b, err := s.hist.Blame(c.Request().Context(), c.QueryParam("path"), lines[0], lines[1])
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, b)
}

// commit is POST /commits: prsm commit.
func (s kept) commit(c echo.Context) error {
	var req api.CommitRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	rep, err := s.hist.Commit(c.Request().Context(), req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rep)
}

// traceShow is GET /traces/{rev}: the trace records of a commit's note.
func (s kept) traceShow(c echo.Context) error {
	t, err := s.hist.TraceShow(c.Request().Context(), c.Param("rev"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, t)
}

// traceExport is GET /sessions/{id}/trace: the session's uncommitted
// work as one Agent Trace record, of the spec's media type.
func (s kept) traceExport(c echo.Context) error {
	ctx := c.Request().Context()
	sess, err := s.eng.Session(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	t, err := s.hist.TraceExport(ctx, sess)
	if err != nil {
		return err
	}
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, api.TraceMediaType, b)
}
