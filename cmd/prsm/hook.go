package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm/agents"
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
	for _, ag := range agents.All {
		if ag.Adapter() != nil {
			c.AddCommand(a.hookAdapterCmd(ag))
		}
	}
	return c
}

// hookAdapterCmd is `prsm hook AGENT` for one agent: the agent runs it
// with one hook event on stdin, and hook.Adapter.Command does the rest
// (the lean prsm-hook binary runs the same). Flags are not parsed: a
// flag mistake would be a usage error, exit 2, which agents read as
// "block the tool"; only -h and --help are read.
func (a *app) hookAdapterCmd(ag agents.Agent) *cobra.Command {
	ad := ag.Adapter()
	return &cobra.Command{
		Use:                ag.Name(),
		Short:              ad.Short,
		Long:               ad.Long,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, arg := range args {
				if arg == "-h" || arg == "--help" {
					return cmd.Help()
				}
			}
			return a.hookAdapter().Command(cmd.Context(), ag, args, a.stdio.In)
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
