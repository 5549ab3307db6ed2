package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents/agent"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/safepath"
)

// claudePathFields names, per Claude Code file tool, the tool_input field
// that holds the file it writes.
var claudePathFields = map[string]string{
	"Write":        "file_path",
	"Edit":         "file_path",
	"MultiEdit":    "file_path",
	"NotebookEdit": "notebook_path",
}

// claudeHookAnswer is what a PreToolUse hook prints for Claude Code to
// read (on exit 0): hookSpecificOutput with the tool's input replaced.
// Claude Code 2.1.328 applies updatedInput only beside a
// permissionDecision of "allow" or "ask".
type claudeHookAnswer struct {
	HookSpecificOutput claudePreToolAnswer `json:"hookSpecificOutput"`
}

type claudePreToolAnswer struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string          `json:"permissionDecisionReason"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
}

// claudeIntoWorktree keeps a file tool inside its session: a PreToolUse
// of Write, Edit, MultiEdit or NotebookEdit, run in a session's worktree,
// whose file is the workspace's own (the agent took the workspace's
// absolute path for its worktree's) gets its path moved onto the worktree,
// where the write is recorded and reviewed like any other; written to the
// workspace it would bypass review and leave no record. p's tool input
// becomes the moved one, and the answer Claude Code must read is
// returned; nil when the path needs no move (or the session cannot be
// told).
func claudeIntoWorktree(ctx context.Context, h *agent.Host, p *claudePayload) *claudeHookAnswer {
	if !claudeMayMove(p) {
		return nil
	}
	t, err := h.Locate(ctx, p.Cwd)
	if err != nil || t == nil || t.Worktree == "" {
		return nil // not run in a session's worktree: its paths are its own
	}
	var workspaces []string
	if info, err := api.ReadInfo(t.ProjectDir); err == nil && info.Workspace != "" {
		workspaces = append(workspaces, info.Workspace)
	}
	if ws := h.Getenv("PRSM_WORKSPACE"); ws != "" {
		workspaces = append(workspaces, ws)
	}
	return claudeMoveInto(p, t.Worktree, workspaces)
}

// claudeMayMove reports whether p is an event whose path may need a move:
// a PreToolUse of a file tool, with a cwd.
func claudeMayMove(p *claudePayload) bool {
	_, ok := claudePathFields[p.ToolName]
	return p.HookEventName == "PreToolUse" && ok && p.Cwd != ""
}

// claudeMoveInto moves p's file from the first of workspaces that holds it
// onto the same place in worktree, and returns the answer; nil when no
// move is needed. A place in the worktree that leads out of it through a
// symbolic link (the agent can plant one: `ln -s ~/.ssh evil`) is not
// moved to: the answer then only says why, and Claude Code decides as it
// would without prsm.
func claudeMoveInto(p *claudePayload, worktree string, workspaces []string) *claudeHookAnswer {
	field := claudePathFields[p.ToolName]
	for _, ws := range workspaces {
		if input, from, to, ok := moveToolPath(p.ToolInput, field, worktree, ws); ok {
			if inside, where := safepath.ResolvesInside(worktree, to); !inside {
				return claudeLeavesAnswer(from, to, where)
			}
			p.ToolInput = input
			return claudeMoveAnswer(p, from, to)
		}
	}
	return nil
}

// claudeLeavesAnswer is the answer for a workspace path from whose place
// in the worktree, to, a symbolic link leads out of the worktree (to
// where): no decision and no moved input, so that prsm never allows a
// write out of the worktree; the reason says why.
func claudeLeavesAnswer(from, to, where string) *claudeHookAnswer {
	return &claudeHookAnswer{HookSpecificOutput: claudePreToolAnswer{
		HookEventName: "PreToolUse",
		PermissionDecisionReason: fmt.Sprintf("prsm: %s is the workspace's, outside this session's worktree, and its place "+
			"in the worktree, %s, leads out of the worktree through a symbolic link (to %s); prsm neither moves "+
			"nor allows it, and leaves the decision to Claude Code", from, to, where),
	}}
}

// moveToolPath moves the path in field of a tool's input from the
// workspace onto the same place in the worktree: only an absolute path
// under workspace, outside the worktree and outside .git. It returns the
// new input (every other field as it was) and both paths.
func moveToolPath(input json.RawMessage, field, worktree, workspace string) (json.RawMessage, string, string, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(input, &m); err != nil {
		return nil, "", "", false
	}
	var path string
	if err := json.Unmarshal(m[field], &path); err != nil || !filepath.IsAbs(path) {
		return nil, "", "", false
	}
	if _, err := safepath.Rel(worktree, path); !errors.Is(err, safepath.ErrOutside) {
		return nil, "", "", false // in the worktree already (or its .git, or bad)
	}
	rel, err := safepath.Rel(workspace, path)
	if err != nil {
		return nil, "", "", false // elsewhere, the workspace root itself, or .git
	}
	to := filepath.Join(worktree, filepath.FromSlash(rel))
	b, err := json.Marshal(to)
	if err != nil {
		return nil, "", "", false
	}
	m[field] = b
	out, err := json.Marshal(m)
	if err != nil {
		return nil, "", "", false
	}
	return out, path, to, true
}

// claudeMoveAnswer is the answer that moves p's file from from to to. In
// the modes that let Claude Code edit files in its working directory
// without asking (acceptEdits, bypassPermissions) the moved call is
// allowed, as it would be had the agent named the worktree's path; in the
// others the user is asked, with the moved path in front of them.
// Claude Code's deny rules still apply either way.
func claudeMoveAnswer(p *claudePayload, from, to string) *claudeHookAnswer {
	decision := "ask"
	switch p.PermissionMode {
	case "acceptEdits", "bypassPermissions":
		decision = "allow"
	}
	return &claudeHookAnswer{HookSpecificOutput: claudePreToolAnswer{
		HookEventName:      "PreToolUse",
		PermissionDecision: decision,
		PermissionDecisionReason: fmt.Sprintf("prsm: %s is the workspace's, outside this session's worktree; "+
			"%s writes %s instead, where prsm records it for review", from, p.ToolName, to),
		UpdatedInput: p.ToolInput,
	}}
}

// backgroundRunning reports whether a Stop lists background work still in
// flight: an entry of background_tasks (Claude Code lists running and
// pending work there, and sends an empty list when there is none) whose
// status is not a final one. A list prsm cannot read counts as none, so
// that the turn ends as before.
func (p *claudePayload) backgroundRunning() bool {
	var tasks []struct {
		Status string `json:"status"`
	}
	if len(p.BackgroundTasks) == 0 || json.Unmarshal(p.BackgroundTasks, &tasks) != nil {
		return false
	}
	for _, t := range tasks {
		switch t.Status {
		case "completed", "failed", "killed":
		default:
			return true
		}
	}
	return false
}

// claudeTaskNotification is what Claude Code 2.1.328 says, as a
// UserPromptSubmit whose prompt is a <task-notification>, when a
// background task (an Agent call run in the background) stops with no
// live background work of its own.
type claudeTaskNotification struct {
	taskID, toolUseID, status, summary string
}

// inBackground reports whether the event is of a Bash call Claude Code
// runs in the background (tool_input.run_in_background).
func (p *claudePayload) inBackground() bool {
	if prsm.CanonicalToolName(p.ToolName) != prsm.ToolBash {
		return false
	}
	var in struct {
		RunInBackground bool `json:"run_in_background"`
	}
	return json.Unmarshal(p.ToolInput, &in) == nil && in.RunInBackground
}

// parseTaskNotification reads a <task-notification> prompt; ok is false
// for any other prompt, which is the user's and makes a turn.
func parseTaskNotification(prompt string) (n claudeTaskNotification, ok bool) {
	prompt = strings.TrimSpace(prompt)
	if !strings.HasPrefix(prompt, "<task-notification>") || !strings.HasSuffix(prompt, "</task-notification>") {
		return n, false
	}
	tag := func(name string) string {
		_, rest, found := strings.Cut(prompt, "<"+name+">")
		if !found {
			return ""
		}
		v, _, found := strings.Cut(rest, "</"+name+">")
		if !found {
			return ""
		}
		return strings.TrimSpace(v)
	}
	return claudeTaskNotification{taskID: tag("task-id"), toolUseID: tag("tool-use-id"), status: tag("status"), summary: tag("summary")}, true
}

// call maps a task notification onto the server. It is no Turn: the user
// typed nothing, and a turn would checkpoint and record as Watch what the
// task left. When the task has ended (a final status) and names its Agent
// call, what is still pending in the worktree is that call's: a complete
// of the Agent call's id, whose capture prsm never took (Agent is not in
// the hooks' matcher), takes the known state as its base, and the
// server's claim leaves alone the files of any other call still running.
// A second notification of the same task completes nothing anew. Anything
// else needs no call.
func (n claudeTaskNotification) call(p *claudePayload) (*agent.Call, error) {
	switch n.status {
	case "completed", "failed", "killed":
	default:
		return nil, nil // still running, or a status prsm does not know
	}
	if !prsm.ValidToolCallID(n.toolUseID) {
		return nil, nil
	}
	args, err := json.Marshal(map[string]string{"task_id": n.taskID})
	if err != nil {
		return nil, err
	}
	result, err := json.Marshal(map[string]string{"status": n.status, "summary": n.summary})
	if err != nil {
		return nil, err
	}
	return &agent.Call{Kind: agent.CallComplete, ToolCallID: n.toolUseID, Complete: api.CompleteRequest{
		Result: result, ToolName: "Agent", Args: args, AgentID: p.agentID(), Cwd: p.Cwd,
	}}, nil
}
