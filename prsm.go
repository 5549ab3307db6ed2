// Package prsm holds the domain types that every part of prsm shares: sessions,
// tool calls, records and their hunks, checkpoints, the line ranges of a
// change, the canonical tool names (toolnames.go) and the words for people
// (words.go). Their JSON field names are the product contract of
// docs/SPEC.md and must not change;
// the packages below (store, worktree, tracker, sync, server) implement the
// behaviour around them.
package prsm

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"
)

// Version is the prsm version written into server.json and shown by `prsm status`.
// Commit and Date are the commit a release was built from and that commit's
// date (RFC 3339, UTC): `make release` stamps all three with -ldflags -X
// (internal/release); a plain `go build` leaves Commit and Date empty and
// BuildInfo reads them from the Go toolchain's VCS stamp when it has one.
var (
	Version = "0.1.0-dev"
	Commit  = ""
	Date    = ""
)

// BuildInfo is the version line's tail after "version ": Version, then
// the commit and its date ("0.2.0 (commit 4f2fff7c, 2026-05-01T10:00:00Z)"),
// "unknown" for what the binary does not know.
func BuildInfo() string {
	commit, date := Commit, Date
	if commit == "" || date == "" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			var rev, at, dirty string
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.time":
					at = s.Value
				case "vcs.modified":
					if s.Value == "true" {
						dirty = "-dirty"
					}
				}
			}
			if commit == "" && rev != "" {
				commit = rev[:min(12, len(rev))] + dirty
			}
			if date == "" {
				date = at
			}
		}
	}
	if commit == "" {
		commit = "unknown"
	}
	if date == "" {
		date = "date unknown"
	}
	return fmt.Sprintf("%s (commit %s, %s)", Version, commit, date)
}

// Session modes and statuses.
const (
	ModeAuto   = "auto"
	ModeReview = "review"

	SessionActive = "active"
	SessionEnded  = "ended"
)

// Record change types, statuses and sync states.
const (
	ChangeCreate = "create"
	ChangeModify = "modify"
	ChangeDelete = "delete"

	StatusPending  = "pending"
	StatusAccepted = "accepted"
	StatusRejected = "rejected"
	// StatusPartial is a record whose hunks were decided differently:
	// some accepted, some rejected.
	StatusPartial = "partial"
	// StatusRewound is a record made after the checkpoint a rewind went
	// back to: its change is out of the worktree and the workspace, it is
	// not pending, and a rewind to a later checkpoint brings it back.
	StatusRewound = "rewound"

	SyncSynced        = "synced"
	SyncConflict      = "conflict"
	SyncPendingReview = "pending_review"
)

// Checkpoint kinds.
const (
	CheckpointAuto   = "auto"
	CheckpointManual = "manual"
)

// Session is one agent run with its own worktree and branch prsm/<id>.
type Session struct {
	ID           string     `json:"id"`
	Name         string     `json:"name"`
	AgentID      string     `json:"agent_id"`
	Mode         string     `json:"mode"`
	Status       string     `json:"status"`
	WorktreePath string     `json:"worktree_path"`
	Branch       string     `json:"branch"`
	BaseCommit   string     `json:"base_commit"`
	CreatedAt    time.Time  `json:"created_at"`
	EndedAt      *time.Time `json:"ended_at"`
	PendingCount int        `json:"pending_count"`
	// Note says what prsm did on its own: why it ended the session (its
	// worktree was deleted by hand), or, while it runs, what it refused
	// the agent (a rewritten .git file put back, a git directory left
	// unrecorded); empty otherwise.
	Note string `json:"note,omitempty"`
}

// ToolCall is one agent action, captured before it runs (pre-tool capture) and
// completed after it ran.
type ToolCall struct {
	SessionID    string     `json:"session_id"`
	ID           string     `json:"tool_call_id"`
	ToolName     string     `json:"tool_name"`
	Args         []byte     `json:"-"` // raw JSON of the tool's arguments
	AgentID      string     `json:"agent_id"`
	Cwd          string     `json:"cwd"`
	MessageIndex int        `json:"message_index"`
	Snapshot     []byte     `json:"-"` // tracker-owned encoding of the pre-tool hashes
	Result       []byte     `json:"-"`
	StartedAt    time.Time  `json:"started_at"`
	CompletedAt  *time.Time `json:"completed_at,omitempty"`
}

