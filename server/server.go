package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/feedback"
	"github.com/prsm-dev/prsm/history"
	"github.com/prsm-dev/prsm/store"
)

// DefaultBodyLimit bounds request bodies; larger ones get 413
// (api.DefaultBodyLimit).
const DefaultBodyLimit = api.DefaultBodyLimit

// Config sets up a server.
type Config struct {
	// Addr to listen on; it must be a loopback address. Default 127.0.0.1:0.
	Addr string
	// BodyLimit in bytes; DefaultBodyLimit when zero.
	BodyLimit int64
	// Token for bearer auth; random when empty.
	Token string
	// ProjectDir receives server.json; none is written when empty.
	ProjectDir string
	// Heartbeat is the SSE keep-alive interval; 15 s when zero.
	Heartbeat time.Duration
	// How long a kept-alive connection may stay idle (2 min), a request's
	// header may take to arrive (10 s), and one write of an answer may
	// stall (1 min); the defaults when zero. See conns.go.
	IdleTimeout, ReadHeaderTimeout, WriteTimeout time.Duration
	// MaxConns bounds the connections in all (1024), MaxUntrustedConns
	// those that have not yet authenticated (128, at most half of
	// MaxConns); the defaults when zero.
	MaxConns, MaxUntrustedConns int
	// Activity, when set, counts the requests (see Activity).
	Activity *Activity
	// Feedback is the sessions' feedback queue (package feedback); one
	// over the engine's store, with the default settings, when nil.
	Feedback *feedback.Queue
}

// Server is prsm's HTTP server for one workspace.
type Server struct {
	eng   *engine.Engine
	cfg   Config
	echo  *echo.Echo
	http  *http.Server
	ln    net.Listener
	port  string
	token string
	log   *slog.Logger
	// shutdown is closed when a client asks the server to stop.
	shutdown chan struct{}
	// ui holds the review page's login codes and cookie logins (ui.go).
	ui *uiAuth
	// fb is the sessions' feedback queue (feedback.go).
	fb *feedback.Queue
	// hist is blame, prsm commit and the trace notes (history.go).
	hist *history.History
}

// New builds a server and binds its listener (so Addr is known at once).
func New(eng *engine.Engine, cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.BodyLimit == 0 {
		cfg.BodyLimit = DefaultBodyLimit
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = 15 * time.Second
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&cfg.IdleTimeout, defaultIdleTimeout}, {&cfg.ReadHeaderTimeout, defaultReadHeaderTimeout}, {&cfg.WriteTimeout, defaultWriteTimeout}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = defaultMaxConns
	}
	if cfg.MaxUntrustedConns <= 0 {
		cfg.MaxUntrustedConns = defaultMaxUntrusted
	}
	// Untrusted connections never fill the whole: the rest is for clients
	// that authenticated.
	cfg.MaxUntrustedConns = max(1, min(cfg.MaxUntrustedConns, cfg.MaxConns/2))
	if err := CheckAddr(cfg.Addr); err != nil {
		return nil, err
	}
	token := cfg.Token
	if token == "" {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		token = hex.EncodeToString(b[:])
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	fb := cfg.Feedback
	if fb == nil {
		fb = &feedback.Queue{DB: eng.DB}
	}
	if fb.Content == nil {
		fb.Content = func(ctx context.Context, sessionID, id, side string) ([]byte, error) {
			b, _, err := eng.Content(ctx, sessionID, id, side)
			return b, err
		}
	}
	s := &Server{eng: eng, cfg: cfg, ln: newConnGuard(ln, cfg.MaxConns, cfg.MaxUntrustedConns), port: port, token: token,
		log: eng.Log, shutdown: make(chan struct{}), fb: fb}
	s.hist = &history.History{DB: eng.DB, Repo: eng.Repo, Version: prsm.Version}
	s.echo = s.router()
	s.http = &http.Server{Handler: s.echo, ReadHeaderTimeout: cfg.ReadHeaderTimeout, IdleTimeout: cfg.IdleTimeout,
		WriteTimeout: cfg.WriteTimeout, ConnContext: connContext}
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Token is the bearer token clients must send.
func (s *Server) Token() string { return s.token }

// InfoCheck is how often a server checks that server.json still describes
// it.
var InfoCheck = time.Second

// keepInfo writes server.json again whenever it no longer describes this
// server (deleted, emptied, or edited by hand) until stop closes. The
// server holds the workspace's lock, so no other server writes it; a
// wrong server.json would lock every command out, each one finding no
// server there and none able to start.
func (s *Server) keepInfo(info api.Info, stop <-chan struct{}) {
	t := time.NewTicker(InfoCheck)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if got, err := ReadInfo(s.cfg.ProjectDir); err == nil && *got == info {
			continue
		}
		if err := WriteInfo(s.cfg.ProjectDir, info); err != nil {
			s.log.Warn("rewrite server.json", "err", err)
		} else {
			s.log.Warn("server.json did not describe this server: written again")
		}
	}
}

