package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
)

func (a *app) gcCmd() *cobra.Command {
	var req api.GCRequest
	var budget string
	c := &cobra.Command{
		Use:     "gc [--keep-sessions N] [--keep-auto N] [--budget SIZE]",
		Example: "  prsm gc\n  prsm gc --budget 500M",
		Short:   "Drop old automatic checkpoints and ended sessions beyond retention; report the bytes freed",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if budget != "" {
				n, err := parseSize(budget)
				if err != nil {
					return usagef("use bytes or a size like 500M or 2G", "bad --budget %q", budget)
				}
				req.BudgetBytes = n
			}
			return ask(a, cmd.Context(), func(ctx context.Context, cl *client.Client) (*api.GCReport, error) {
				return cl.GC(ctx, req)
			}, func(rep *api.GCReport) { fmt.Fprintln(a.stdio.Out, rep.String()) })
		},
	}
	c.Flags().IntVar(&req.KeepSessions, "keep-sessions", 0, "ended sessions to keep (default 30)")
	c.Flags().IntVar(&req.KeepAuto, "keep-auto", 0, "automatic checkpoints to keep per session (default 200)")
	c.Flags().StringVar(&budget, "budget", "", "largest store size, e.g. 500M")
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

// parseSize reads 123, 10K, 500M or 2G (powers of 1024).
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(strings.ToUpper(s))
	mult := int64(1)
	for suffix, m := range map[string]int64{"K": 1 << 10, "M": 1 << 20, "G": 1 << 30} {
		if strings.HasSuffix(s, suffix) || strings.HasSuffix(s, suffix+"B") {
			mult = m
			s = strings.TrimSuffix(strings.TrimSuffix(s, "B"), suffix)
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size")
	}
	return n * mult, nil
}
