// Package codex is prsm's Codex agent: its hook adapter (Bash and
// apply_patch, by Codex's own tool call ids); `prsm hooks install codex`
// (hooks.json, and the trust Codex asks of new hooks); and `prsm run --
// codex`, which passes prsm's hooks as -c overrides trusted by the hashes
// Codex's app-server computes.
package codex

import (
	"context"

	"github.com/prsm-dev/prsm/agents/agent"
)

// Agent is Codex.
type Agent struct{}

// Name implements agent.Agent.
func (Agent) Name() string { return "codex" }

// Title implements agent.Agent.
func (Agent) Title() string { return "Codex" }

// Adapter implements agent.Agent.
func (Agent) Adapter() *agent.Adapter {
	return &agent.Adapter{
		Short: "Codex hook adapter: reads one hook event (JSON) on stdin, tells the session's server; prints nothing on stdout",
		Long: `Codex hook adapter (Codex 0.169.0 and later). It reads one hook event
(JSON) on stdin: PreToolUse starts a tool call (the pre-tool capture),
PostToolUse completes it, UserPromptSubmit starts a turn (an automatic
checkpoint), Stop ends it; other events are ignored. The tool call id is
Codex's tool_use_id (the model's call_id). Codex's shell tool arrives as
Bash; apply_patch is recorded as Edit, one record per file it changes
(with :N ids when there are several).

The session is the one whose worktree holds the event's cwd (the
command's workdir), else $PRSM_SESSION_ID (with $PRSM_WORKSPACE); outside
any session the hook does nothing. It prints nothing on stdout, never
exits 2 (which would block the tool), and gives up after a few seconds
with one line on stderr and exit 1, which Codex reads as "go on".`,
		Handle: handle,
	}
}

// Installer implements agent.Agent.
func (Agent) Installer() *agent.Installer { return installer() }

// Runner implements agent.Agent.
func (Agent) Runner() agent.Runner {
	return func(ctx context.Context, r *agent.Run) ([]string, []string) {
		return codexRunArgs(ctx, r.Argv, r.Dir, r.Env, r.Self, r.Err), nil
	}
}
