package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
)

func (a *app) statusCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "status",
		Example: "  prsm status\n  prsm status --json",
		Short:   "Show the workspace's server, sessions and pending changes",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return ask(a, cmd.Context(), func(ctx context.Context, cl *client.Client) (*api.StatusResponse, error) {
				return cl.Status(ctx)
			}, func(st *api.StatusResponse) {
				kv := []string{
					"workspace", st.Workspace,
					"server", fmt.Sprintf("http://%s (pid %d, prsm %s)", st.Addr, st.PID, st.Version),
					"sessions", fmt.Sprintf("%d active, %d ended", st.ActiveSessions, st.EndedSessions),
					"pending", pendingLine(st),
					"watcher", st.Watcher,
				}
				for _, h := range st.Hooks {
					kv = append(kv, "hooks", fmt.Sprintf("session %s (%s): %s", h.SessionID, h.Name, hookLine(h)))
				}
				fields(a.stdio.Out, kv...)
				for _, c := range st.Conflicts {
					fmt.Fprintf(a.stdio.Out, "conflict: %s  %s: resolve with `prsm changes resolve %s mine|agent|markers`\n",
						printable(c.ID), printable(c.Path), printable(c.ID))
				}
				if more := st.ConflictCount - len(st.Conflicts); more > 0 {
					fmt.Fprintf(a.stdio.Out, "conflict: %d more; list them with `prsm changes --status pending`\n", more)
				}
				for _, l := range st.WatchLimits {
					fmt.Fprintf(a.stdio.Out, "%s (sessions %s)\n", printable(l.Line()), printable(strings.Join(l.Sessions, ", ")))
				}
				for _, h := range st.Hooks {
					if h.Warning != "" {
						fmt.Fprintf(a.stdio.Out, "warning: session %s (%s): %s\n", h.SessionID, printable(h.Name), printable(h.Warning))
					}
				}
				for _, n := range st.Notices {
					fmt.Fprintf(a.stdio.Out, "note: %s\n", printable(n))
				}
			})
		},
	}
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

// pendingLine counts the pending changes and, apart, those in conflict.
func pendingLine(st *api.StatusResponse) string {
	line := prsm.Plural(st.PendingCount, "change")
	if st.ConflictCount > 0 {
		line += fmt.Sprintf(", %d in conflict", st.ConflictCount)
	}
	return line
}

// hookLine says whose hooks reported for a session and how long ago the
// last hook event came.
func hookLine(h api.HookHealth) string {
	if h.LastHookAt == nil {
		return "no hook reported yet"
	}
	agent := h.Agent
	if agent == "" {
		agent = "agent"
	}
	return fmt.Sprintf("%s hooks, last event %s", agent, age(*h.LastHookAt))
}
