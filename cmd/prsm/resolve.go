package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
)

// changesResolveCmd is `prsm changes resolve ID mine|agent|markers`.
func (a *app) changesResolveCmd(sessionID *string) *cobra.Command {
	c := &cobra.Command{
		Use:     "resolve ID mine|agent|markers [--say TEXT] [--session ID]",
		Example: "  prsm changes resolve c1 mine\n  prsm changes resolve c1 markers   # merge in your editor",
		Short:   "Settle a change in conflict: keep yours, take the agent's, or merge in your editor",
		Long: `Settle a change in conflict (your edits and the agent's overlap, and prsm left
the workspace file as you had it):
  mine     reject the change; your file stays as it is
  agent    your file becomes the agent's version; the change is accepted
  markers  both versions go into your file between conflict markers; once you
           have removed every marker, prsm accepts the change`,
		Args: exactArgs(2, "a change id and how: mine, agent or markers"),
		RunE: func(cmd *cobra.Command, args []string) error {
			how := args[1]
			switch how {
			case "mine", "agent", "markers":
			default:
				return usagef("use mine, agent or markers", "unknown way to resolve %q", printable(how))
			}
			ctx := cmd.Context()
			cl, _, err := a.connect(ctx)
			if err != nil {
				return err
			}
			return a.resolveChange(ctx, cl, a.sessionOrAny(*sessionID), args[0], how)
		},
	}
	c.Flags().StringVar(&a.say, "say", "", "a note for the agent on this decision")
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

// resolveChange settles change arg (an id or a prefix, which the server
// resolves) of session sessionID (or api.AnySession), in one request.
func (a *app) resolveChange(ctx context.Context, cl *client.Client, sessionID, arg, how string) error {
	ans, err := cl.ResolveWith(ctx, sessionID, arg, api.ResolveRequest{How: how, Say: a.say, Author: author})
	if err != nil {
		return err
	}
	if a.jsonOut {
		return printJSON(a.stdio.Out, ans)
	}
	// Aligned as accept's and reject's lines are.
	tw := tabwriter.NewWriter(a.stdio.Out, 0, 0, 2, ' ', 0)
	for _, r := range ans.Records {
		fmt.Fprintf(tw, "%s\t%s\t%s\t(%s)\n", r.Status, printable(r.ID), quoteName(r.RelPath), r.SyncState)
	}
	tw.Flush()
	switch how {
	case "mine":
		fmt.Fprintln(a.stdio.Out, "kept your version; the agent's change is rejected")
	case "agent":
		fmt.Fprintln(a.stdio.Out, "your file now has the agent's version")
	default:
		fmt.Fprintln(a.stdio.Out, "both versions are in your file between conflict markers; remove them and prsm accepts the change")
	}
	return nil
}
