package api

import (
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
	CodeBadLines              Code = "bad_lines"
	CodeBadParam              Code = "bad_param"
	CodeBadPath               Code = "bad_path"
	CodeBadRev                Code = "bad_rev"
	CodeBadSelector           Code = "bad_selector"
	CodeBadSide               Code = "bad_side"
	CodeBadTime               Code = "bad_time"
	CodeBinaryFile            Code = "binary_file"
	CodeBusy                  Code = "busy"
	CodeChangeNotFound        Code = "change_not_found"
	CodeCheckpointNotFound    Code = "checkpoint_not_found"
	CodeCommitFailed          Code = "commit_failed"
	CodeConflict              Code = "conflict"
	CodeCSRF                  Code = "csrf"
	CodeDetachedHead          Code = "detached_head"
	CodeFileChanged           Code = "file_changed"
	CodeForbiddenHost         Code = "forbidden_host"
	CodeForbiddenOrigin       Code = "forbidden_origin"
	CodeGitInProgress         Code = "git_in_progress"
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
	CodeNoteTooLarge          Code = "note_too_large"
	CodeNothingToCommit       Code = "nothing_to_commit"
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
	{CodeAlreadyRejected, statusConflict, "A rejected change cannot be accepted."},
	{CodeAmbiguousID, statusBadRequest, "An id prefix names more than one session, checkpoint or change; give more characters."},
	{CodeAmbiguousIDPrefix, statusBadRequest, "An id prefix names more than one object (the generic form of ambiguous_id)."},
	{CodeAmbiguousName, statusBadRequest, "More than one checkpoint of the session has that name; give its id."},
	{CodeBadAddr, statusBadRequest, "The address to listen on is not host:port on loopback."},
	{CodeBadBody, statusBadRequest, "The request body could not be read."},
	{CodeBadHookEvent, statusBadRequest, "An agent's hook event is not one prsm understands."},
	{CodeBadJSON, statusBadRequest, "The request body is not one JSON value of the route's request type."},
	{CodeBadLines, statusBadRequest, "A comment's lines are not N or N-M within the change's new side (from 1)."},
	{CodeBadParam, statusBadRequest, "A query parameter has a value the route does not take."},
	{CodeBadPath, statusBadRequest, "A record's path is not a path inside the workspace."},
	{CodeBadRev, statusBadRequest, "The revision names no commit."},
	{CodeBadSelector, statusBadRequest, "A rollback names no selector, more than one, or a bad one."},
	{CodeBadSide, statusBadRequest, "side= is neither before nor after."},
	{CodeBadTime, statusBadRequest, "A time is not in RFC 3339 form."},
	{CodeBinaryFile, statusConflict, "The file is binary: it has no lines to blame."},
	{CodeBusy, statusServiceUnavailable, "The store is locked by another process or a long transaction; send the same request again after Retry-After."},
	{CodeChangeNotFound, statusNotFound, "No change of the session has that id (the CLI checks every id before it acts)."},
	{CodeCheckpointNotFound, statusNotFound, "The session has no checkpoint with that id, id prefix or name."},
	{CodeCommitFailed, statusConflict, "git commit failed (a commit hook refused, say): nothing was committed and the index is as it was."},
	{CodeConflict, statusConflict, "The request conflicts with the state of the session (the generic form)."},
	{CodeCSRF, statusForbidden, "A request of the review page that changes state lacks its CSRF header."},
	{CodeDetachedHead, statusConflict, "HEAD is detached: prsm commit commits only on a branch."},
	{CodeFileChanged, statusConflict, "The file changed while prsm wrote it; nothing was done, try again."},
	{CodeForbiddenHost, statusForbidden, "The Host header is not a loopback name on the server's port."},
	{CodeForbiddenOrigin, statusForbidden, "The request comes from a page of another origin."},
	{CodeGitInProgress, statusConflict, "A merge, rebase, cherry-pick or revert is in progress in the workspace: finish or abort it first."},
	{CodeHookTokenScope, statusForbidden, "A hook token only sends its own session's hook events."},
	{CodeHunkConflict, statusConflict, "The hunk's lines were edited since; nothing was changed."},
	{CodeHunkDecided, statusConflict, "The hunk was decided already."},
	{CodeHunkTwice, statusBadRequest, "A hunk is both accepted and rejected in one request."},
	{CodeInternal, statusInternalServerError, "The server failed; its log says why."},
	{CodeInvalidAgentID, statusBadRequest, "The agent id is too long, not UTF-8, or holds a control character."},
	{CodeInvalidAnnotation, statusBadRequest, "The annotation is too long, not UTF-8, or holds a control character."},
	{CodeInvalidDryRun, statusBadRequest, "A hunk's decision has no dry run."},
	{CodeInvalidHow, statusBadRequest, "A conflict is resolved with mine, agent or markers."},
	{CodeInvalidID, statusBadRequest, "The id is empty."},
	{CodeInvalidInput, statusBadRequest, "The request is not valid (the generic form)."},
	{CodeInvalidMode, statusBadRequest, "A session's mode is auto or review."},
	{CodeInvalidName, statusBadRequest, "The name is missing, too long, not UTF-8, or holds a control character."},
	{CodeInvalidPath, statusBadRequest, "The path names no file inside the workspace."},
	{CodeInvalidRetention, statusBadRequest, "A gc's retention limits must be positive."},
	{CodeInvalidStatus, statusBadRequest, "The status filter names no status."},
	{CodeInvalidToolCallID, statusBadRequest, "A tool call id is 1 to 128 letters, digits, '_', '-' or '.'."},
	{CodeJobFailed, statusInternalServerError, "A job stopped on an error; what it decided stays decided (in a job's error only)."},
	{CodeJobNotFound, statusNotFound, "No job has that id (a job is kept a while after it ends)."},
	{CodeMarkersInFile, statusConflict, "The file still holds conflict markers."},
	{CodeMethodNotAllowed, statusMethodNotAllowed, "The route does not take that method."},
	{CodeMissingAnnotation, statusBadRequest, "The body needs an annotation field."},
	{CodeNameTaken, statusConflict, "An active session already has that name."},
	{CodeNeedsEarlier, statusConflict, "In review mode the accept would apply earlier pending changes of the file first; send with_earlier to take them."},
	{CodeNoActiveSession, statusNotFound, "No session is active, and none was named."},
	{CodeNoContent, statusNotFound, "The file does not exist on that side of the change."},
	{CodeNoHunk, statusNotFound, "The change has no hunk with that index."},
	{CodeNoHunks, statusConflict, "The change has no hunks (binary, symlink, mode-only or empty); decide it whole."},
	{CodeNoHunksNamed, statusBadRequest, "A hunk decision names no hunk."},
	{CodeNoLoginFile, statusConflict, "The running server cannot write login files (an older server)."},
	{CodeNoPage, statusNotFound, "This prsm was built without the review page."},
	{CodeNoReviewPage, statusConflict, "The running server serves no review page (an older server)."},
	{CodeNotAFile, statusConflict, "The path is not a regular file in the workspace."},
	{CodeNotFound, statusNotFound, "The route or the object does not exist."},
	{CodeNotInConflict, statusConflict, "Only a change in conflict is resolved; accept or reject it instead."},
	{CodeNotText, statusConflict, "Conflict markers need text on both sides."},
	{CodeNoteTooLarge, statusRequestEntityTooLarge, "A note or a comment is over 16 KiB (api.MaxNote)."},
	{CodeNothingToCommit, statusConflict, "No accepted, uncommitted change matches what prsm commit was asked to commit."},
	{CodeOneRecord, statusBadRequest, "The route needs one record id, not a tool call with several records."},
	{CodeParentIsFile, statusConflict, "A change cannot come back while a file stands where its directory goes."},
	{CodeRecordNotFound, statusNotFound, "The session has no change with that id or id prefix."},
	{CodeRewound, statusConflict, "A rewound change is out of the worktree and the workspace; only a rewind brings it back."},
	{CodeServerRunning, statusConflict, "A server already runs for this workspace."},
	{CodeSessionEnded, statusConflict, "The session has ended (a hook token of an ended session gets 401)."},
	{CodeSessionNotFound, statusNotFound, "No session has that id or id prefix."},
	{CodeSeveralRecords, statusBadRequest, "The tool call changed several files; name one record."},
	{CodeSeveralSessions, statusBadRequest, "No single active session has the change named (several sessions are active); name its session."},
	{CodeSyncFailed, statusInternalServerError, "The change is recorded but could not be applied to the workspace; accept it to try again."},
	{CodeTokenRequired, statusForbidden, "Only the server's token may do this."},
	{CodeTooLarge, statusRequestEntityTooLarge, "The request body is over the limit (a content too large to keep gets 404)."},
	{CodeTooManyCheckpoints, statusConflict, "The session has as many named checkpoints as it may keep."},
	{CodeToolCallInFlight, statusConflict, "An agent's tool call is still running; try again when it ends."},
	{CodeUnauthorized, statusUnauthorized, "The token is missing or wrong."},
	{CodeUnknownAgent, statusNotFound, "The server has no http hooks for that agent."},
	{CodeUnreviewedChanges, statusConflict, "The session has pending or unrecorded changes; review them or discard them."},
	{CodeUnsupportedRepository, statusConflict, "A session cannot start in this repository."},
	{CodeWorktreeConflict, statusConflict, "Later changes overlap the change to take out; rewind to a checkpoint instead."},
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
	return statusInternalServerError
}
