package api

import "time"

// Blame is the answer of GET /blame?path=FILE[&start=A&end=B]: who wrote
// each line of a workspace file (issue 47). Lines holds the file's lines
// (those from start to end, 1-based and inclusive, when they are given);
// each names its origin by index into Origins, or -1 for "you": a line
// that no record and no trace note explains.
type Blame struct {
	Path    string        `json:"path"`
	Lines   []BlameLine   `json:"lines"`
	Origins []BlameOrigin `json:"origins"`
	// Warnings name what blame skipped: a trace note it could not read,
	// say.
	Warnings []string `json:"warnings,omitempty"`
}

// BlameLine is one line of a blamed file.
type BlameLine struct {
	Line   int    `json:"line"` // 1-based, in the workspace file
	Text   string `json:"text"` // the line, without its line break
	Origin int    `json:"origin"`
}

// Origin sources: a line explained by a record of prsm's store, or by the
// Agent Trace note of the commit that holds it (refs/notes/agent-trace).
const (
	OriginRecord = "record"
	OriginNote   = "note"
)

// BlameOrigin is the tool call that wrote some lines: its agent, session,
// turn and prompt, and what became of its change.
type BlameOrigin struct {
	Source     string    `json:"source"` // OriginRecord or OriginNote
	SessionID  string    `json:"session_id"`
	AgentID    string    `json:"agent_id"`
	RecordID   string    `json:"record_id,omitempty"`
	ToolName   string    `json:"tool_name"`
	ToolCallID string    `json:"tool_call_id"`
	Turn       int       `json:"turn"`
	Prompt     string    `json:"prompt"`
	Time       time.Time `json:"time"`
	// Status is the record's review state (pending, accepted, partial),
	// or "committed" for a line a trace note explains.
	Status string `json:"status"`
	// Commit is the commit that holds the lines, once prsm commit made
	// it.
	Commit  string `json:"commit,omitempty"`
	ModelID string `json:"model_id,omitempty"`
}