// CheckAddr refuses an address that is not host:port on loopback.
func CheckAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return prsm.Errorf(prsm.ErrInvalid, string(api.CodeBadAddr), "use 127.0.0.1:PORT", "bad address %q: %v", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return prsm.Errorf(prsm.ErrInvalid, string(api.CodeBadAddr), "prsm listens on loopback only, for example 127.0.0.1:0",
			"refusing to listen on %s: not a loopback address", addr)
	}
	return nil
}

// Serve writes server.json and serves until ctx ends, then shuts down
// gracefully and removes server.json.
func (s *Server) Serve(ctx context.Context) error {
	if s.cfg.ProjectDir != "" {
		info := api.Info{PID: os.Getpid(), Addr: s.Addr(), Token: s.token, Workspace: s.eng.Repo.Root, Version: prsm.Version}
		if err := WriteInfo(s.cfg.ProjectDir, info); err != nil {
			return fmt.Errorf("write server.json: %w", err)
		}
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() { defer close(done); s.keepInfo(info, stop) }()
		defer func() { close(stop); <-done; removeInfo(s.cfg.ProjectDir, s.token) }()
		// Login files of an earlier server hold codes nobody knows any
		// more; ours are of no use once we stop.
		s.ui.clearLoginFiles()
		defer s.ui.clearLoginFiles()
	}
	errc := make(chan error, 1)
	go func() { errc <- s.http.Serve(s.ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	case <-s.shutdown:
	}
	// End SSE streams first: Shutdown waits for handlers to return.
	s.eng.Events.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.http.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (s *Server) router() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.errorHandler
	loginDir := ""
	if s.cfg.ProjectDir != "" {
		loginDir = filepath.Join(s.cfg.ProjectDir, "ui")
	}
	s.ui = newUIAuth(s.port, loginDir)
	if s.cfg.Activity != nil {
		e.Use(s.cfg.Activity.middleware)
	}
	e.Use(closeUntrusted, drainBody, writeDeadlines(s.cfg.WriteTimeout), unescapeParams, s.hostCheck,
		middleware.BodyLimit(strconv.FormatInt(s.cfg.BodyLimit, 10)+"B"), s.auth)

	for id, h := range s.handlers() {
		var mw []echo.MiddlewareFunc
		switch params := api.Routes[id].Params(); {
		case slices.Contains(params, "record"):
			mw = append(mw, s.resolveChange)
		case slices.Contains(params, "cid"):
			mw = append(mw, s.resolveCheckpoint)
		}
		if hookCalls[id] {
			mw = append(mw, notes{s}.waitingHeader)
		}
		e.Add(id.Method(), id.Pattern(), h, mw...)
	}
	return e
}

// resolveChange resolves the session and the change a route with a
// :record names (engine.ResolveChange: prefixes, and api.AnySession), and
// hands the handler their full ids: every client sends what its user
// typed, in one request.
func (s *Server) resolveChange(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		sess, id, err := s.eng.ResolveChange(c.Request().Context(), c.Param("id"), c.Param("record"))
		if err != nil {
			return err
		}
		setParams(c, map[string]string{"id": sess.ID, "record": id})
		return next(c)
	}
}

// resolveCheckpoint finds the session of a route with a :cid whose
// session is api.AnySession (engine.ResolveCheckpoint), and hands the
// handler its id and the checkpoint's. With a session named, the engine
// resolves both prefixes itself.
func (s *Server) resolveCheckpoint(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Param("id") != api.AnySession {
			return next(c)
		}
		sess, cp, err := s.eng.ResolveCheckpoint(c.Request().Context(), api.AnySession, c.Param("cid"))
		if err != nil {
			return err
		}
		setParams(c, map[string]string{"id": sess.ID, "cid": cp.ID})
		return next(c)
	}
}

// setParams sets the path parameters named in vals, and keeps the others.
func setParams(c echo.Context, vals map[string]string) {
	all := c.ParamValues()
	for i, n := range c.ParamNames() {
		if v, ok := vals[n]; ok {
			all[i] = v
		}
	}
	c.SetParamValues(all...)
}

