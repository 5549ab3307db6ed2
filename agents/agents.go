// Package agents is the registry of the agents prsm works with: one line
// per agent in All, each an agent folder (agents/claude, agents/codex,
// ...) that holds the agent's hook adapter, its hooks install and its
// `prsm run` wiring (package agent says what each part is). hook,
// cmd/prsm and cmd/prsm-hook find agents here and nowhere else, so that
// adding an agent is a new folder and one line below
// (TestAgentsNamedOnlyHere holds the rest of the code to that).
package agents

import (
	"context"
	"sort"
	"strings"

	"github.com/prsm-dev/prsm/agents/agent"
	"github.com/prsm-dev/prsm/agents/claude"
	"github.com/prsm-dev/prsm/agents/codex"
	"github.com/prsm-dev/prsm/agents/copilot"
	"github.com/prsm-dev/prsm/agents/cursor"
	"github.com/prsm-dev/prsm/agents/gemini"
	"github.com/prsm-dev/prsm/agents/opencode"
)

// Agent, Installer and Run are agent's, for the registry's users.
type (
	Agent     = agent.Agent
	Installer = agent.Installer
	Run       = agent.Run
)

// HookArgv is the hook command of agent name for the prsm binary at self
// (agent.HookArgv).
func HookArgv(self, name string) []string { return agent.HookArgv(self, name) }

// FeedbackOf says how the hooks of agent name carry the review's
// feedback to its model: the events (and Stop) that do, or, for an agent
// whose hooks do not yet, agent.NotYet's words; "" for an agent prsm does
// not know.
func FeedbackOf(name string) string {
	a := Lookup(name)
	if a == nil {
		return ""
	}
	fb := a.Feedback()
	if fb == nil {
		return agent.NotYet(a.Title())
	}
	s := "at " + strings.Join(fb.Events, ", ")
	if fb.Stop != "" {
		s += "; at " + fb.Stop + " with PRSM_FEEDBACK_ON_STOP=1"
	}
	return s
}

// All lists the agents, in the order `prsm run` offers each its wiring.
var All = []agent.Agent{
	codex.Agent{},
	claude.Agent{},
	gemini.Agent{},
	opencode.Agent{},
	copilot.Agent{},
	cursor.Agent{},
}

// Lookup is the agent named name, or nil.
func Lookup(name string) agent.Agent {
	for _, a := range All {
		if a.Name() == name {
			return a
		}
	}
	return nil
}

// Names are the agents' names, sorted.
func Names() []string {
	names := make([]string, 0, len(All))
	for _, a := range All {
		names = append(names, a.Name())
	}
	sort.Strings(names)
	return names
}

// WireRun gives each agent's Runner its say over one `prsm run`: the
// command line to run, and the environment entries to add. An agent
// wires only its own command, so at most one changes anything.
func WireRun(ctx context.Context, r *agent.Run) (argv, env []string) {
	argv = r.Argv
	for _, a := range All {
		run := a.Runner()
		if run == nil {
			continue
		}
		rr := *r
		rr.Argv = argv
		var more []string
		argv, more = run(ctx, &rr)
		env = append(env, more...)
	}
	return argv, env
}
