package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents"
	"github.com/prsm-dev/prsm/worktree"
)

// hooksCmd is `prsm hooks install|uninstall AGENT` and `prsm hooks status`.
func (a *app) hooksCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "hooks",
		Short: "Install, remove or show prsm's agent hooks (" + strings.Join(hookAgentNames(), ", ") + ")",
		Args:  exactArgs(0, "a subcommand: install, uninstall or status"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help() // with no subcommand: what they are
		},
	}
	c.AddCommand(a.hooksInstallCmd(true), a.hooksInstallCmd(false), a.hooksStatusCmd())
	return c
}

func (a *app) hooksInstallCmd(install bool) *cobra.Command {
	verb, short := "uninstall", "Remove prsm's hooks from an agent's settings, and nothing else"
	if install {
		verb, short = "install", "Add prsm's hooks to an agent's settings, keeping every other setting"
	}
	names := hookAgentNames()
	var user, proj bool
	c := &cobra.Command{
		Use:   verb + " AGENT [--user | --project]",
		Short: short,
		Long: short + ". AGENT is one of: " + strings.Join(names, ", ") + `.
Running it twice changes nothing; a settings file prsm cannot parse is
refused and left as it is. --user (the default) edits the agent's settings
of your user, --project the workspace's (which some agents read only when
committed or trusted). Which file each agent's is, and what else install
does for it: docs/reference.md, "Agents, one by one".`,
		Example: "  prsm hooks " + verb + " claude\n  prsm hooks " + verb + " codex --project\n  prsm hooks status",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || installerOf(args[0]) == nil {
				return usagef("usage: "+cmd.UseLine(), "prsm hooks %s takes the agent: %s", verb, strings.Join(names, ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if user && proj {
				return usagef("usage: "+cmd.UseLine(), "give --user or --project, not both")
			}
			agent := args[0]
			h := installerOf(agent)
			root := ""
			if proj {
				var err error
				if root, err = a.hooksProjectRoot(cmd); err != nil {
					return err
				}
			}
			path, err := h.Path(root)
			if err != nil {
				return err
			}
			if install {
				return h.Install(a.stdio.Out, path, hookArgv(agent), proj)
			}
			return h.Uninstall(a.stdio.Out, path)
		},
	}
	c.Flags().BoolVar(&user, "user", false, "edit the user's settings (the default)")
	c.Flags().BoolVar(&proj, "project", false, "edit the workspace's settings")
	return c
}

// hooksStatusCmd is `prsm hooks status`: for every agent, whether its user
// and project settings hold prsm's hooks.
func (a *app) hooksStatusCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "status",
		Example: "  prsm hooks status",
		Short:   "Show which agents have prsm's hooks installed, and where",
		Long: `Show, for every agent prsm has hooks for, whether its user settings and the
workspace's project settings hold prsm's hooks, and which of its hook events
carry the review's feedback (notes, comments, rejects) to its model, or that
prsm does not deliver it to that agent yet. Outside a git repository only the
user settings are shown.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			type row struct {
				Agent     string `json:"agent"`
				Scope     string `json:"scope"`
				Installed bool   `json:"installed"`
				Path      string `json:"path"`
				Error     string `json:"error,omitempty"`
				// Feedback says which events carry the review's
				// feedback, or that none does yet.
				Feedback string `json:"feedback"`
			}
			var rows []row
			root, rootErr := a.hooksProjectRoot(cmd)
			for _, agent := range hookAgentNames() {
				h := installerOf(agent)
				for _, scope := range []string{"user", "project"} {
					r := row{Agent: agent, Scope: scope, Feedback: feedbackEvents(agent)}
					var err error
					if scope == "project" {
						if rootErr != nil {
							continue
						}
						r.Path, err = h.Path(root)
					} else {
						r.Path, err = h.Path("")
					}
					if err == nil {
						r.Installed, err = h.Installed(r.Path)
					}
					if err != nil {
						r.Error = err.Error()
					}
					rows = append(rows, r)
				}
			}
			if a.jsonOut {
				return printJSON(a.stdio.Out, rows)
			}
			t := newTable(a.stdio.Out, "AGENT", "SCOPE", "HOOKS", "FILE")
			for _, r := range rows {
				state := "-"
				switch {
				case r.Error != "":
					state = "unreadable: " + r.Error
				case r.Installed:
					state = "installed"
				}
				t.row(r.Agent, r.Scope, state, r.Path)
			}
			t.flush()
			for _, agent := range hookAgentNames() {
				fmt.Fprintf(a.stdio.Out, "review feedback to %s: %s\n", agent, feedbackEvents(agent))
			}
			if w := hookVersionWarning(cmd.Context(), selfPath()); w != "" {
				fmt.Fprintln(a.stdio.Err, w)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

// feedbackEvents says which hook events of agent name carry the
// review's feedback to its model, or that prsm does not deliver it yet.
func feedbackEvents(name string) string { return agents.FeedbackOf(name) }

// hookVersionWarning is a warning when the lean prsm-hook beside self,
// which the hooks `prsm hooks install` writes run, is of another build than
// this prsm (or does not run), else "".
func hookVersionWarning(ctx context.Context, self string) string {
	argv := agents.HookArgv(self, "")
	if len(argv) != 2 {
		return "" // no lean binary: the hooks run this prsm itself
	}
	lean := argv[0]
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, lean, "--version").Output()
	if err != nil {
		return fmt.Sprintf("warning: %s --version fails (%v): the hooks run it; install prsm and prsm-hook together (make install, or both from one release)", lean, err)
	}
	got := strings.TrimPrefix(strings.TrimSpace(string(out)), "prsm-hook version ")
	if want := prsm.BuildInfo(); got != want {
		return fmt.Sprintf("warning: %s is version %s, this prsm is %s: the hooks run that prsm-hook; install prsm and prsm-hook together (make install, or both from one release)", lean, got, want)
	}
	return ""
}

// hooksProjectRoot is the root of the workspace's repository, whose
// settings --project edits.
func (a *app) hooksProjectRoot(cmd *cobra.Command) (string, error) {
	dir, err := a.workspaceDir()
	if err != nil {
		return "", err
	}
	repo, err := worktree.Discover(cmd.Context(), nil, dir)
	if err != nil {
		return "", err
	}
	return repo.Root, nil
}

// hookArgv is the command an agent's hook runs for agent, as an argument
// list (agents.HookArgv of this binary).
func hookArgv(agent string) []string { return agents.HookArgv(selfPath(), agent) }

// hookAgentNames are the agents `prsm hooks` knows, sorted: those with an
// installer.
func hookAgentNames() []string {
	var names []string
	for _, n := range agents.Names() {
		if installerOf(n) != nil {
			names = append(names, n)
		}
	}
	return names
}

// installerOf is the installer of the agent named name, nil for none.
func installerOf(name string) *agents.Installer {
	if ag := agents.Lookup(name); ag != nil {
		return ag.Installer()
	}
	return nil
}
