// Package cursor is prsm's Cursor agent: its hook adapter (shell and
// file-edit events, numbered per conversation) and `prsm hooks install
// cursor` (hooks.json); `prsm run` can add no hooks to a Cursor run, and
// says so when they are not installed.
package cursor

import (
	"context"

	"github.com/prsm-dev/prsm/agents/agent"
)

// Agent is Cursor.
type Agent struct{}

// Name implements agent.Agent.
func (Agent) Name() string { return "cursor" }

// Title implements agent.Agent.
func (Agent) Title() string { return "Cursor" }

// Adapter implements agent.Agent.
func (Agent) Adapter() *agent.Adapter {
	return &agent.Adapter{
		Short: "Cursor hook adapter: reads one hook event (JSON) on stdin, tells the session's server",
		Long: `Cursor hook adapter. It reads one hook event (JSON) on stdin:
beforeSubmitPrompt starts a turn, beforeShellExecution starts a Bash call
(the pre-tool capture) and afterShellExecution completes it, afterFileEdit
records an Edit of the file it names (Cursor reports edits only after
they happen), stop ends the turn; the newer preToolUse, postToolUse and
postToolUseFailure start and complete a call of the tool they name.
Cursor gives no tool call id (the newer events may: tool_use_id): the
adapter numbers the calls of each conversation (a small state file in
the project's prsm directory), pairing each after-event with the open
before-event of the same command, so that the same command twice is two
calls.

It prints nothing on stdout, never exits 2 (which blocks the action), and
gives up after a few seconds with one line on stderr and exit 1, which
Cursor lets pass.`,
		Handle: handle,
	}
}

// Installer implements agent.Agent.
func (Agent) Installer() *agent.Installer { return installer() }

// Runner implements agent.Agent: a note when prsm's hooks are missing;
// `prsm run` adds nothing to a Cursor run, whose hooks come from `prsm
// hooks install cursor`.
func (Agent) Runner() agent.Runner {
	return func(_ context.Context, r *agent.Run) ([]string, []string) {
		cursorRunNote(r.Argv, r.Worktree, r.Err)
		return r.Argv, nil
	}
}

// Feedback implements agent.Agent: its hooks do not carry the review's
// feedback yet (issue 46).
func (Agent) Feedback() *agent.Feedback { return nil }
