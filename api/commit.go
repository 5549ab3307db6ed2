package api

import "encoding/json"

// CommitRequest is the body of POST /commits (prsm commit, issue 47):
// turn the accepted work into commits on the user's current branch, one
// a turn, or one a session with Squash. Session, Turn and Files narrow
// what goes in; all of the workspace's accepted, uncommitted work when
// they are empty. IncludeMine commits the files' workspace bytes, the
// user's own uncommitted edits included; otherwise only the agents'
// accepted lines go in. DryRun makes nothing and answers the plan.
// Messages, when given, replace the planned messages in order (prsm
// commit --edit).
type CommitRequest struct {
	Session     string   `json:"session,omitempty"`
	Turn        int      `json:"turn,omitempty"`
	Files       []string `json:"files,omitempty"`
	Squash      bool     `json:"squash,omitempty"`
	IncludeMine bool     `json:"include_mine,omitempty"`
	DryRun      bool     `json:"dry_run,omitempty"`
	Messages    []string `json:"messages,omitempty"`
}

// CommitReport is the answer of POST /commits: the commits made (or, for
// a dry run, planned) in order, and what was left out and why.
type CommitReport struct {
	Commits []PlannedCommit `json:"commits"`
	LeftOut []LeftOut       `json:"left_out,omitempty"`
}

// PlannedCommit is one commit of prsm commit.
type PlannedCommit struct {
	Commit    string   `json:"commit,omitempty"` // "" in a dry run
	SessionID string   `json:"session_id"`
	AgentID   string   `json:"agent_id"`
	Turns     []int    `json:"turns"`
	Message   string   `json:"message"`
	Files     []string `json:"files"`
	Records   []string `json:"records"`
}

// LeftOut is a change prsm commit did not commit, and why: it is pending,
// in conflict, rejected in part, or does not apply to HEAD.
type LeftOut struct {
	SessionID string `json:"session_id"`
	RecordID  string `json:"record_id"`
	Path      string `json:"path"`
	Reason    string `json:"reason"`
}

// TraceMediaType is the media type of an Agent Trace record.
const TraceMediaType = "application/vnd.agent-trace.record+json"

// Traces is the answer of GET /traces/{rev} (the Agent Trace records of
// a commit's note) and of GET /sessions/{id}/trace (a session's
// uncommitted work as Agent Trace records): each record is the spec's
// JSON (github.com/cursor/agent-trace, v0.1.0) as is.
type Traces struct {
	Records []json.RawMessage `json:"records"`
}
