package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
)

func (a *app) statusCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "status",
		Short: "Show the workspace's server, sessions and pending changes",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return ask(a, cmd.Context(), func(ctx context.Context, cl *client.Client) (*api.StatusResponse, error) {
				return cl.Status(ctx)
			}, func(st *api.StatusResponse) {
				fields(a.stdio.Out,
					"workspace", st.Workspace,
					"server", fmt.Sprintf("http://%s (pid %d, prsm %s)", st.Addr, st.PID, st.Version),
					"sessions", fmt.Sprintf("%d active, %d ended", st.ActiveSessions, st.EndedSessions),
					"pending", fmt.Sprintf("%d change(s)", st.PendingCount),
					"watcher", st.Watcher,
				)
				for id, why := range st.WatchFallbacks {
					fmt.Fprintf(a.stdio.Out, "  session %s: %s\n", id, why)
				}
				for _, n := range st.Notices {
					fmt.Fprintf(a.stdio.Out, "note: %s\n", n)
				}
			})
		},
	}
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}