// handlers are the server's handlers, by the route (api.Routes) each
// serves: every route has one (TestEveryRouteServed).
func (s *Server) handlers() map[api.RouteID]echo.HandlerFunc {
	return map[api.RouteID]echo.HandlerFunc{
		api.RouteHealthz:  s.healthz,
		api.RouteEvents:   s.events,
		api.RouteStatus:   s.status,
		api.RouteShutdown: s.shutdownHandler,

		api.RouteListSessions: s.listSessions,
		api.RouteStartSession: s.startSession,
		api.RouteGetSession:   s.getSession,
		api.RouteEndSession:   s.endSession,

		api.RouteStartToolCall:         s.startToolCall,
		api.RouteCompleteToolCall:      s.completeToolCall,
		api.RouteListChanges:           s.listChanges,
		api.RouteAcceptAll:             s.bulk(true),
		api.RouteRejectAll:             s.bulk(false),
		api.RouteGetChange:             s.getChanges,
		api.RouteChangeDiff:            s.diffChanges,
		api.RouteChangeContent:         s.changeContent,
		api.RouteAccept:                s.accept,
		api.RouteReject:                s.reject,
		api.RouteResolve:               s.resolve,
		api.RouteDecideHunks:           s.decideHunks,
		api.RouteAcceptHunk:            s.decideHunk(true),
		api.RouteRejectHunk:            s.decideHunk(false),
		api.RouteTurn:                  s.turn,
		api.RouteFlush:                 s.flush,
		api.RouteTurnEnd:               s.turnEnd,
		api.RouteMintHookToken:         s.mintHookToken,
		api.RouteListCheckpoints:       s.listCheckpoints,
		api.RouteCreateCheckpoint:      s.createCheckpoint,
		api.RouteGetCheckpoint:         s.getCheckpoint,
		api.RouteAnnotateCheckpoint:    s.annotateCheckpoint,
		api.RouteDeleteCheckpoint:      s.deleteCheckpoint,
		api.RouteCheckpointDiff:        s.diffCheckpoint,
		api.RouteCheckpointDiffBetween: s.diffCheckpoint,
		api.RouteRewindPreview:         s.rewindPreview,
		api.RouteRewind:                s.rewindCheckpoint,
		api.RouteRollback:              s.rollbackSelect,
		api.RouteGC:                    s.gc,
		api.RouteAcceptEverywhere:      s.bulkAll(true),
		api.RouteRejectEverywhere:      s.bulkAll(false),
		api.RouteGetJob:                s.getJob,
		api.RouteListFeedback:          notes{s}.listFeedback,
		api.RouteChangeFeedback:        notes{s}.changeFeedback,
		api.RouteComment:               notes{s}.comment,
		api.RouteTakeFeedback:          notes{s}.takeFeedback,
		api.RouteConfirmFeedback:       notes{s}.confirmFeedback,
		api.RouteBlame:                 kept{s}.blame,
		api.RouteCommit:                kept{s}.commit,
		api.RouteTraceShow:             kept{s}.traceShow,
		api.RouteTraceExport:           kept{s}.traceExport,
		api.RouteAgentHook:             s.agentHook,

		// The review page, its login and its helper API (ui.go).
		api.RouteUIIndex:         page{s}.uiIndex,
		api.RouteUILogin:         page{s}.uiLoginRoute,
		api.RouteUILoginPost:     page{s}.uiLoginPost,
		api.RouteUIAsset:         page{s}.uiAsset,
		api.RouteUIMintCode:      s.uiMintCode,
		api.RouteUILogout:        page{s}.uiLogout,
		api.RouteUIWorkspaceFile: page{s}.uiWorkspaceFile,
	}
}

// drainWait bounds how long the server waits for the rest of a request
// body before it answers, and maxDrain how much of it the server reads.
const (
	drainWait = 5 * time.Second
	maxDrain  = 1 << 20
)

