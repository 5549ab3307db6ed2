// Package opencode is prsm's opencode agent: the adapter of the events
// prsm's opencode plugin pipes to `prsm hook opencode`; the plugin itself
// and `prsm hooks install opencode`, which writes it; and `prsm run --
// opencode`, which loads it through OPENCODE_CONFIG_CONTENT.
package opencode

import (
	"context"

	"github.com/prsm-dev/prsm/agents/agent"
)

// Agent is opencode.
type Agent struct{}

// Name implements agent.Agent.
func (Agent) Name() string { return "opencode" }

// Title implements agent.Agent.
func (Agent) Title() string { return "opencode" }

// Adapter implements agent.Agent.
func (Agent) Adapter() *agent.Adapter {
	return &agent.Adapter{
		Short: "opencode adapter: reads one event of prsm's opencode plugin (JSON) on stdin, tells the session's server",
		Long: `opencode adapter. opencode has no command hooks; the plugin that
` + "`prsm hooks install opencode`" + ` writes runs it once per event, with the event
(JSON) on stdin: tool.execute.before starts a tool call (the pre-tool
capture), tool.execute.after completes it, chat.message (a user message)
starts a turn, session.idle ends it. The tool call id is opencode's callID,
the model's own; tool names become prsm's (write → Write, edit → Edit,
bash → Bash).

The session is the one whose worktree holds the event's cwd, else
$PRSM_SESSION_ID (with $PRSM_WORKSPACE); outside any session it does
nothing. On tool.execute.after and chat.message it asks the session for
the review's feedback the agent has not heard, and prints it as
{"feedback": TEXT}, which the plugin appends to the tool's result or adds
to the user's message; otherwise it prints nothing on stdout. It gives up
after a few seconds with one line on stderr and exit 1; the plugin never
lets that stop the tool.`,
		Handle: handle,
	}
}

// Installer implements agent.Agent.
func (Agent) Installer() *agent.Installer { return installer() }

// Runner implements agent.Agent.
func (Agent) Runner() agent.Runner {
	return func(_ context.Context, r *agent.Run) ([]string, []string) {
		return r.Argv, opencodeRunEnv(r.Argv, r.Worktree, r.Self, r.Err)
	}
}
