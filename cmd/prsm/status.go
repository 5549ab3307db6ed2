package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (a *app) statusCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "status",
		Short: "Show the workspace's server, sessions and pending changes",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cl, _, err := a.connect(ctx)
			if err != nil {
				return err
			}
			st, err := cl.Status(ctx)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return printJSON(a.stdio.Out, st)
			}
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
			return nil
		},
	}
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}
