package hook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mattn/go-isatty"

	"github.com/prsm-dev/prsm/agents/agent"
	"github.com/prsm-dev/prsm/agents/claude"
	"github.com/prsm-dev/prsm/agents/copilot"
)

// Target is the session an event belongs to and where its server is.
type Target = agent.Target

// Server takes the calls of hook events: a session's server over HTTP,
// or the engine in process (the server's own http hook route).
type Server = agent.Server

// ErrBadEvent and ErrOtherSession are agent.ErrBadEvent and
// agent.ErrOtherSession, which ServeClaude and ServeCopilot return.
var (
	ErrBadEvent     = agent.ErrBadEvent
	ErrOtherSession = agent.ErrOtherSession
)

// SessionIn is agent.SessionIn.
func SessionIn(projectDir, dir string) *Target { return agent.SessionIn(projectDir, dir) }

// SessionOfPath is agent.SessionOfPath.
func SessionOfPath(home, dir string) *Target { return agent.SessionOfPath(home, dir) }

// OneLine is agent.OneLine.
func OneLine(s string) string { return agent.OneLine(s) }

// ServeClaude is the server's http hook route for Claude Code (POST
// /hooks/claude; claude.Serve says what it does).
func ServeClaude(ctx context.Context, body []byte, projectDir, workspace, only string, srv Server) (answer []byte, err error) {
	return claude.Serve(ctx, body, projectDir, workspace, only, srv)
}

// ServeCopilot is the server's http hook route for GitHub Copilot CLI
// (POST /hooks/copilot?event=EVENT; copilot.Serve says what it does).
func ServeCopilot(ctx context.Context, event string, body []byte, projectDir, workspace, only string, srv Server) (answer []byte, err error) {
	return copilot.Serve(ctx, event, body, projectDir, workspace, only, srv)
}

// host is what the agents' adapters reach of a: its streams, the
// environment, and the way to a session's server.
func (a *Adapter) host() *agent.Host {
	return &agent.Host{Stdout: a.Stdout, Stderr: a.Stderr, Getenv: a.getenv, Locate: a.locateSession, Send: a.sendHook}
}

// Command is `prsm hook AGENT` (and `prsm-hook AGENT`) once the agent is
// known: args are what follows the agent on the command line, in the
// event on stdin. What every adapter shares is here: no arguments (a
// flag mistake would be a usage error, exit 2, which agents read as
// "block the tool"), a terminal on stdin refused, a panic made an
// ordinary failure, every error one line ("prsm hook: ...") for stderr
// and exit 1.
func (a *Adapter) Command(ctx context.Context, ag agent.Agent, args []string, in io.Reader) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
		}
		if err != nil {
			err = errors.New(OneLine("prsm hook: " + err.Error()))
		}
	}()
	name, title, ad := ag.Name(), ag.Title(), ag.Adapter()
	if ad == nil {
		return fmt.Errorf("unknown agent %q", name)
	}
	if len(args) > 0 {
		return fmt.Errorf("prsm hook %s takes no arguments; it reads the hook event on stdin", name)
	}
	if f, ok := in.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		return fmt.Errorf("prsm hook %s reads a %s hook event (JSON) on stdin; %s runs it, see `prsm hooks install %s`", name, title, title, name)
	}
	return ad.Handle(ctx, a.host(), in)
}
