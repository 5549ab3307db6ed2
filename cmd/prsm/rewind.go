package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// rewindCmd is `prsm rewind CP`: roll the session back to a checkpoint.
func (a *app) rewindCmd() *cobra.Command {
	var sessionID string
	var dryRun, yes bool
	c := &cobra.Command{
		Use:     "rewind CHECKPOINT [--dry-run] [--yes] [--say TEXT] [--session ID]",
		Example: "  prsm rewind 3f2a --dry-run\n  prsm rewind before-refactor --yes",
		Short:   "Roll a session back to a checkpoint: the worktree becomes it, later changes leave the workspace",
		Long: "Roll a session back to a checkpoint. The worktree becomes the checkpoint exactly; the\n" +
			"deltas of the later changes are taken out of the workspace (your own edits stay) and\n" +
			"the changes are set aside as rewound (`prsm changes --status rewound` lists them).\n" +
			"The plan is shown first. A safety checkpoint is taken before anything changes, so a\n" +
			"rewind can itself be undone with `prsm rewind SAFETY`.\n" +
			"CHECKPOINT is an id, a unique id prefix, or the name of one checkpoint of the session.",
		Args: exactArgs(1, "one checkpoint id or name (see `prsm checkpoint list`)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cl, _, err := a.connect(ctx)
			if err != nil {
				return err
			}
			// The server finds the checkpoint, and its session when
			// none is named, in one request.
			cp, err := cl.Checkpoint(ctx, a.sessionOrAny(sessionID), args[0])
			if err != nil {
				return err
			}
			s := &prsm.Session{ID: cp.SessionID}
			plan, err := cl.RewindPreview(ctx, s.ID, cp.ID)
			if err != nil {
				return err
			}
			title := fmt.Sprintf("rewind session %s to checkpoint %s (%s, %s)", s.ID, cp.ID,
				printable(cutRunes(cp.Name, 60)), cp.CreatedAt.Local().Format("2006-01-02 15:04:05"))
			ok, err := a.confirmPlan(plan, title, "Rewind", dryRun, yes)
			if err != nil || !ok {
				return err
			}
			res, err := cl.RewindWith(ctx, s.ID, cp.ID, api.RewindRequest{Say: a.say, Author: author})
			if err != nil {
				return err
			}
			return a.printRollbackResult(plan, res, "rewound to checkpoint "+cp.ID, sessionArg(sessionID, s.ID))
		},
	}
	c.Flags().StringVar(&sessionID, "session", "", "the session (id or unique prefix); default: the one active session")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "only show what the rewind would do")
	c.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask before rewinding")
	c.Flags().StringVar(&a.say, "say", "", "a note for the agent on the rewind")
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