// drainBody reads what the handler left of the request body before the
// answer goes out, on every route. A client that asked to close the
// connection (Python's urllib always does) and whose body the handler
// ignored (accept, reject, flush, turn-end...) otherwise has its
// connection closed with the body unread, and the kernel answers a close
// with unread data by a reset, which throws away the end of the answer
// still in flight: Go's server does not read such a body itself. A body
// longer than maxDrain is not read to its end: http.MaxBytesReader then
// has the server close the connection gracefully (a FIN, then a pause
// before the close), as it does for a body over its limit. It comes
// before the guards, so that every answer, the guards' refusals
// included, waits for the body; it drains the request's own body, not the
// body limit's wrapper, which goes back to its pool when the chain
// returns, before the error handler writes.
func drainBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req, res := c.Request(), c.Response()
		if req.Body == nil || req.Body == http.NoBody {
			return next(c)
		}
		body, w := req.Body, res.Writer
		drained := false
		drain := func() {
			if drained {
				return
			}
			drained = true
			rc := http.NewResponseController(w)
			// A client that trickles its body does not hold the answer
			// back for long; the deadline goes once the body is read, so
			// that it cannot end the request while the answer is written.
			rc.SetReadDeadline(time.Now().Add(drainWait))
			defer rc.SetReadDeadline(time.Time{})
			io.Copy(io.Discard, http.MaxBytesReader(w, body, maxDrain))
		}
		res.Before(drain)
		err := next(c)
		if err == nil && !res.Committed {
			drain() // the handler wrote nothing: net/http answers 200
		}
		return err
	}
}

// unescapeParams unescapes the path parameters of every route once. echo
// routes on the escaped path when the request's path has escapes its plain
// form would not (a ":" written %3A, as encodeURIComponent and Python's
// quote(s, safe="") write it; a "/" in a checkpoint's name written %2F), and
// then hands its parameters over escaped: a record id "b1:0" would come
// as "b1%3A0" and be found nowhere.
func unescapeParams(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().URL.RawPath == "" {
			return next(c)
		}
		vals := c.ParamValues()
		plain := make([]string, len(vals))
		for i, v := range vals {
			u, err := url.PathUnescape(v)
			if err != nil {
				u = v // net/http refuses a path with bad escapes first
			}
			plain[i] = u
		}
		c.SetParamValues(plain...)
		return next(c)
	}
}

// hostCheck refuses Host headers other than loopback names on our port: a
// page on another origin that rebinds its DNS name to 127.0.0.1 still sends
// its own name, and is turned away.
func (s *Server) hostCheck(next echo.HandlerFunc) echo.HandlerFunc {
	allowed := map[string]bool{
		"127.0.0.1:" + s.port: true,
		"localhost:" + s.port: true,
		"[::1]:" + s.port:     true,
	}
	return func(c echo.Context) error {
		if !allowed[strings.ToLower(c.Request().Host)] {
			return apiError(api.CodeForbiddenHost, "host %q is not allowed", c.Request().Host)
		}
		return next(c)
	}
}

// auth requires the bearer token, in the Authorization header, on every
// route but /healthz, or a session's hook token on the hook routes of
// that session (hookAuth); never in a query, /events included: an address ends
// up in logs, histories and command lines. (The review page's EventSource,
// which cannot send headers, is logged in by its cookie.) A request without
// a token may instead carry the review page's login cookie (cookieAuth in
// ui.go), which needs a CSRF header to change state; the page's login
// route and its one-time codes need neither.
func (s *Server) auth(next echo.HandlerFunc) echo.HandlerFunc {
	want := []byte(s.token)
	return func(c echo.Context) error {
		if c.Path() == api.RouteHealthz.Pattern() || isPublicUI(c) {
			return next(c)
		}
		got := ""
		if h := c.Request().Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
			got = strings.TrimPrefix(h, "Bearer ")
		}
		if got == "" {
			return s.cookieAuth(c, next)
		}
		if subtle.ConstantTimeCompare([]byte(got), want) == 1 {
			markTrusted(c)
			return next(c)
		}
		if strings.HasPrefix(got, hookTokenPrefix) {
			return s.hookAuth(c, got, next)
		}
		return apiError(api.CodeUnauthorized, "missing or wrong token")
	}
}

// httpError is an error with a status and a code, rendered as JSON.
type httpError struct {
	Status int
	Code   api.Code
	Msg    string
	Hint   string
	// RetryAfter, in seconds, is sent as the Retry-After header when set.
	RetryAfter int
}

// busyRetryAfter is the Retry-After of a busy store's answer, in
// seconds: the store waited for its lock for seconds already, and the
// lock of another prsm process or a sqlite shell may go at any moment.
const busyRetryAfter = 1

func (e *httpError) Error() string { return e.Msg }

// apiError is an error answer with code, and the status api.Codes gives
// it.
func apiError(code api.Code, format string, args ...any) error {
	return &httpError{Status: api.StatusOf(code), Code: code, Msg: fmt.Sprintf(format, args...)}
}

