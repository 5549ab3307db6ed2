// Package gemini is prsm's Gemini CLI agent: its hook adapter
// (BeforeTool and AfterTool, numbered in a state file, as Gemini gives no
// tool call id); `prsm hooks install gemini` (settings.json, comments
// allowed); and `prsm run -- gemini`, which gives Gemini prsm's hooks
// through a home of the run's own (the user's settings, login and trust
// kept) and carries the workspace's folder trust over to the worktree.
package gemini

import (
	"context"

	"github.com/prsm-dev/prsm/agents/agent"
)

// Agent is Gemini CLI.
type Agent struct{}

// Name implements agent.Agent.
func (Agent) Name() string { return "gemini" }

// Title implements agent.Agent.
func (Agent) Title() string { return "Gemini CLI" }

// Adapter implements agent.Agent.
func (Agent) Adapter() *agent.Adapter {
	return &agent.Adapter{
		Short: "Gemini CLI hook adapter: reads one hook event (JSON) on stdin, tells the session's server; prints nothing on stdout",
		Long: `Gemini CLI hook adapter. It reads one hook event (JSON) on stdin:
BeforeTool starts a tool call (the pre-tool capture), AfterTool completes it,
BeforeAgent (once per prompt) starts a turn (an automatic checkpoint),
AfterAgent and SessionEnd end it; other events are ignored. Gemini's tools
write_file, replace and run_shell_command are recorded as Write, Edit and
Bash.

Gemini CLI gives no tool call id: the adapter numbers the calls of each
Gemini session (a small state file in the project's prsm directory, removed
at SessionEnd) and pairs each AfterTool with the open BeforeTool of the same
tool and input.

The session is the one whose worktree holds the event's cwd, else
$PRSM_SESSION_ID (with $PRSM_WORKSPACE); outside any session the hook does
nothing. It sends $PRSM_HOOK_TOKEN, the session's hook token that prsm
run sets, and the server's token (server.json) only without one. Gemini
CLI reads stdout as JSON when a hook exits 0, so it prints
nothing there; it never exits 2 (which would block the tool), and gives up
after a few seconds with one line on stderr and exit 1, which Gemini CLI
takes as a warning.`,
		Handle: handle,
	}
}

// Installer implements agent.Agent.
func (Agent) Installer() *agent.Installer { return installer() }

// Runner implements agent.Agent: Gemini CLI gets prsm's hooks and the
// workspace's trust for the run.
func (Agent) Runner() agent.Runner {
	return func(_ context.Context, r *agent.Run) ([]string, []string) {
		return r.Argv, geminiRun(r.Err, r.Argv, r.Workspace, r.Worktree, r.Self)
	}
}
