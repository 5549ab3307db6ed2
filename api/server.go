package api

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prsm-dev/prsm"
)

// DefaultBodyLimit bounds request bodies; larger ones get 413. Tool
// arguments (a Write's content) are the largest bodies prsm receives, and
// the hook adapters read no larger an event. It is here, not in server,
// so that the lean hook binary knows it without linking the server.
const DefaultBodyLimit = 64 << 20

// InfoFile is the name of the file in the project dir that says where the
// server listens: an Info.
const InfoFile = "server.json"

// ReadInfo reads server.json from projectDir.
func ReadInfo(projectDir string) (*Info, error) {
	b, err := os.ReadFile(filepath.Join(projectDir, InfoFile))
	if err != nil {
		return nil, err
	}
	var info Info
	if err := json.Unmarshal(b, &info); err != nil {
		return nil, fmt.Errorf("read %s: %w", InfoFile, err)
	}
	return &info, nil
}

// Info is the content of server.json: where a workspace's server listens,
// and the token its clients send.
type Info struct {
	PID       int    `json:"pid"`
	Addr      string `json:"addr"`
	Token     string `json:"token"`
	Workspace string `json:"workspace"`
	Version   string `json:"version"`
}

// HookTokenEnv is the environment variable that carries a session's hook
// token into an agent's environment (`prsm run`): the agent's hooks send
// it, and it never holds the server's own token.
const HookTokenEnv = "PRSM_HOOK_TOKEN"

// HookToken is the answer of POST /sessions/{id}/hook-tokens: a new token
// that authorizes only the hook routes of that one session (POST
// /hooks/{agent} for events of its worktree, and POST
// /sessions/{id}/tool-calls, .../complete, .../turns and .../turn-end)
// while the session is active.
type HookToken struct {
	Token     string `json:"token"`
	SessionID string `json:"session_id"`
}

// Health is the answer of GET /healthz, the one route without a token.
type Health struct {
	OK      bool   `json:"ok"`
	Version string `json:"version"`
}

// OK is the answer of a request that has nothing else to say (POST
// /shutdown, POST /ui/logout).
type OK struct {
	OK bool `json:"ok"`
}

// ErrorBody is the JSON shape of every error answer.
type ErrorBody struct {
	Error string `json:"error"`
	Code  Code   `json:"code"`
	Hint  string `json:"hint,omitempty"`
}

// StatusResponse is the answer of GET /status.
type StatusResponse struct {
	Workspace      string `json:"workspace"`
	Identity       string `json:"identity"`
	Addr           string `json:"addr"`
	PID            int    `json:"pid"`
	Version        string `json:"version"`
	ActiveSessions int    `json:"active_sessions"`
	EndedSessions  int    `json:"ended_sessions"`
	PendingCount   int    `json:"pending_count"`
	// ConflictCount is how many of the pending changes are in conflict
	// with the user's edits; Conflicts names the first of them
	// (MaxStatusConflicts), each resolved, never accepted.
	ConflictCount int           `json:"conflict_count"`
	Conflicts     []ConflictRef `json:"conflicts,omitempty"`
	// Watcher is the backend ("inotify" on Linux), with ", limited" when
	// some active session is not watched: WatchFallbacks gives each such
	// session's reason, and WatchLimits groups them by cause with the fix
	// (the CLI, the page and the extension say "watcher limited: …").
	// A limited session loses no change: each tool call's and turn's end
	// scans it with git status, and so does a periodic scan.
	Watcher        string            `json:"watcher"`
	WatchFallbacks map[string]string `json:"watch_fallbacks,omitempty"`
	WatchLimits    []WatchLimit      `json:"watch_limits,omitempty"`
	// Notices are what prsm did on its own lately: sessions it ended in
	// the last day, and why; what it refused the agents of active
	// sessions; and what agents did in the last day that prsm could not
	// record (a path too long for the system).
	Notices []string `json:"notices,omitempty"`
	// Hooks lists, per active session, whose hooks reported and when.
	Hooks []HookHealth `json:"hooks,omitempty"`
}

// WatchLimit is one reason the watcher cannot watch some sessions'
// worktrees, the fix, and the sessions (ids, sorted).
type WatchLimit struct {
	Reason   string   `json:"reason"`
	Fix      string   `json:"fix,omitempty"`
	Sessions []string `json:"sessions"`
}

// Line is the limit as the surfaces say it: "watcher limited: …".
func (l WatchLimit) Line() string {
	line := "watcher limited: " + l.Reason
	if l.Fix != "" {
		line += "; fix: " + l.Fix
	}
	return line
}

