package api

import (
	"fmt"
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
	RouteListFeedback
	RouteChangeFeedback
	RouteComment
	RouteTakeFeedback
	RouteConfirmFeedback
	RouteBlame
	RouteCommit
	RouteTraceShow
	RouteTraceExport
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
// index, agent an agent's name, name an asset's file name, rev a commit
// (anything git rev-parse takes).
type Route struct {
	Name    string
	Method  string
	Pattern string
}

// Routes are every route, indexed by RouteID: each route is declared
// here once.
var Routes = [numRoutes]Route{
	RouteHealthz:               {"healthz", methodGet, "/healthz"},
	RouteEvents:                {"events", methodGet, "/events"},
	RouteStatus:                {"status", methodGet, "/status"},
	RouteShutdown:              {"shutdown", methodPost, "/shutdown"},
	RouteListSessions:          {"listSessions", methodGet, "/sessions"},
	RouteStartSession:          {"startSession", methodPost, "/sessions"},
	RouteGetSession:            {"getSession", methodGet, "/sessions/:id"},
	RouteEndSession:            {"endSession", methodDelete, "/sessions/:id"},
	RouteStartToolCall:         {"startToolCall", methodPost, "/sessions/:id/tool-calls"},
	RouteCompleteToolCall:      {"completeToolCall", methodPost, "/sessions/:id/tool-calls/:call/complete"},
	RouteListChanges:           {"listChanges", methodGet, "/sessions/:id/file-changes"},
	RouteAcceptAll:             {"acceptAll", methodPost, "/sessions/:id/file-changes/accept-all"},
	RouteRejectAll:             {"rejectAll", methodPost, "/sessions/:id/file-changes/reject-all"},
	RouteGetChange:             {"getChange", methodGet, "/sessions/:id/file-changes/:record"},
	RouteChangeDiff:            {"changeDiff", methodGet, "/sessions/:id/file-changes/:record/diff"},
	RouteChangeContent:         {"changeContent", methodGet, "/sessions/:id/file-changes/:record/content"},
	RouteAccept:                {"accept", methodPost, "/sessions/:id/file-changes/:record/accept"},
	RouteReject:                {"reject", methodPost, "/sessions/:id/file-changes/:record/reject"},
	RouteResolve:               {"resolve", methodPost, "/sessions/:id/file-changes/:record/resolve"},
	RouteDecideHunks:           {"decideHunks", methodPost, "/sessions/:id/file-changes/:record/hunks"},
	RouteAcceptHunk:            {"acceptHunk", methodPost, "/sessions/:id/file-changes/:record/hunks/:n/accept"},
	RouteRejectHunk:            {"rejectHunk", methodPost, "/sessions/:id/file-changes/:record/hunks/:n/reject"},
	RouteTurn:                  {"turn", methodPost, "/sessions/:id/turns"},
	RouteFlush:                 {"flush", methodPost, "/sessions/:id/flush"},
	RouteTurnEnd:               {"turnEnd", methodPost, "/sessions/:id/turn-end"},
	RouteMintHookToken:         {"mintHookToken", methodPost, "/sessions/:id/hook-tokens"},
	RouteListCheckpoints:       {"listCheckpoints", methodGet, "/sessions/:id/checkpoints"},
	RouteCreateCheckpoint:      {"createCheckpoint", methodPost, "/sessions/:id/checkpoints"},
	RouteGetCheckpoint:         {"getCheckpoint", methodGet, "/sessions/:id/checkpoints/:cid"},
	RouteAnnotateCheckpoint:    {"annotateCheckpoint", methodPut, "/sessions/:id/checkpoints/:cid"},
	RouteDeleteCheckpoint:      {"deleteCheckpoint", methodDelete, "/sessions/:id/checkpoints/:cid"},
	RouteCheckpointDiff:        {"checkpointDiff", methodGet, "/sessions/:id/checkpoints/:cid/diff"},
	RouteCheckpointDiffBetween: {"checkpointDiffBetween", methodGet, "/sessions/:id/checkpoints/:cid/diff/:other"},
	RouteRewindPreview:         {"rewindPreview", methodGet, "/sessions/:id/checkpoints/:cid/rewind/preview"},
	RouteRewind:                {"rewind", methodPost, "/sessions/:id/checkpoints/:cid/rewind"},
	RouteRollback:              {"rollback", methodPost, "/sessions/:id/rollback"},
	RouteGC:                    {"gc", methodPost, "/gc"},
	RouteAcceptEverywhere:      {"acceptEverywhere", methodPost, "/file-changes/accept-all"},
	RouteRejectEverywhere:      {"rejectEverywhere", methodPost, "/file-changes/reject-all"},
	RouteGetJob:                {"getJob", methodGet, "/jobs/:id"},
	RouteListFeedback:          {"listFeedback", methodGet, "/sessions/:id/feedback"},
	RouteChangeFeedback:        {"changeFeedback", methodGet, "/sessions/:id/file-changes/:record/feedback"},
	RouteComment:               {"comment", methodPost, "/sessions/:id/file-changes/:record/comments"},
	RouteTakeFeedback:          {"takeFeedback", methodPost, "/sessions/:id/feedback/take"},
	RouteConfirmFeedback:       {"confirmFeedback", methodPost, "/sessions/:id/feedback/confirm"},
	RouteBlame:                 {"blame", methodGet, "/blame"},
	RouteCommit:                {"commit", methodPost, "/commits"},
	RouteTraceShow:             {"traceShow", methodGet, "/traces/:rev"},
	RouteTraceExport:           {"traceExport", methodGet, "/sessions/:id/trace"},
	RouteAgentHook:             {"agentHook", methodPost, "/hooks/:agent"},
	RouteUIIndex:               {"uiIndex", methodGet, "/"},
	RouteUILogin:               {"uiLogin", methodGet, "/login"},
	RouteUILoginPost:           {"uiLoginPost", methodPost, "/login"},
	RouteUIAsset:               {"uiAsset", methodGet, "/assets/:name"},
	RouteUIMintCode:            {"uiMintCode", methodPost, "/ui/codes"},
	RouteUILogout:              {"uiLogout", methodPost, "/ui/logout"},
	RouteUIWorkspaceFile:       {"uiWorkspaceFile", methodGet, "/ui/api/sessions/:id/file-changes/:record/workspace"},
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