// rollbackCmd is `prsm rollback`: undo the changes a selector picks.
func (a *app) rollbackCmd() *cobra.Command {
	var sessionID, agent, after, file string
	var last int
	var dryRun, yes bool
	c := &cobra.Command{
		Use:     "rollback (--agent A | --after TIME | --file P | --last N) [--dry-run] [--yes] [--say TEXT] [--session ID]",
		Example: "  prsm rollback --last 2 --dry-run\n  prsm rollback --file src/app.go\n  prsm rollback --after 10m --yes",
		Short:   "Undo the changes of an agent, after a time, of a file, or the last N",
		Long: "Undo the changes one selector picks, accepted ones too: their deltas leave the worktree\n" +
			"and the workspace (your own edits stay) and they are marked rejected. The plan is shown\n" +
			"first. A safety checkpoint is taken before anything changes, so a rollback can be undone\n" +
			"with `prsm rewind SAFETY`.\n\n" +
			"TIME is RFC 3339 (2026-11-22T10:00:00Z) or a duration meaning that long ago (10m, 2h).",
		Args: exactArgs(0, "no arguments; pick changes with --agent, --after, --file or --last"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			n := 0
			for _, f := range []string{"agent", "after", "file", "last"} {
				if cmd.Flags().Changed(f) {
					n++
				}
			}
			if n != 1 {
				return usagef("usage: prsm rollback (--agent A | --after TIME | --file P | --last N) [--dry-run] [--yes]",
					"prsm rollback takes exactly one of --agent, --after, --file or --last (got %d)", n)
			}
			req := api.RollbackRequest{AgentID: agent, File: file, Last: last}
			var what string
			switch {
			case cmd.Flags().Changed("agent"):
				if agent == "" {
					return usagef("name the agent: --agent A", "--agent needs an agent id")
				}
				what = "the changes of agent " + printable(agent)
			case cmd.Flags().Changed("after"):
				t, err := parseAfter(after, time.Now())
				if err != nil {
					return err
				}
				req.After = t.UTC().Format(time.RFC3339Nano)
				what = "the changes after " + t.Local().Format("2006-01-02 15:04:05")
			case cmd.Flags().Changed("file"):
				if file == "" {
					return usagef("name the file: --file P", "--file needs a path")
				}
			default:
				if last < 1 {
					return usagef("use --last N with N of 1 or more", "--last must be at least 1, got %d", last)
				}
				what = "the last " + prsm.Plural(last, "change")
			}
			ctx := cmd.Context()
			cl, p, err := a.connect(ctx)
			if err != nil {
				return err
			}
			s, err := a.resolveSession(ctx, cl, sessionID)
			if err != nil {
				return err
			}
			if req.File = p.fileArg(req.File); req.File != "" {
				what = "the changes of " + quoteName(req.File)
			}
			req.DryRun = true
			plan, err := cl.Rollback(ctx, s.ID, req)
			if err != nil {
				return err
			}
			if len(plan.Operations) == 0 {
				if a.jsonOut {
					return printJSON(a.stdio.Out, plan)
				}
				fmt.Fprintf(a.stdio.Out, "nothing to roll back: no live change of session %s matches (%s)\n", s.ID, what)
				return nil
			}
			title := fmt.Sprintf("roll back %s in session %s", what, s.ID)
			ok, err := a.confirmPlan(plan, title, "Roll back", dryRun, yes)
			if err != nil || !ok {
				return err
			}
			req.DryRun, req.Say, req.Author = false, a.say, author
			res, err := cl.Rollback(ctx, s.ID, req)
			if err != nil {
				return err
			}
			return a.printRollbackResult(plan, res, "rolled back", sessionArg(sessionID, s.ID))
		},
	}
	c.Flags().StringVar(&sessionID, "session", "", "the session (id or unique prefix); default: the one active session")
	c.Flags().StringVar(&agent, "agent", "", "every change of this agent")
	c.Flags().StringVar(&after, "after", "", "every change after TIME (RFC 3339, or a duration ago such as 10m)")
	c.Flags().StringVar(&file, "file", "", "every change of this file")
	c.Flags().IntVar(&last, "last", 0, "the last N changes")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "only show what the rollback would do")
	c.Flags().StringVar(&a.say, "say", "", "a note for the agent on the rollback")
	c.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask before rolling back")
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

// sessionArg is the session id to repeat in a suggested command: the
// resolved id when the user named a session, else none.
func sessionArg(flag, id string) string {
	if flag == "" {
		return ""
	}
	return id
}

// parseAfter reads --after: RFC 3339, or a duration meaning that long
// before now.
func parseAfter(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(strings.TrimSpace(strings.TrimSuffix(s, "ago"))); err == nil {
		if d < 0 {
			return time.Time{}, usagef("give a positive duration such as 10m", "--after %s is in the future", s)
		}
		return now.Add(-d), nil
	}
	return time.Time{}, usagef("use RFC 3339 (2026-11-22T10:00:00Z) or a duration ago (10m, 2h)", "cannot read --after %q as a time", s)
}

// confirmPlan shows a rollback plan and says whether to run it: not for a
// dry run, not when the user says no on a terminal. Off a terminal, or
// with --yes, it goes on without asking. verb names the action in the
// question ("Rewind 2 files?").
func (a *app) confirmPlan(plan *api.Plan, title, verb string, dryRun, yes bool) (bool, error) {
	ask := !dryRun && !yes && len(plan.Operations) > 0
	if ask && !isTTY(a.stdio.In) {
		// A rollback rewrites files: it is never done without a yes,
		// and off a terminal nobody can give one but --yes.
		writePlan(a.stdio.Err, plan, title)
		return false, usagef("pass --yes to act without asking", "stdin is not a terminal, so prsm cannot ask before it changes %s; nothing was changed", prsm.Plural(len(plan.Operations), "file"))
	}
	switch {
	case a.jsonOut && dryRun:
		return false, printJSON(a.stdio.Out, plan)
	case a.jsonOut && !ask:
		return true, nil
	case a.jsonOut:
		writePlan(a.stdio.Err, plan, title)
	default:
		writePlan(a.stdio.Out, plan, title)
	}
	if dryRun {
		fmt.Fprintln(a.stdio.Out, "dry run: nothing was changed")
		return false, nil
	}
	if !ask {
		return true, nil
	}
	if !a.confirm(fmt.Sprintf("%s %s?", verb, prsm.Plural(len(plan.Operations), "file"))) {
		return false, fmt.Errorf("aborted; nothing was changed")
	}
	return true, nil
}

