package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// RouteID names one route of the HTTP API: one operation. The server
// registers its handlers by them, the Go clients build paths with them,
// and the TypeScript clients get them as generated path builders
// (internal/tsgen); Routes says what each one is.
type RouteID int

// The routes, in the order of Routes.
const (
	RouteHealthz RouteID = iota
	RouteEvents
	RouteStatus
	RouteShutdown
	RouteListSessions
	RouteStartSession
	RouteGetSession
	RouteEndSession
	RouteStartToolCall
	RouteCompleteToolCall
	RouteListChanges
	RouteAcceptAll
	RouteRejectAll
	RouteGetChange
	RouteChangeDiff
	RouteChangeContent
	RouteAccept
	RouteReject
	RouteResolve
	RouteDecideHunks
	RouteAcceptHunk
	RouteRejectHunk
	RouteTurn
	RouteFlush
	RouteTurnEnd
	RouteMintHookToken
	RouteListCheckpoints
	RouteCreateCheckpoint
	RouteGetCheckpoint
	RouteAnnotateCheckpoint
	RouteDeleteCheckpoint
	RouteCheckpointDiff
	RouteCheckpointDiffBetween
	RouteRewindPreview
	RouteRewind
	RouteRollback
	RouteGC
	RouteAcceptEverywhere
	RouteRejectEverywhere
	RouteGetJob
	RouteAgentHook
	RouteUIIndex
	RouteUILogin
	RouteUILoginPost
	RouteUIAsset
	RouteUIMintCode
	RouteUILogout
	RouteUIWorkspaceFile
	numRoutes
)

// AnySession, as the session of a route with a :record or a :cid
// parameter, names the one active session that has that change or that
// checkpoint: the server finds it, so that a client that knows only a
// change's or a checkpoint's id (or a prefix, or a checkpoint's name)
// needs no lookup of its own. Session ids are hex, so it names no
// session.
const AnySession = "-"

// Route is what a RouteID stands for: a method and a path pattern, whose
// segments that start with ':' are parameters (echo's syntax), and a
// name, the TypeScript name of its path builder.
//
// The parameters: id is a session's id (or a unique prefix of one; with a
// record or a cid, AnySession too), call a tool call's id, record a change's id (a
// record's, or a tool call's for all of its records; a unique prefix of
// either will do: the server resolves it), cid a
// checkpoint's id, prefix or name, other another checkpoint, n a hunk's
// index, agent an agent's name, name an asset's file name.
type Route struct {
	Name    string
	Method  string
	Pattern string
}

