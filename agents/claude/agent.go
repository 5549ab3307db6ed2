// Package claude is prsm's Claude Code agent: its hook adapter (command
// hooks, and the server's http hook route, Serve), which moves a file
// tool's workspace path onto the session's worktree; `prsm hooks install
// claude` (settings.json); and `prsm run -- claude`, which passes a
// --settings file with prsm's http hooks and guards.
package claude

import (
	"context"

	"github.com/prsm-dev/prsm/agents/agent"
)

// Agent is Claude Code.
type Agent struct{}

// Name implements agent.Agent.
func (Agent) Name() string { return "claude" }

// Title implements agent.Agent.
func (Agent) Title() string { return "Claude Code" }

// Adapter implements agent.Agent.
func (Agent) Adapter() *agent.Adapter {
	return &agent.Adapter{
		Short: "Claude Code hook adapter: reads one hook event (JSON) on stdin, tells the session's server; prints nothing on stdout",
		Long: `Claude Code hook adapter. It reads one hook event (JSON) on stdin:
PreToolUse starts a tool call (the pre-tool capture), PostToolUse and
PostToolUseFailure complete it, UserPromptSubmit starts a turn (an automatic
checkpoint), Stop ends it (a tool call left open, its tool denied, is
closed, and changes no tool call made are recorded) unless background
tasks still run, whose calls stay open; other events are ignored.

The session is the one whose worktree holds the event's cwd, else
$PRSM_SESSION_ID (with $PRSM_WORKSPACE); outside any session the hook does
nothing. It sends $PRSM_HOOK_TOKEN, the session's hook token that prsm
run sets, and the server's token (server.json) only without one.
A Write, Edit, MultiEdit or NotebookEdit run in a session's worktree whose
file is the workspace's own is moved onto the worktree (a JSON answer on
stdout, updatedInput), so that it is recorded and reviewed, unless that
place leads out of the worktree through a symbolic link (then the answer
only says why); otherwise the hook prints nothing on stdout. It never
exits 2 (which would block the tool), and gives up after a few seconds
with one line on stderr and exit 1.`,
		Handle: handle,
	}
}

// Installer implements agent.Agent.
func (Agent) Installer() *agent.Installer {
	return &agent.Installer{
		Help: `For claude, --user (the default) edits ~/.claude/settings.json
($CLAUDE_CONFIG_DIR/settings.json when that is set); --project edits
<workspace>/.claude/settings.json. Claude Code reads project settings only
where .claude/ exists, and a session worktree may have none, so --user is
the safe choice.`,
		Path:      claudeSettingsPath,
		Install:   installClaudeHooks,
		Uninstall: agent.UninstallSettingsHooks("Claude Code", removeClaudeHooks),
		Installed: hooksInstalled,
	}
}

// hooksInstalled reports whether the settings file at path holds prsm's
// Claude Code hooks.
var hooksInstalled = agent.SettingsHooksInstalled(removeClaudeHooks)

// Runner implements agent.Agent.
func (Agent) Runner() agent.Runner {
	return func(_ context.Context, r *agent.Run) ([]string, []string) {
		return claudeRunArgs(r.Argv, r.Worktree, r.ProjectDir, r.BaseURL, r.Self, r.Err), nil
	}
}
