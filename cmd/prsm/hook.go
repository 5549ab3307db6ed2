package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm/hook"
	"github.com/prsm-dev/prsm/worktree"
)

// hookCmd is `prsm hook AGENT`. Agents read exit code 2 as "block the
// tool", so nothing here is a usage error: mistakes exit 1.
func (a *app) hookCmd() *cobra.Command {
	var c *cobra.Command
	known := func() string {
		var names []string
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				names = append(names, sub.Name())
			}
		}
		return strings.Join(names, ", ")
	}
	c = &cobra.Command{
		Use:   "hook AGENT",
		Short: "Agent hook adapters, run by the agents (see `prsm hooks install AGENT`)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("prsm hook needs an agent, one of: %s", known())
			}
			return fmt.Errorf("prsm hook: unknown agent %q; prsm knows: %s", args[0], known())
		},
	}
	c.AddCommand(a.hookLocateCmd())
	c.AddCommand(a.hookClaudeCmd())
	c.AddCommand(a.hookCodexCmd())
	c.AddCommand(a.hookGeminiCmd())
	c.AddCommand(a.hookOpencodeCmd())
	c.AddCommand(a.hookCopilotCmd())
	c.AddCommand(a.hookCursorCmd())
	return c
}

func (a *app) hookClaudeCmd() *cobra.Command {
	return a.hookAdapterCmd("claude",
		"Claude Code hook adapter: reads one hook event (JSON) on stdin, tells the session's server; prints nothing on stdout",
		`Claude Code hook adapter. It reads one hook event (JSON) on stdin:
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
with one line on stderr and exit 1.`)
}

// hookAdapterCmd is `prsm hook AGENT` for one agent: the agent runs it
// with one hook event on stdin, and hook.Adapter.Command does the rest
// (the lean prsm-hook binary runs the same). Flags are not parsed: a
// flag mistake would be a usage error, exit 2, which agents read as
// "block the tool"; only -h and --help are read.
func (a *app) hookAdapterCmd(agent, short, long string) *cobra.Command {
	return &cobra.Command{
		Use:                agent,
		Short:              short,
		Long:               long,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, arg := range args {
				if arg == "-h" || arg == "--help" {
					return cmd.Help()
				}
			}
			return a.hookAdapter().Command(cmd.Context(), agent, args, a.stdio.In)
		},
	}
}

// hookLocateCmd is `prsm hook locate DIR`, hidden: the working tree that
// holds DIR as JSON (hook.Repo), for the lean prsm-hook binary, which
// does not link the git layer that finds a workspace's identity.
func (a *app) hookLocateCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "locate DIR",
		Short:  "The git working tree that holds DIR, as JSON (for prsm-hook)",
		Hidden: true,
		Args:   exactArgs(1, "one directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			repo, err := a.hookAdapter().Discover(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return json.NewEncoder(a.stdio.Out).Encode(repo)
		},
	}
}

// hookAdapter is the hook adapters with what needs the git layer and the
// server: finding a workspace, and starting its server.
func (a *app) hookAdapter() *hook.Adapter {
	return &hook.Adapter{
		Stdout: a.stdio.Out,
		Stderr: a.stdio.Err,
		Discover: func(ctx context.Context, dir string) (*hook.Repo, error) {
			repo, err := worktree.Discover(ctx, nil, dir)
			if err != nil {
				return nil, err
			}
			return &hook.Repo{Root: repo.Root, CommonDir: repo.CommonDir, Identity: repo.Identity}, nil
		},
		StartServer: func(ctx context.Context, projectDir, root string) error {
			repo, err := worktree.Discover(ctx, nil, root)
			if err != nil {
				return err
			}
			_, _, err = a.startBackground(ctx, &project{repo: repo, dir: projectDir}, "")
			return err
		},
	}
}

func (a *app) hookCodexCmd() *cobra.Command {
	return a.hookAdapterCmd("codex",
		"Codex hook adapter: reads one hook event (JSON) on stdin, tells the session's server; prints nothing on stdout",
		`Codex hook adapter (Codex 0.169.0 and later). It reads one hook event
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
with one line on stderr and exit 1, which Codex reads as "go on".`)
}

func (a *app) hookCopilotCmd() *cobra.Command {
	return a.hookAdapterCmd("copilot",
		"GitHub Copilot CLI hook adapter: reads one hook event (JSON) on stdin, tells the session's server",
		`GitHub Copilot CLI hook adapter. It reads one hook event (JSON) on stdin:
preToolUse starts a tool call (the pre-tool capture), postToolUse and
postToolUseFailure complete it, userPromptSubmitted starts a turn,
agentStop ends it. Copilot gives no tool call id: the adapter numbers the
calls of each Copilot session (a small state file in the project's prsm
directory) and pairs each postToolUse with the open preToolUse of the same
tool and arguments, so that the same command twice is two calls.
Claude-shaped events (PreToolUse, ...; Copilot sends those for hooks it
reads from Claude Code's settings) are handled as `+"`prsm hook claude`"+` does.
Tool names become prsm's (create → Write, edit → Edit, bash → Bash).

Copilot denies a tool whose preToolUse hook fails, so this adapter always
exits 0: a failure is one line on stderr. It prints nothing on stdout.`)
}

func (a *app) hookCursorCmd() *cobra.Command {
	return a.hookAdapterCmd("cursor",
		"Cursor hook adapter: reads one hook event (JSON) on stdin, tells the session's server",
		`Cursor hook adapter. It reads one hook event (JSON) on stdin:
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
Cursor lets pass.`)
}

func (a *app) hookGeminiCmd() *cobra.Command {
	return a.hookAdapterCmd("gemini",
		"Gemini CLI hook adapter: reads one hook event (JSON) on stdin, tells the session's server; prints nothing on stdout",
		`Gemini CLI hook adapter. It reads one hook event (JSON) on stdin:
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
takes as a warning.`)
}

func (a *app) hookOpencodeCmd() *cobra.Command {
	return a.hookAdapterCmd("opencode",
		"opencode adapter: reads one event of prsm's opencode plugin (JSON) on stdin, tells the session's server",
		`opencode adapter. opencode has no command hooks; the plugin that
`+"`prsm hooks install opencode`"+` writes runs it once per event, with the event
(JSON) on stdin: tool.execute.before starts a tool call (the pre-tool
capture), tool.execute.after completes it, chat.message (a user message)
starts a turn, session.idle ends it. The tool call id is opencode's callID,
the model's own; tool names become prsm's (write → Write, edit → Edit,
bash → Bash).

The session is the one whose worktree holds the event's cwd, else
$PRSM_SESSION_ID (with $PRSM_WORKSPACE); outside any session it does
nothing. It prints nothing on stdout, and gives up after a few seconds with
one line on stderr and exit 1; the plugin never lets that stop the tool.`)
}