// Hunk is one block of changed lines of a text record: the lines
// old_start.. (old_lines of them) of the old content became new_start..
// (new_lines) of the new one. The numbers are those of the block's @@
// header in a unified diff without context (`git diff -U0`): 1-based, and
// a side with no lines names the line before the block (0 at the top).
// Blocks are separated by at least one unchanged line.
type Hunk struct {
	Index    int    `json:"index"`
	OldStart int    `json:"old_start"`
	OldLines int    `json:"old_lines"`
	NewStart int    `json:"new_start"`
	NewLines int    `json:"new_lines"`
	Status   string `json:"status"`
	// RejectedAt is when a decision of this hunk alone rejected it (the
	// store keeps it; a rewind needs it).
	RejectedAt time.Time `json:"-"`
}

// HunkStatus is the status a hunk shows whose own decision is own (""
// for none) in a record with status status: the record's, for a record
// decided whole (accepted or rejected); its own (pending when none) in a
// pending or partial one.
func HunkStatus(status, own string) string {
	switch {
	case status == StatusAccepted || status == StatusRejected:
		return status
	case own == "":
		return StatusPending
	}
	return own
}

// Range is a 1-based, inclusive span of lines.
type Range struct {
	StartLine int `json:"startLine"`
	EndLine   int `json:"endLine"`
}

// Record is one file changed by one tool call (FileChangeRecord in SPEC.md).
// Contents are kept in the blob store; the *Hash fields name them there and the
// content fields are filled only where a response carries them.
type Record struct {
	ID             string    `json:"id"`
	SessionID      string    `json:"session_id"`
	FilePath       string    `json:"file_path"`
	RelPath        string    `json:"rel_path"`
	AgentID        string    `json:"agent_id"`
	ChangeType     string    `json:"change_type"`
	ToolCallID     string    `json:"tool_call_id"`
	ToolName       string    `json:"tool_name"`
	MessageIndex   int       `json:"message_index"`
	OldContent     *string   `json:"old_content"`
	NewContent     *string   `json:"new_content"`
	PreToolContent *string   `json:"pre_tool_content"`
	AddedRanges    []Range   `json:"added_ranges"`
	RemovedRanges  []Range   `json:"removed_ranges"`
	Timestamp      time.Time `json:"timestamp"`
	Status         string    `json:"status"`
	SyncState      string    `json:"sync_state"`
	Binary         bool      `json:"binary"`
	ModeBefore     uint32    `json:"mode_before"`
	ModeAfter      uint32    `json:"mode_after"`
	SizeBefore     int64     `json:"size_before"`
	SizeAfter      int64     `json:"size_after"`
	// Note says what a user should know of the record that its other
	// fields do not: a side over the size limit, kept as a size and a
	// hash with no copy of its content.
	Note string `json:"note,omitempty"`
	// Summary says in one line what the change is, for a list row: the
	// shell command of a shell tool call, else the first changed line.
	Summary string `json:"summary,omitempty"`
	// Hunks are the change's blocks of lines, in file order: text records
	// only (none for binary, symlink and mode-only records).
	Hunks []Hunk `json:"hunks"`
	// Commit is the commit prsm commit made of the record's accepted
	// lines; "" until then.
	Commit string `json:"commit,omitempty"`

	// Seq orders records of a session (insertion order).
	Seq int64 `json:"-"`
	// RejectedAt is when a user's reject (or its cascade) took the
	// record's change out of the worktree. Zero: not rejected that way (a
	// rollback's rejects set none), or rejected before prsm kept it.
	RejectedAt time.Time `json:"-"`
	// OldHash, NewHash and PreToolHash name the contents in the blob store;
	// empty means the file did not exist on that side.
	OldHash     string `json:"-"`
	NewHash     string `json:"-"`
	PreToolHash string `json:"-"`
}

// MarshalJSON writes the record with tool_call_id as SPEC.md has it: the
// record's own id, which is the tool call's id with a :N suffix for a
// call that changed several files (and reconcile-<session8>-N for a
// reconciled change). The call a record belongs to is CallOf of it.
// added_ranges, removed_ranges and hunks are [] when empty, never null,
// as the store reads them back.
func (r Record) MarshalJSON() ([]byte, error) {
	type plain Record
	p := plain(r)
	if p.ID != "" {
		p.ToolCallID = p.ID
	}
	if p.AddedRanges == nil {
		p.AddedRanges = []Range{}
	}
	if p.RemovedRanges == nil {
		p.RemovedRanges = []Range{}
	}
	// A record decided whole (accepted or rejected) shows each hunk so;
	// a pending or partial one shows the hunks' own decisions.
	hunks := make([]Hunk, len(p.Hunks))
	for i, h := range p.Hunks {
		h.Status = HunkStatus(p.Status, h.Status)
		hunks[i] = h
	}
	p.Hunks = hunks
	return json.Marshal(p)
}

// UnmarshalJSON reads a record MarshalJSON wrote: ToolCallID is the tool
// call's id again (CallOf).
func (r *Record) UnmarshalJSON(b []byte) error {
	type plain Record
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*r = Record(p)
	r.ToolCallID = CallOf(r.ToolCallID)
	return nil
}

