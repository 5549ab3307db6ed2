// Package agent is the contract between prsm and the agents it works
// with, and the toolkit their folders share. An agent (agents/claude,
// agents/codex, ...) implements Agent: its hook adapter (Adapter: one hook
// event translated into a session API call), its `prsm hooks
// install|uninstall|status` entry (Installer) and its `prsm run` wiring
// (Runner), each of which it may say it has none of. The registry
// (package agents) lists them; hook, cmd/prsm and cmd/prsm-hook reach an
// agent only through it.
//
// Like hook, it links neither the store, the git layer, the HTTP server
// nor package net: the lean prsm-hook binary links every agent folder.
package agent

import (
	"context"
	"io"
)

// Agent is one agent prsm works with. Each part is nil when the agent
// has none; an agent states so rather than leaving it out.
type Agent interface {
	// Name is the agent's name on the command line: `prsm hook NAME`,
	// `prsm hooks install NAME`, the hook commands prsm writes.
	Name() string
	// Title is how people write it ("Claude Code").
	Title() string
	// Adapter translates its hook events.
	Adapter() *Adapter
	// Installer puts prsm's hooks into its settings and takes them out.
	Installer() *Installer
	// Runner wires prsm's hooks into one `prsm run -- AGENT ...`.
	Runner() Runner
	// Feedback says how its hooks carry the review's feedback to its
	// model; nil when they do not yet.
	Feedback() *Feedback
}

// Adapter is an agent's hook adapter: `prsm hook NAME` and `prsm-hook
// NAME` run Handle with one event on stdin.
type Adapter struct {
	// Short and Long are `prsm hook NAME`'s help.
	Short, Long string
	// Handle reads one hook event from in and tells the session's server
	// through h.
	Handle func(ctx context.Context, h *Host, in io.Reader) error
}

// Host is what an adapter needs of the hook command that runs it
// (hook.Adapter): where to answer, the environment, and the way to the
// session's server.
type Host struct {
	// Stdout receives the answer an agent reads (if any), Stderr what a
	// failure left to say.
	Stdout, Stderr io.Writer
	// Getenv reads the environment.
	Getenv func(name string) string
	// Locate finds the session of an event whose cwd is cwd; nil means
	// the event is outside every session.
	Locate func(ctx context.Context, cwd string) (*Target, error)
	// Send sends one event's call to the server of the session that
	// holds cwd, starting the server when none runs; outside every
	// session it does nothing. event names the agent's event in errors.
	Send func(ctx context.Context, cwd string, call *Call, event string) error
}

// Installer is an agent's entry in `prsm hooks install|uninstall|status`:
// which file holds its hooks and how prsm's go in and come out.
type Installer struct {
	// Help says, for `prsm hooks install --help`, what --user and
	// --project edit.
	Help string
	// Path is the file --user (root "") or --project (root, the
	// workspace's repository root) edits.
	Path func(root string) (string, error)
	// Install puts prsm's hooks, running argv (HookArgv), into the file
	// at path, and prints what it changed, or that nothing changed, on
	// out.
	Install func(out io.Writer, path string, argv []string, project bool) error
	// Uninstall takes prsm's hooks, and nothing else, out of the file at
	// path, and prints what it changed on out.
	Uninstall func(out io.Writer, path string) error
	// Installed reports whether the file at path holds prsm's hooks.
	Installed func(path string) (bool, error)
}

// Runner wires prsm's hooks into one `prsm run` of r.Argv: it returns the
// command line to run and environment entries to add. A command that is
// not the agent's comes back as it is, with no entries; so does one the
// agent cannot be wired into, with one line on r.Err saying so.
type Runner func(ctx context.Context, r *Run) (argv, env []string)

// Run is one `prsm run -- COMMAND`, as a Runner sees it.
type Run struct {
	// Argv is the command line, Dir where it runs, Env its environment
	// (with the session's variables).
	Argv []string
	Dir  string
	Env  []string
	// Worktree is the session's worktree, Workspace the workspace root,
	// ProjectDir the workspace's state under PRSM_HOME.
	Worktree, Workspace, ProjectDir string
	// BaseURL is the server's address, "" when the run has no hook token.
	BaseURL string
	// Self is the prsm binary, whose hook commands the agent runs
	// (HookArgv).
	Self string
	// Err receives the run's notes.
	Err io.Writer
}
