package api

import (
	"net/http"

	"github.com/prsm-dev/prsm"
)

// Code is the stable code of an error answer (ErrorBody.Code), for
// programs to tell errors apart; the message is for people. Every code
// the server, the engine or the CLI uses is declared once here, in
// Codes, with its status and its meaning: a test fails on a code written
// anywhere else, and docs/reference.md's table of errors and the
// TypeScript union ErrorCode are generated from Codes. It is prsm.Code,
// so that prsm.Error (the error the engine returns) carries the same type.
type Code = prsm.Code

// CodeInfo is one row of Codes.
type CodeInfo struct {
	Code Code
	// Status is the HTTP status of an answer with the code. A prsm.Error
	// takes its status from its sentinel (ErrNotFound, ...), which agrees
	// with the table but for the exceptions a code's meaning names.
	Status  int
	Meaning string
}

// Error codes, in the order of Codes.
const (
	CodeAlreadyRejected       Code = "already_rejected"
	CodeAmbiguousID           Code = "ambiguous_id"
	CodeAmbiguousIDPrefix     Code = "ambiguous_id_prefix"
	CodeAmbiguousName         Code = "ambiguous_name"
	CodeBadAddr               Code = "bad_addr"
	CodeBadBody               Code = "bad_body"
	CodeBadHookEvent          Code = "bad_hook_event"
	CodeBadJSON               Code = "bad_json"
	CodeBadParam              Code = "bad_param"
	CodeBadPath               Code = "bad_path"
	CodeBadSelector           Code = "bad_selector"
	CodeBadSide               Code = "bad_side"
	CodeBadTime               Code = "bad_time"
	CodeBusy                  Code = "busy"
	CodeChangeNotFound        Code = "change_not_found"
	CodeCheckpointNotFound    Code = "checkpoint_not_found"
	CodeConflict              Code = "conflict"
	CodeCSRF                  Code = "csrf"
	CodeFileChanged           Code = "file_changed"
	CodeForbiddenHost         Code = "forbidden_host"
	CodeForbiddenOrigin       Code = "forbidden_origin"
	CodeHookTokenScope        Code = "hook_token_scope"
	CodeHunkConflict          Code = "hunk_conflict"
	CodeHunkDecided           Code = "hunk_decided"
	CodeHunkTwice             Code = "hunk_twice"
	CodeInternal              Code = "internal"
	CodeInvalidAgentID        Code = "invalid_agent_id"
	CodeInvalidAnnotation     Code = "invalid_annotation"
	CodeInvalidDryRun         Code = "invalid_dry_run"
	CodeInvalidHow            Code = "invalid_how"
	CodeInvalidID             Code = "invalid_id"
	CodeInvalidInput          Code = "invalid_input"
	CodeInvalidMode           Code = "invalid_mode"
	CodeInvalidName           Code = "invalid_name"
	CodeInvalidPath           Code = "invalid_path"
	CodeInvalidRetention      Code = "invalid_retention"
	CodeInvalidStatus         Code = "invalid_status"
	CodeInvalidToolCallID     Code = "invalid_tool_call_id"
	CodeJobFailed             Code = "job_failed"
	CodeJobNotFound           Code = "job_not_found"
	CodeMarkersInFile         Code = "markers_in_file"
	CodeMethodNotAllowed      Code = "method_not_allowed"
	CodeMissingAnnotation     Code = "missing_annotation"
	CodeNameTaken             Code = "name_taken"
	CodeNeedsEarlier          Code = "needs_earlier"
	CodeNoActiveSession       Code = "no_active_session"
	CodeNoContent             Code = "no_content"
	CodeNoHunk                Code = "no_hunk"
	CodeNoHunks               Code = "no_hunks"
	CodeNoHunksNamed          Code = "no_hunks_named"
	CodeNoLoginFile           Code = "no_login_file"
	CodeNoPage                Code = "no_page"
	CodeNoReviewPage          Code = "no_review_page"
	CodeNotAFile              Code = "not_a_file"
	CodeNotFound              Code = "not_found"
	CodeNotInConflict         Code = "not_in_conflict"
	CodeNotText               Code = "not_text"
	CodeOneRecord             Code = "one_record"
	CodeParentIsFile          Code = "parent_is_file"
	CodeRecordNotFound        Code = "record_not_found"
	CodeRewound               Code = "rewound"
	CodeServerRunning         Code = "server_running"
	CodeSessionEnded          Code = "session_ended"
	CodeSessionNotFound       Code = "session_not_found"
	CodeSeveralRecords        Code = "several_records"
	CodeSeveralSessions       Code = "several_sessions"
	CodeSyncFailed            Code = "sync_failed"
	CodeTokenRequired         Code = "token_required"
	CodeTooLarge              Code = "too_large"
	CodeTooManyCheckpoints    Code = "too_many_checkpoints"
	CodeToolCallInFlight      Code = "tool_call_in_flight"
	CodeUnauthorized          Code = "unauthorized"
	CodeUnknownAgent          Code = "unknown_agent"
	CodeUnreviewedChanges     Code = "unreviewed_changes"
	CodeUnsupportedRepository Code = "unsupported_repository"
	CodeWorktreeConflict      Code = "worktree_conflict"
)

