package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
)

func (a *app) sessionCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "session",
		Short: "Start, list, show and end agent sessions",
		Args:  exactArgs(0, "a subcommand: start, list, show or end"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help() // with no subcommand: what they are
		},
	}
	c.AddCommand(a.sessionStartCmd(), a.sessionListCmd(), a.sessionShowCmd(), a.sessionEndCmd())
	return c
}

func (a *app) sessionStartCmd() *cobra.Command {
	var req api.StartRequest
	var noAuto bool
	c := &cobra.Command{
		Use:     "start [--name N] [--agent A] [--mode auto|review] [--no-auto-checkpoints]",
		Example: "  prsm session start --name edge --mode review",
		Short:   "Start a session in its own worktree, seeded with the workspace as it is",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if req.Mode != "" && req.Mode != prsm.ModeAuto && req.Mode != prsm.ModeReview {
				return usagef("use --mode auto or --mode review", "unknown mode %q", req.Mode)
			}
			if noAuto {
				off := false
				req.AutoCheckpoints = &off
			}
			return ask(a, ctx, func(ctx context.Context, cl *client.Client) (*prsm.Session, error) {
				return cl.StartSession(ctx, req)
			}, func(s *prsm.Session) {
				fmt.Fprintf(a.stdio.Out, "started session %s\n", s.ID)
				a.showSession(s)
			})
		},
	}
	c.Flags().StringVar(&req.Name, "name", "", "a name for the session")
	c.Flags().StringVar(&req.AgentID, "agent", "", "the agent that works in it")
	c.Flags().StringVar(&req.Mode, "mode", "", "auto (apply changes at once) or review (apply on accept)")
	c.Flags().BoolVar(&noAuto, "no-auto-checkpoints", false, "take no automatic checkpoints (at turns and before tool calls); named ones still work")
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

func (a *app) showSession(s *prsm.Session) {
	ended := "-"
	if s.EndedAt != nil {
		ended = s.EndedAt.Local().Format("2006-01-02 15:04:05")
	}
	fields(a.stdio.Out,
		"id", s.ID,
		"name", s.Name,
		"agent", s.AgentID,
		"mode", s.Mode,
		"status", s.Status,
		"worktree", s.WorktreePath,
		"branch", s.Branch,
		"base", s.BaseCommit,
		"created", s.CreatedAt.Local().Format("2006-01-02 15:04:05"),
		"ended", ended,
		"pending", strconv.Itoa(s.PendingCount),
	)
	if s.Note != "" {
		fields(a.stdio.Out, "note", s.Note)
	}
}

func (a *app) sessionListCmd() *cobra.Command {
	var status string
	c := &cobra.Command{
		Use:     "list [--status active|ended]",
		Example: "  prsm session list\n  prsm session list --status ended --json",
		Short:   "List sessions",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return ask(a, cmd.Context(), func(ctx context.Context, cl *client.Client) ([]prsm.Session, error) {
				return cl.Sessions(ctx, status)
			}, func(list []prsm.Session) {
				if len(list) == 0 {
					fmt.Fprintln(a.stdio.Out, "no sessions; start one with `prsm session start`")
					return
				}
				t := newTable(a.stdio.Out, "ID", "NAME", "AGENT", "MODE", "STATUS", "PENDING", "CREATED")
				for _, s := range list {
					t.row(s.ID, s.Name, s.AgentID, s.Mode, s.Status, strconv.Itoa(s.PendingCount), age(s.CreatedAt))
				}
				t.flush()
			})
		},
	}
	c.Flags().StringVar(&status, "status", "", "only sessions with this status")
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

func (a *app) sessionShowCmd() *cobra.Command {
	var sessionID string
	c := &cobra.Command{
		Use:     "show [ID | --session ID]",
		Example: "  prsm session show edge",
		Short:   "Show one session (ID or a unique prefix; default: the one active session)",
		Args:    oneSessionArg(&sessionID),
		RunE: func(cmd *cobra.Command, args []string) error {
			// What the agent did that prsm could not record (a path too
			// long for the system) is in the server's notices, as
			// `prsm status` shows them.
			var notices []string
			return askSession(a, cmd.Context(), sessionID, func(ctx context.Context, cl *client.Client, s *prsm.Session) (*prsm.Session, error) {
				if !a.jsonOut {
					st, err := cl.Status(ctx)
					if err != nil {
						return nil, err
					}
					notices = api.NoticesOf(s.ID, st.Notices)
				}
				return s, nil
			}, func(_, s *prsm.Session) {
				a.showSession(s)
				for _, n := range notices {
					fields(a.stdio.Out, "notice", n)
				}
			})
		},
	}
	c.Flags().StringVar(&sessionID, "session", "", "the session (id or unique prefix); default: the one active session")
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

// oneSessionArg takes the session of show and end as an argument or as
// --session ID (into id), not both; with neither, resolveSession takes
// the one active session.
func oneSessionArg(id *string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) > 1 || len(args) == 1 && *id != "" {
			return usagef("usage: "+c.UseLine(), "%s takes one session id, as an argument or as --session", c.CommandPath())
		}
		if err := noEmptyArg(c, args, "one session id"); err != nil {
			return err
		}
		if len(args) == 1 {
			*id = args[0]
		}
		return nil
	}
}

func (a *app) sessionEndCmd() *cobra.Command {
	var discard, yes bool
	var sessionID string
	c := &cobra.Command{
		Use:     "end [ID | --session ID] [--discard [--yes]]",
		Example: "  prsm session end edge\n  prsm session end edge --discard --yes",
		Short:   "End a session: remove its worktree and branch (refused while changes are unreviewed); default: the one active session",
		Long: `End a session: remove its worktree and branch. It is refused while changes
are unreviewed, unless --discard: that lists the pending changes it drops
from your workspace and asks first, as a bulk reject does (--yes off a
terminal).`,
		Args: oneSessionArg(&sessionID),
		RunE: func(cmd *cobra.Command, args []string) error {
			return askSession(a, cmd.Context(), sessionID, func(ctx context.Context, cl *client.Client, target *prsm.Session) (*prsm.Session, error) {
				if discard && target.PendingCount > 0 {
					if target.PendingCount > bulkListMax {
						if err := a.askByCount(target, "discard", yes); err != nil {
							return nil, err
						}
					} else {
						ok, err := a.confirmBulk(ctx, cl, target, "discard", "", "", yes)
						if err != nil {
							return nil, err
						}
						if !ok { // none left pending meanwhile
							return cl.EndSession(ctx, target.ID, discard)
						}
					}
					// Rejects first, maybe many: a job with a progress bar.
					return a.discardJob(ctx, cl, target)
				}
				return cl.EndSession(ctx, target.ID, discard)
			}, func(_, s *prsm.Session) {
				fmt.Fprintf(a.stdio.Out, "ended session %s (%s); its worktree and branch are removed\n", s.ID, printable(s.Name))
			})
		},
	}
	c.Flags().StringVar(&sessionID, "session", "", "the session (id or unique prefix); default: the one active session")
	c.Flags().BoolVar(&discard, "discard", false, "drop unreviewed changes (it lists them and asks first)")
	c.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask before --discard drops the pending changes")
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}