// Routes are every route, indexed by RouteID: each route is declared
// here once.
var Routes = [numRoutes]Route{
	RouteHealthz:               {"healthz", http.MethodGet, "/healthz"},
	RouteEvents:                {"events", http.MethodGet, "/events"},
	RouteStatus:                {"status", http.MethodGet, "/status"},
	RouteShutdown:              {"shutdown", http.MethodPost, "/shutdown"},
	RouteListSessions:          {"listSessions", http.MethodGet, "/sessions"},
	RouteStartSession:          {"startSession", http.MethodPost, "/sessions"},
	RouteGetSession:            {"getSession", http.MethodGet, "/sessions/:id"},
	RouteEndSession:            {"endSession", http.MethodDelete, "/sessions/:id"},
	RouteStartToolCall:         {"startToolCall", http.MethodPost, "/sessions/:id/tool-calls"},
	RouteCompleteToolCall:      {"completeToolCall", http.MethodPost, "/sessions/:id/tool-calls/:call/complete"},
	RouteListChanges:           {"listChanges", http.MethodGet, "/sessions/:id/file-changes"},
	RouteAcceptAll:             {"acceptAll", http.MethodPost, "/sessions/:id/file-changes/accept-all"},
	RouteRejectAll:             {"rejectAll", http.MethodPost, "/sessions/:id/file-changes/reject-all"},
	RouteGetChange:             {"getChange", http.MethodGet, "/sessions/:id/file-changes/:record"},
	RouteChangeDiff:            {"changeDiff", http.MethodGet, "/sessions/:id/file-changes/:record/diff"},
	RouteChangeContent:         {"changeContent", http.MethodGet, "/sessions/:id/file-changes/:record/content"},
	RouteAccept:                {"accept", http.MethodPost, "/sessions/:id/file-changes/:record/accept"},
	RouteReject:                {"reject", http.MethodPost, "/sessions/:id/file-changes/:record/reject"},
	RouteResolve:               {"resolve", http.MethodPost, "/sessions/:id/file-changes/:record/resolve"},
	RouteDecideHunks:           {"decideHunks", http.MethodPost, "/sessions/:id/file-changes/:record/hunks"},
	RouteAcceptHunk:            {"acceptHunk", http.MethodPost, "/sessions/:id/file-changes/:record/hunks/:n/accept"},
	RouteRejectHunk:            {"rejectHunk", http.MethodPost, "/sessions/:id/file-changes/:record/hunks/:n/reject"},
	RouteTurn:                  {"turn", http.MethodPost, "/sessions/:id/turns"},
	RouteFlush:                 {"flush", http.MethodPost, "/sessions/:id/flush"},
	RouteTurnEnd:               {"turnEnd", http.MethodPost, "/sessions/:id/turn-end"},
	RouteMintHookToken:         {"mintHookToken", http.MethodPost, "/sessions/:id/hook-tokens"},
	RouteListCheckpoints:       {"listCheckpoints", http.MethodGet, "/sessions/:id/checkpoints"},
	RouteCreateCheckpoint:      {"createCheckpoint", http.MethodPost, "/sessions/:id/checkpoints"},
	RouteGetCheckpoint:         {"getCheckpoint", http.MethodGet, "/sessions/:id/checkpoints/:cid"},
	RouteAnnotateCheckpoint:    {"annotateCheckpoint", http.MethodPut, "/sessions/:id/checkpoints/:cid"},
	RouteDeleteCheckpoint:      {"deleteCheckpoint", http.MethodDelete, "/sessions/:id/checkpoints/:cid"},
	RouteCheckpointDiff:        {"checkpointDiff", http.MethodGet, "/sessions/:id/checkpoints/:cid/diff"},
	RouteCheckpointDiffBetween: {"checkpointDiffBetween", http.MethodGet, "/sessions/:id/checkpoints/:cid/diff/:other"},
	RouteRewindPreview:         {"rewindPreview", http.MethodGet, "/sessions/:id/checkpoints/:cid/rewind/preview"},
	RouteRewind:                {"rewind", http.MethodPost, "/sessions/:id/checkpoints/:cid/rewind"},
	RouteRollback:              {"rollback", http.MethodPost, "/sessions/:id/rollback"},
	RouteGC:                    {"gc", http.MethodPost, "/gc"},
	RouteAcceptEverywhere:      {"acceptEverywhere", http.MethodPost, "/file-changes/accept-all"},
	RouteRejectEverywhere:      {"rejectEverywhere", http.MethodPost, "/file-changes/reject-all"},
	RouteGetJob:                {"getJob", http.MethodGet, "/jobs/:id"},
	RouteAgentHook:             {"agentHook", http.MethodPost, "/hooks/:agent"},
	RouteUIIndex:               {"uiIndex", http.MethodGet, "/"},
	RouteUILogin:               {"uiLogin", http.MethodGet, "/login"},
	RouteUILoginPost:           {"uiLoginPost", http.MethodPost, "/login"},
	RouteUIAsset:               {"uiAsset", http.MethodGet, "/assets/:name"},
	RouteUIMintCode:            {"uiMintCode", http.MethodPost, "/ui/codes"},
	RouteUILogout:              {"uiLogout", http.MethodPost, "/ui/logout"},
	RouteUIWorkspaceFile:       {"uiWorkspaceFile", http.MethodGet, "/ui/api/sessions/:id/file-changes/:record/workspace"},
}

// Method is the route's method.
func (r RouteID) Method() string { return Routes[r].Method }

// Pattern is the route's path pattern, as the server registers it.
func (r RouteID) Pattern() string { return Routes[r].Pattern }

// Params are the names of the route's parameters, in order.
func (r Route) Params() []string {
	var out []string
	for _, s := range strings.Split(r.Pattern, "/") {
		if name, ok := strings.CutPrefix(s, ":"); ok {
			out = append(out, name)
		}
	}
	return out
}

// Path is the route's path with params in place of its parameters, in
// order, each escaped as one segment. It panics when the count is not the
// route's: a call names the route it builds.
func (r RouteID) Path(params ...string) string {
	segs := strings.Split(Routes[r].Pattern, "/")
	n := 0
	for i, s := range segs {
		if strings.HasPrefix(s, ":") {
			if n < len(params) {
				segs[i] = url.PathEscape(params[n])
			}
			n++
		}
	}
	if n != len(params) {
		panic(fmt.Sprintf("api: route %s takes %d parameters, not %d", Routes[r].Name, n, len(params)))
	}
	return strings.Join(segs, "/")
}