// MaxStatusConflicts bounds StatusResponse.Conflicts.
const MaxStatusConflicts = 20

// ConflictRef names a pending change in conflict: its session, its id
// and its file.
type ConflictRef struct {
	SessionID string `json:"session_id"`
	ID        string `json:"id"`
	Path      string `json:"rel_path"`
}

// SessionNotice is a notice of StatusResponse.Notices about what the
// agent of one session did that prsm could not record:
// "session ID: msg".
func SessionNotice(sessionID, msg string) string {
	return "session " + sessionID + ": " + msg
}

// NoticesOf are the messages of the notices (as SessionNotice writes
// them) about session sessionID, in order.
func NoticesOf(sessionID string, notices []string) []string {
	var out []string
	for _, n := range notices {
		if msg, ok := strings.CutPrefix(n, SessionNotice(sessionID, "")); ok {
			out = append(out, msg)
		}
	}
	return out
}

// StartRequest is the body of POST /sessions.
type StartRequest struct {
	Name    string `json:"name"`
	AgentID string `json:"agent_id"`
	Mode    string `json:"mode"`
	// AutoCheckpoints false switches the session's automatic checkpoints
	// off; absent means on.
	AutoCheckpoints *bool `json:"auto_checkpoints,omitempty"`
}

// GCRequest sets the retention limits of a gc; zero values take defaults.
type GCRequest struct {
	// KeepSessions is how many ended sessions keep their records and
	// checkpoints (newest first). Default 30.
	KeepSessions int `json:"keep_sessions"`
	// KeepAuto is how many automatic checkpoints each session keeps
	// (newest first); named ones are always kept. Default 200.
	KeepAuto int `json:"keep_auto"`
	// BudgetBytes caps the store's size: older ended sessions go until it
	// fits. 0 means no cap.
	BudgetBytes int64 `json:"budget_bytes"`
}

// GCReport says what a gc removed.
type GCReport struct {
	SessionsRemoved    []string `json:"sessions_removed"`
	CheckpointsRemoved int      `json:"checkpoints_removed"`
	BlobsRemoved       int      `json:"blobs_removed"`
	BytesBefore        int64    `json:"bytes_before"`
	BytesAfter         int64    `json:"bytes_after"`
	BytesFreed         int64    `json:"bytes_freed"`
	OverBudget         bool     `json:"over_budget"`
}

// MarshalJSON writes SessionsRemoved as [] when there are none, never null.
func (r GCReport) MarshalJSON() ([]byte, error) {
	type plain GCReport
	p := plain(r)
	p.SessionsRemoved = nonNil(p.SessionsRemoved)
	return json.Marshal(p)
}

// String sums a report up for people.
func (r *GCReport) String() string {
	var s string
	if len(r.SessionsRemoved)+r.CheckpointsRemoved+r.BlobsRemoved == 0 {
		// What a run that removed nothing frees is the store's own
		// compaction (space deleted rows had left), not anything removed.
		s = "nothing to remove"
		if r.BytesFreed > 0 {
			s += fmt.Sprintf("; compacting the store freed %s", prsm.Size(r.BytesFreed))
		}
		s += fmt.Sprintf(" (store now %s)", prsm.Size(r.BytesAfter))
	} else {
		s = fmt.Sprintf("removed %s, %s, %s; freed %s (store now %s)",
			prsm.Plural(len(r.SessionsRemoved), "ended session"), prsm.Plural(r.CheckpointsRemoved, "automatic checkpoint"),
			prsm.Plural(r.BlobsRemoved, "content blob"), prsm.Size(r.BytesFreed), prsm.Size(r.BytesAfter))
	}
	if r.OverBudget {
		s += "; still over the budget: only active sessions are left"
	}
	return s
}

// HookHealth says, for one active session, whose hooks reported and when
// (kept in the server's memory: a restarted server knows none yet).
type HookHealth struct {
	SessionID string `json:"session_id"`
	Name      string `json:"name"`
	// Agent is the agent id of the newest tool call its hooks reported
	// (start or complete); "" when none did.
	Agent string `json:"agent"`
	// LastHookAt is when the last hook event (tool call, turn, turn end)
	// came; absent when none did.
	LastHookAt *time.Time `json:"last_hook_at,omitempty"`
	// Warning says the hooks seem not to fire in this worktree: the
	// session's hooks reported before, and in the current turn changes
	// came only through the watcher.
	Warning string `json:"warning,omitempty"`
}
