// Package copilot is prsm's GitHub Copilot CLI agent: its hook adapter
// (its camelCase events, numbered in a state file, and the Claude-shaped
// ones, which agents/claude maps); `prsm hooks install copilot` (a hooks
// file of prsm's own); and `prsm run -- copilot`, which hands Copilot
// prsm's hooks as a plugin for the run (--plugin-dir).
package copilot

import (
	"context"

	"github.com/prsm-dev/prsm/agents/agent"
)

// Agent is GitHub Copilot CLI.
type Agent struct{}

// Name implements agent.Agent.
func (Agent) Name() string { return "copilot" }

// Title implements agent.Agent.
func (Agent) Title() string { return "GitHub Copilot CLI" }

// Adapter implements agent.Agent.
func (Agent) Adapter() *agent.Adapter {
	return &agent.Adapter{
		Short: "GitHub Copilot CLI hook adapter: reads one hook event (JSON) on stdin, tells the session's server",
		Long: `GitHub Copilot CLI hook adapter. It reads one hook event (JSON) on stdin:
preToolUse starts a tool call (the pre-tool capture), postToolUse and
postToolUseFailure complete it, userPromptSubmitted starts a turn,
agentStop ends it. Copilot gives no tool call id: the adapter numbers the
calls of each Copilot session (a small state file in the project's prsm
directory) and pairs each postToolUse with the open preToolUse of the same
tool and arguments, so that the same command twice is two calls.
Claude-shaped events (PreToolUse, ...; Copilot sends those for hooks it
reads from Claude Code's settings) are handled as ` + "`prsm hook claude`" + ` does.
Tool names become prsm's (create → Write, edit → Edit, bash → Bash).

Copilot denies a tool whose preToolUse hook fails, so this adapter always
exits 0: a failure is one line on stderr. It prints nothing on stdout.`,
		Handle: handle,
	}
}

// Installer implements agent.Agent.
func (Agent) Installer() *agent.Installer { return installer() }

// Runner implements agent.Agent: prsm's hooks as a plugin for the run.
func (Agent) Runner() agent.Runner {
	return func(_ context.Context, r *agent.Run) ([]string, []string) {
		return copilotRunArgs(r.Argv, r.Worktree, r.ProjectDir, r.BaseURL, r.Self, r.Err)
	}
}