// CallOf is the id of the tool call that a record's tool_call_id (or
// id) names: without its :N suffix.
func CallOf(toolCallID string) string {
	i := strings.LastIndexByte(toolCallID, ':')
	if i <= 0 || i == len(toolCallID)-1 {
		return toolCallID
	}
	for _, c := range toolCallID[i+1:] {
		if c < '0' || c > '9' {
			return toolCallID
		}
	}
	return toolCallID[:i]
}

// ChangesPrefixed are the changes among recs whose id starts with prefix,
// as a user names a change by a prefix of its id: the ids of tool calls
// first (a call stands for all of its records), then those of records
// whose call did not match; each once, in the order of recs.
func ChangesPrefixed(recs []*Record, prefix string) []string {
	var matches []string
	seen := map[string]bool{}
	for _, r := range recs {
		if strings.HasPrefix(r.ToolCallID, prefix) && !seen[r.ToolCallID] {
			seen[r.ToolCallID] = true
			matches = append(matches, r.ToolCallID)
		}
	}
	for _, r := range recs {
		if strings.HasPrefix(r.ID, prefix) && !seen[r.ToolCallID] && !seen[r.ID] {
			seen[r.ID] = true
			matches = append(matches, r.ID)
		}
	}
	return matches
}

// MaxToolCallID is the longest tool call id, in bytes.
const MaxToolCallID = 128

// ValidToolCallID reports whether id is a tool call id the server takes:
// 1 to MaxToolCallID letters, digits, '_', '-' or '.', and not dots
// alone ("." and ".." would be collapsed out of the URLs that name its
// records). A loop, not a regexp: `[...]{1,128}` compiled into 128 copies
// of its class cost every start of the binary (each hook event is one)
// half a millisecond and 1700 allocations, and every match a walk of
// them.
func ValidToolCallID(id string) bool {
	if len(id) == 0 || len(id) > MaxToolCallID {
		return false
	}
	dots := 0
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
		case c == '.':
			dots++
		default:
			return false
		}
	}
	return dots < len(id)
}

// Checkpoint is the whole worktree state at a moment.
type Checkpoint struct {
	ID           string    `json:"id"`
	SessionID    string    `json:"session_id"`
	Kind         string    `json:"kind"`
	Name         string    `json:"name"`
	Annotation   string    `json:"annotation"`
	MessageIndex int       `json:"message_index"`
	ToolCallID   string    `json:"tool_call_id"`
	Tree         string    `json:"tree"`
	Commit       string    `json:"-"`
	CreatedAt    time.Time `json:"created_at"`
	// FilesChanged counts the files that differ from the checkpoint before.
	FilesChanged int `json:"files_changed"`
	// RecordSeq is the newest record (of any session) when the checkpoint
	// was made: its session's records with a greater seq came after it.
	RecordSeq int64 `json:"-"`
	// DecisionSeq is the newest entry of the records' review history
	// when the checkpoint was made: a record's state at the checkpoint is
	// the one its first later entry kept (its state now when none).
	DecisionSeq int64 `json:"-"`
}

// Sentinel errors shared by every layer; the server maps them to HTTP statuses
// and the CLI to exit codes.
var (
	ErrNotFound  = errors.New("not found")
	ErrAmbiguous = errors.New("ambiguous id prefix")
	ErrConflict  = errors.New("conflict")
	ErrInvalid   = errors.New("invalid input")
)

// Home returns PRSM_HOME, or ~/.prsm when it is unset.
func Home() (string, error) {
	if h := os.Getenv("PRSM_HOME"); h != "" {
		return filepath.Abs(h)
	}
	u, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("cannot find the home directory; set PRSM_HOME")
	}
	return filepath.Join(u, ".prsm"), nil
}

// ProjectDir is the directory that holds one workspace's database, server.json
// and session worktrees.
func ProjectDir(home, identity string) string {
	return filepath.Join(home, "projects", identity)
}

// Code is the stable code of an error, for programs (api.Code, where
// every code is declared with its status and its meaning).
type Code string

// Error is an error the user can act on: a stable code for programs, a
// message, and an optional hint that says what to do. Err is one of the
// sentinels above and decides the HTTP status and the exit code.
type Error struct {
	Err  error
	Code Code
	Msg  string
	Hint string
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the sentinel the error is a kind of.
func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error of the given kind and code. code is a string,
// not a Code, so that a code built from a field's name ("invalid_"+field)
// needs no conversion; it must still be one api.Codes declares.
func Errorf(kind error, code, hint, format string, args ...any) *Error {
	return &Error{Err: kind, Code: Code(code), Hint: hint, Msg: fmt.Sprintf(format, args...)}
}
