package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
)

func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, api.Health{OK: true, Version: prsm.Version})
}

func (s *Server) status(c echo.Context) error {
	sessions, err := s.eng.Sessions(c.Request().Context(), "")
	if err != nil {
		return err
	}
	st := api.StatusResponse{
		Workspace: s.eng.Repo.Root, Identity: s.eng.Repo.Identity, Addr: s.Addr(),
		PID: os.Getpid(), Version: prsm.Version,
	}
	st.Watcher = "git status scan"
	if w := s.eng.Watcher; w != nil {
		st.Watcher = watchBackend()
		if d := w.Degraded(); len(d) > 0 {
			st.WatchFallbacks = d
			st.Watcher += ", limited"
			st.WatchLimits = watchLimits(w.Limits())
		}
	}
	for _, ss := range sessions {
		if ss.Status == prsm.SessionActive {
			st.ActiveSessions++
			h := s.eng.HookHealth(ss.ID)
			h.Name = ss.Name
			st.Hooks = append(st.Hooks, h)
		} else {
			st.EndedSessions++
		}
		st.PendingCount += ss.PendingCount
		if ss.PendingCount > 0 {
			// What waits for a resolve, not a decision: records_status
			// finds the session's pending rows.
			cs, err := store.ListRecords(c.Request().Context(), s.eng.DB.Q(), store.RecordFilter{
				SessionID: ss.ID, Status: prsm.StatusPending, SyncState: prsm.SyncConflict})
			if err != nil {
				return err
			}
			st.ConflictCount += len(cs)
			for _, r := range cs {
				if len(st.Conflicts) < api.MaxStatusConflicts {
					st.Conflicts = append(st.Conflicts, api.ConflictRef{SessionID: ss.ID, ID: r.ID, Path: r.RelPath})
				}
			}
		}
		if ss.Note != "" && ss.EndedAt != nil && time.Since(*ss.EndedAt) < 24*time.Hour {
			st.Notices = append(st.Notices, fmt.Sprintf("session %s (%s) ended: %s", ss.ID, ss.Name, ss.Note))
		} else if ss.Note != "" && ss.Status == prsm.SessionActive {
			// What prsm refused the agent (a rewritten .git put back).
			st.Notices = append(st.Notices, fmt.Sprintf("session %s (%s): %s", ss.ID, ss.Name, ss.Note))
		}
	}
	st.Notices = append(st.Notices, s.eng.Notices()...)
	return c.JSON(http.StatusOK, st)
}

func (s *Server) shutdownHandler(c echo.Context) error {
	select {
	case <-s.shutdown:
	default:
		close(s.shutdown)
	}
	return c.JSON(http.StatusAccepted, api.OK{OK: true})
}

func (s *Server) listSessions(c echo.Context) error {
	list, err := s.eng.Sessions(c.Request().Context(), c.QueryParam("status"))
	if err != nil {
		return err
	}
	if list == nil {
		list = []*prsm.Session{}
	}
	return c.JSON(http.StatusOK, list)
}

func (s *Server) startSession(c echo.Context) error {
	var req api.StartRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	sess, err := s.eng.StartSession(c.Request().Context(), req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, sess)
}

func (s *Server) getSession(c echo.Context) error {
	sess, err := s.eng.Session(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, sess)
}

func (s *Server) endSession(c echo.Context) error {
	discard := false
	if v := c.QueryParam("discard"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return apiError(api.CodeBadParam, "discard must be true or false, not %q", v)
		}
		discard = b
	}
	if discard && prefersAsync(c.Request().Header) {
		// A discard may reject many changes: a job, followed as a bulk
		// decision's is (jobStarted).
		job, err := s.eng.StartDiscard(c.Request().Context(), c.Param("id"))
		if err != nil {
			return err
		}
		return jobStarted(c, job)
	}
	sess, err := s.eng.EndSession(c.Request().Context(), c.Param("id"), discard)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, sess)
}

// events streams server-sent events until the client leaves or the server
// shuts down.
func (s *Server) events(c echo.Context) error {
	ch, cancel := s.eng.Events.Subscribe()
	defer cancel()
	w := c.Response()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": connected\n\n")
	w.Flush()
	tick := time.NewTicker(s.cfg.Heartbeat)
	defer tick.Stop()
	ctx := c.Request().Context()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return nil
			}
			w.Flush()
		case ev, ok := <-ch:
			if !ok {
				return nil
			}
			data, err := json.Marshal(ev.Data)
			if err != nil {
				s.log.Error("encode event", "type", ev.Type, "err", err)
				continue
			}
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.ID, ev.Type, data); err != nil {
				return nil
			}
			w.Flush()
		}
	}
}