// Codes are every error code, sorted, each with its status and its meaning.
var Codes = []CodeInfo{
	{CodeAlreadyRejected, http.StatusConflict, "A rejected change cannot be accepted."},
	{CodeAmbiguousID, http.StatusBadRequest, "An id prefix names more than one session, checkpoint or change; give more characters."},
	{CodeAmbiguousIDPrefix, http.StatusBadRequest, "An id prefix names more than one object (the generic form of ambiguous_id)."},
	{CodeAmbiguousName, http.StatusBadRequest, "More than one checkpoint of the session has that name; give its id."},
	{CodeBadAddr, http.StatusBadRequest, "The address to listen on is not host:port on loopback."},
	{CodeBadBody, http.StatusBadRequest, "The request body could not be read."},
	{CodeBadHookEvent, http.StatusBadRequest, "An agent's hook event is not one prsm understands."},
	{CodeBadJSON, http.StatusBadRequest, "The request body is not one JSON value of the route's request type."},
	{CodeBadParam, http.StatusBadRequest, "A query parameter has a value the route does not take."},
	{CodeBadPath, http.StatusBadRequest, "A record's path is not a path inside the workspace."},
	{CodeBadSelector, http.StatusBadRequest, "A rollback names no selector, more than one, or a bad one."},
	{CodeBadSide, http.StatusBadRequest, "side= is neither before nor after."},
	{CodeBadTime, http.StatusBadRequest, "A time is not in RFC 3339 form."},
	{CodeBusy, http.StatusServiceUnavailable, "The store is locked by another process or a long transaction; send the same request again after Retry-After."},
	{CodeChangeNotFound, http.StatusNotFound, "No change of the session has that id (the CLI checks every id before it acts)."},
	{CodeCheckpointNotFound, http.StatusNotFound, "The session has no checkpoint with that id, id prefix or name."},
	{CodeConflict, http.StatusConflict, "The request conflicts with the state of the session (the generic form)."},
	{CodeCSRF, http.StatusForbidden, "A request of the review page that changes state lacks its CSRF header."},
	{CodeFileChanged, http.StatusConflict, "The file changed while prsm wrote it; nothing was done, try again."},
	{CodeForbiddenHost, http.StatusForbidden, "The Host header is not a loopback name on the server's port."},
	{CodeForbiddenOrigin, http.StatusForbidden, "The request comes from a page of another origin."},
	{CodeHookTokenScope, http.StatusForbidden, "A hook token only sends its own session's hook events."},
	{CodeHunkConflict, http.StatusConflict, "The hunk's lines were edited since; nothing was changed."},
	{CodeHunkDecided, http.StatusConflict, "The hunk was decided already."},
	{CodeHunkTwice, http.StatusBadRequest, "A hunk is both accepted and rejected in one request."},
	{CodeInternal, http.StatusInternalServerError, "The server failed; its log says why."},
	{CodeInvalidAgentID, http.StatusBadRequest, "The agent id is too long, not UTF-8, or holds a control character."},
	{CodeInvalidAnnotation, http.StatusBadRequest, "The annotation is too long, not UTF-8, or holds a control character."},
	{CodeInvalidDryRun, http.StatusBadRequest, "A hunk's decision has no dry run."},
	{CodeInvalidHow, http.StatusBadRequest, "A conflict is resolved with mine, agent or markers."},
	{CodeInvalidID, http.StatusBadRequest, "The id is empty."},
	{CodeInvalidInput, http.StatusBadRequest, "The request is not valid (the generic form)."},
	{CodeInvalidMode, http.StatusBadRequest, "A session's mode is auto or review."},
	{CodeInvalidName, http.StatusBadRequest, "The name is missing, too long, not UTF-8, or holds a control character."},
	{CodeInvalidPath, http.StatusBadRequest, "The path names no file inside the workspace."},
	{CodeInvalidRetention, http.StatusBadRequest, "A gc's retention limits must be positive."},
	{CodeInvalidStatus, http.StatusBadRequest, "The status filter names no status."},
	{CodeInvalidToolCallID, http.StatusBadRequest, "A tool call id is 1 to 128 letters, digits, '_', '-' or '.'."},
	{CodeJobFailed, http.StatusInternalServerError, "A job stopped on an error; what it decided stays decided (in a job's error only)."},
	{CodeJobNotFound, http.StatusNotFound, "No job has that id (a job is kept a while after it ends)."},
	{CodeMarkersInFile, http.StatusConflict, "The file still holds conflict markers."},
	{CodeMethodNotAllowed, http.StatusMethodNotAllowed, "The route does not take that method."},
	{CodeMissingAnnotation, http.StatusBadRequest, "The body needs an annotation field."},
	{CodeNameTaken, http.StatusConflict, "An active session already has that name."},
	{CodeNeedsEarlier, http.StatusConflict, "In review mode the accept would apply earlier pending changes of the file first; send with_earlier to take them."},
	{CodeNoActiveSession, http.StatusNotFound, "No session is active, and none was named."},
	{CodeNoContent, http.StatusNotFound, "The file does not exist on that side of the change."},
	{CodeNoHunk, http.StatusNotFound, "The change has no hunk with that index."},
	{CodeNoHunks, http.StatusConflict, "The change has no hunks (binary, symlink, mode-only or empty); decide it whole."},
	{CodeNoHunksNamed, http.StatusBadRequest, "A hunk decision names no hunk."},
	{CodeNoLoginFile, http.StatusConflict, "The running server cannot write login files (an older server)."},
	{CodeNoPage, http.StatusNotFound, "This prsm was built without the review page."},
	{CodeNoReviewPage, http.StatusConflict, "The running server serves no review page (an older server)."},
	{CodeNotAFile, http.StatusConflict, "The path is not a regular file in the workspace."},
	{CodeNotFound, http.StatusNotFound, "The route or the object does not exist."},
	{CodeNotInConflict, http.StatusConflict, "Only a change in conflict is resolved; accept or reject it instead."},
	{CodeNotText, http.StatusConflict, "Conflict markers need text on both sides."},
	{CodeOneRecord, http.StatusBadRequest, "The route needs one record id, not a tool call with several records."},
	{CodeParentIsFile, http.StatusConflict, "A change cannot come back while a file stands where its directory goes."},
	{CodeRecordNotFound, http.StatusNotFound, "The session has no change with that id or id prefix."},
	{CodeRewound, http.StatusConflict, "A rewound change is out of the worktree and the workspace; only a rewind brings it back."},
	{CodeServerRunning, http.StatusConflict, "A server already runs for this workspace."},
	{CodeSessionEnded, http.StatusConflict, "The session has ended (a hook token of an ended session gets 401)."},
	{CodeSessionNotFound, http.StatusNotFound, "No session has that id or id prefix."},
	{CodeSeveralRecords, http.StatusBadRequest, "The tool call changed several files; name one record."},
	{CodeSeveralSessions, http.StatusBadRequest, "No single active session has the change named (several sessions are active); name its session."},
	{CodeSyncFailed, http.StatusInternalServerError, "The change is recorded but could not be applied to the workspace; accept it to try again."},
	{CodeTokenRequired, http.StatusForbidden, "Only the server's token may do this."},
	{CodeTooLarge, http.StatusRequestEntityTooLarge, "The request body is over the limit (a content too large to keep gets 404)."},
	{CodeTooManyCheckpoints, http.StatusConflict, "The session has as many named checkpoints as it may keep."},
	{CodeToolCallInFlight, http.StatusConflict, "An agent's tool call is still running; try again when it ends."},
	{CodeUnauthorized, http.StatusUnauthorized, "The token is missing or wrong."},
	{CodeUnknownAgent, http.StatusNotFound, "The server has no http hooks for that agent."},
	{CodeUnreviewedChanges, http.StatusConflict, "The session has pending or unrecorded changes; review them or discard them."},
	{CodeUnsupportedRepository, http.StatusConflict, "A session cannot start in this repository."},
	{CodeWorktreeConflict, http.StatusConflict, "Later changes overlap the change to take out; rewind to a checkpoint instead."},
}

// codeInfo indexes Codes by code.
var codeInfo = func() map[Code]CodeInfo {
	m := make(map[Code]CodeInfo, len(Codes))
	for _, c := range Codes {
		m[c.Code] = c
	}
	return m
}()

// Lookup says what the table says of code c; false for a code it does
// not declare.
func Lookup(c Code) (CodeInfo, bool) {
	info, ok := codeInfo[c]
	return info, ok
}

// StatusOf is the HTTP status of an answer with code c: the table's, 500
// for a code it does not declare.
func StatusOf(c Code) int {
	if info, ok := codeInfo[c]; ok {
		return info.Status
	}
	return http.StatusInternalServerError
}
