package server

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
)

// hookTokenPrefix starts every hook token, so that the guard knows one
// from the server's token (64 hex digits) without a look into the store.
const hookTokenPrefix = "prsm-hook-"

// hookSessionKey is the echo context key under which a request
// authorized by a hook token carries its session's id.
const hookSessionKey = "prsm.hook_session"

// hookRoutes are what a hook token authorizes: the routes prsm's hook
// adapters send an event's call to (package hook's wireServer), and the
// http hooks' route. Every one but /hooks/:agent names the session in
// its path, which must be the token's; /hooks/:agent finds the session
// from the event's cwd and refuses another (agentHook).
var hookRoutes = func() map[string]bool {
	m := map[string]bool{}
	for _, r := range []api.RouteID{api.RouteAgentHook, api.RouteStartToolCall, api.RouteCompleteToolCall, api.RouteTurn, api.RouteTurnEnd,
		api.RouteTakeFeedback, api.RouteConfirmFeedback} {
		m[r.Method()+" "+r.Pattern()] = true
	}
	return m
}()

// hashHookToken is what the store keeps of a hook token: the token is 256
// random bits, so a plain SHA-256 cannot be turned back.
func hashHookToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// mintHookToken is POST /sessions/{id}/hook-tokens, for the server's token
// only (a hook token cannot mint another): a new token for the hooks of
// one active session, for `prsm run` to hand the agent instead of the
// server's own. Only its hash is stored; it counts until the session
// ends, across restarts of the server.
func (s *Server) mintHookToken(c echo.Context) error {
	ctx := c.Request().Context()
	sess, err := s.eng.Session(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	if sess.Status != prsm.SessionActive {
		return prsm.Errorf(prsm.ErrConflict, string(api.CodeSessionEnded), "start a new session with `prsm run`",
			"session %s has ended", sess.ID)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	token := hookTokenPrefix + hex.EncodeToString(b[:])
	err = s.eng.DB.Tx(ctx, func(q store.Querier) error {
		return store.AddHookToken(ctx, q, sess.ID, hashHookToken(token), time.Now())
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, api.HookToken{Token: token, SessionID: sess.ID})
}

// hookAuth authorizes a request whose bearer token is a hook token: only
// the hook routes, only for the token's session, and only while that
// session is active. A token the store does not know is refused as any
// wrong token is; one whose session has ended is refused with the code
// session_ended, which the hook adapters take for "nothing to do".
func (s *Server) hookAuth(c echo.Context, token string, next echo.HandlerFunc) error {
	sid, status, err := store.HookTokenSession(c.Request().Context(), s.eng.DB.Q(), hashHookToken(token))
	if errors.Is(err, prsm.ErrNotFound) {
		return apiError(api.CodeUnauthorized, "missing or wrong token")
	}
	if err != nil {
		return err
	}
	if status != prsm.SessionActive {
		// 401, not the table's 409: the token itself no longer counts.
		return &httpError{Status: http.StatusUnauthorized, Code: api.CodeSessionEnded,
			Msg: fmt.Sprintf("the session of this hook token, %s, has ended", sid)}
	}
	if !hookRoutes[c.Request().Method+" "+c.Path()] {
		return &httpError{Status: http.StatusForbidden, Code: api.CodeHookTokenScope,
			Msg:  "a hook token only sends the hook events of its session",
			Hint: "the CLI and scripts use the server's token (server.json)"}
	}
	if id := c.Param("id"); strings.Contains(c.Path(), ":id") && id != sid {
		return apiError(api.CodeHookTokenScope, "this hook token is session %s's, not %s's", sid, id)
	}
	// The connection stays untrusted (conns.go): the agent holds this
	// token, and must not hold connections the CLI needs.
	c.Set(hookSessionKey, sid)
	return next(c)
}