// writePlan prints a rollback plan: what it does in plain words, each
// file operation with the records whose status it changes, those
// decisions, then conflicts and warnings.
func writePlan(w io.Writer, p *api.Plan, title string) {
	fmt.Fprintf(w, "%s:\n", title)
	for _, line := range p.Summary {
		fmt.Fprintf(w, "  %s\n", printable(line))
	}
	if len(p.Operations) == 0 {
		fmt.Fprintln(w, "  no file changes: the worktree already matches the checkpoint")
	} else {
		t := newTable(w, "  OPERATION", "PATH", "CHANGES")
		for _, op := range p.Operations {
			undoes := strings.Join(op.RecordIDs, ", ")
			if undoes == "" {
				undoes = "-"
			}
			t.row("  "+op.Type, quoteName(op.Path), undoes)
		}
		t.flush()
	}
	if len(p.Decisions) > 0 {
		fmt.Fprintf(w, "statuses (%d):\n", len(p.Decisions))
		t := newTable(w, "  CHANGE", "PATH", "TOOL", "NOW", "BECOMES")
		for _, d := range p.Decisions {
			t.row("  "+d.RecordID, quoteName(d.RelPath), d.ToolName, d.From, d.To)
		}
		t.flush()
	}
	if len(p.Conflicts) > 0 {
		fmt.Fprintf(w, "conflicts (%d; these workspace files will be left as they are):\n", len(p.Conflicts))
		for _, c := range p.Conflicts {
			fmt.Fprintf(w, "  %s: %s\n", quoteName(c.Path), printable(c.Reason))
		}
	}
	if len(p.Warnings) > 0 {
		fmt.Fprintf(w, "warnings (%d):\n", len(p.Warnings))
		for _, m := range p.Warnings {
			fmt.Fprintf(w, "  %s\n", printable(m))
		}
	}
}

// printRollbackResult prints what a rollback did and how to undo it. When
// the session moved on between the preview and the rollback, so that the
// rollback did something else than the preview showed, it says so and shows
// what ran.
func (a *app) printRollbackResult(preview, p *api.Plan, did, sessionFlag string) error {
	if a.jsonOut {
		return printJSON(a.stdio.Out, p)
	}
	w := a.stdio.Out
	if !sameOperations(preview, p) {
		writePlan(w, p, "note: the session changed since the preview; this is what ran")
	}
	fmt.Fprintf(w, "%s: %s\n", did, rollbackCounts(p))
	if len(p.Conflicts) > 0 {
		var paths []string
		for _, c := range p.Conflicts {
			paths = append(paths, quoteName(c.Path))
		}
		fmt.Fprintf(w, "%s in conflict, not changed in the workspace (merge by hand): %s\n",
			prsm.Plural(len(p.Conflicts), "file"), strings.Join(paths, ", "))
	}
	if p.SafetyCheckpointID != "" {
		undo := "prsm rewind " + p.SafetyCheckpointID
		if sessionFlag != "" {
			undo += " --session " + sessionFlag
		}
		fmt.Fprintf(w, "undo with: %s\n", printable(undo))
	}
	return nil
}

// rollbackCounts says what a rollback did: files, and records by the
// status they took ("3 files, 2 changes rewound, 1 decision undone").
func rollbackCounts(p *api.Plan) string {
	parts := []string{prsm.Plural(len(p.Operations), "file")}
	n := map[string]int{}
	for _, d := range p.Decisions {
		switch d.To {
		case prsm.StatusRewound, prsm.StatusRejected:
			n[d.To]++
		default:
			n["undone"]++
		}
	}
	if n[prsm.StatusRewound] > 0 {
		parts = append(parts, prsm.Plural(n[prsm.StatusRewound], "change")+" rewound")
	}
	if n[prsm.StatusRejected] > 0 {
		parts = append(parts, prsm.Plural(n[prsm.StatusRejected], "change")+" rejected")
	}
	if n["undone"] > 0 {
		parts = append(parts, prsm.Plural(n["undone"], "decision")+" undone")
	}
	return strings.Join(parts, ", ")
}

// sameOperations says whether two plans change the same files for the
// same records.
func sameOperations(a, b *api.Plan) bool {
	if len(a.Operations) != len(b.Operations) {
		return false
	}
	for i, x := range a.Operations {
		y := b.Operations[i]
		if x.Type != y.Type || x.Path != y.Path || strings.Join(x.RecordIDs, "\x00") != strings.Join(y.RecordIDs, "\x00") {
			return false
		}
	}
	return true
}