// errorHandler turns every error into {"error","code"} with a fitting status.
func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	he := toHTTPError(err)
	switch {
	case he.Code == api.CodeBusy:
		s.log.Warn("store busy", "method", c.Request().Method, "path", c.Path(), "err", err)
	case he.Status >= 500:
		s.log.Error("request failed", "method", c.Request().Method, "path", c.Path(), "err", err)
	}
	if he.RetryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(he.RetryAfter))
	}
	if c.Request().Method == http.MethodHead {
		c.NoContent(he.Status)
		return
	}
	c.JSON(he.Status, api.ErrorBody{Error: he.Msg, Code: he.Code, Hint: he.Hint})
}

// echoCodes are the codes of echo's own errors: a route or a method it
// does not serve, a body over the limit, a missing token.
var echoCodes = map[int]api.Code{
	http.StatusNotFound:              api.CodeNotFound,
	http.StatusMethodNotAllowed:      api.CodeMethodNotAllowed,
	http.StatusRequestEntityTooLarge: api.CodeTooLarge,
	http.StatusUnauthorized:          api.CodeUnauthorized,
}

// sentinelCodes are the codes of an error that is only one of prsm's
// sentinels, in the order they are looked for.
var sentinelCodes = []struct {
	kind error
	code api.Code
}{
	{prsm.ErrNotFound, api.CodeNotFound},
	{prsm.ErrAmbiguous, api.CodeAmbiguousIDPrefix},
	{prsm.ErrInvalid, api.CodeInvalidInput},
	{prsm.ErrConflict, api.CodeConflict},
}

func toHTTPError(err error) *httpError {
	var he *httpError
	if errors.As(err, &he) {
		return he
	}
	if store.IsBusy(err) {
		// SPEC.md: the client sends the same request again.
		return &httpError{Status: api.StatusOf(api.CodeBusy), Code: api.CodeBusy, Msg: err.Error(),
			Hint: "the database is locked by another process or a long transaction; try again in a moment", RetryAfter: busyRetryAfter}
	}
	var pe *prsm.Error
	if errors.As(err, &pe) {
		status := api.StatusOf(pe.Code)
		if pe.Err != nil {
			status = statusOf(pe.Err)
		}
		return &httpError{Status: status, Code: pe.Code, Msg: pe.Msg, Hint: pe.Hint}
	}
	var ee *echo.HTTPError
	if errors.As(err, &ee) {
		msg := http.StatusText(ee.Code)
		if m, ok := ee.Message.(string); ok {
			msg = m
		}
		code, ok := echoCodes[ee.Code]
		if !ok {
			code = api.CodeInvalidInput
			if ee.Code >= 500 {
				code = api.CodeInternal
			}
		}
		return &httpError{Status: ee.Code, Code: code, Msg: msg}
	}
	for _, k := range sentinelCodes {
		if errors.Is(err, k.kind) {
			return &httpError{Status: api.StatusOf(k.code), Code: k.code, Msg: err.Error()}
		}
	}
	return &httpError{Status: api.StatusOf(api.CodeInternal), Code: api.CodeInternal, Msg: err.Error()}
}

// statusOf is the status of an error of kind, one of prsm's sentinels:
// that of its code in api.Codes; 500 for another error.
func statusOf(kind error) int {
	for _, k := range sentinelCodes {
		if errors.Is(kind, k.kind) {
			return api.StatusOf(k.code)
		}
	}
	return api.StatusOf(api.CodeInternal)
}

// bind decodes a JSON body strictly enough to give clear errors: bad JSON is
// a 400, an empty body is an empty request, a body over the limit a 413.
// The body is read whole before it is decoded: a chunked body announces no
// length for the limit to be checked against upfront, and a decoder that
// stopped at the end of the JSON value would take a body that runs past the
// limit, or call an oversized one bad JSON.
func bind(c echo.Context, v any) error {
	req := c.Request()
	if req.ContentLength == 0 && req.Body == http.NoBody {
		return nil
	}
	data, err := io.ReadAll(req.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return apiError(api.CodeTooLarge, "request body over %d bytes", mbe.Limit)
		}
		var he *echo.HTTPError
		if errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge {
			return apiError(api.CodeTooLarge, "request body over the limit")
		}
		return apiError(api.CodeBadBody, "read request body: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		if err == io.EOF {
			return nil
		}
		return apiError(api.CodeBadJSON, "invalid JSON body: %v", err)
	}
	if dec.More() {
		return apiError(api.CodeBadJSON, "invalid JSON body: trailing data")
	}
	return nil
}
