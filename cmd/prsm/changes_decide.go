package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
)

// reviewCmd is `prsm changes accept` (accept) or `prsm changes reject`.
func (a *app) reviewCmd(sessionID *string, accept bool) *cobra.Command {
	verb, done := "reject", prsm.StatusRejected
	short := "Reject changes: take their deltas out of the workspace and the worktree (later changes of the file too)"
	if accept {
		verb, done = "accept", prsm.StatusAccepted
		short = "Accept changes (in review mode this applies them to the workspace)"
	}
	var file, hunks string
	var all, yes, withEarlier bool
	use := verb + " [ID... | --file P | --all] [--hunk N[,M]] [--say TEXT] [--session ID] [--yes]"
	if accept {
		use = verb + " [ID... | --file P | --all] [--hunk N[,M]] [--with-earlier] [--say TEXT] [--session ID] [--yes]"
	}
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Example: "  prsm changes " + verb + " e1\n  prsm changes " + verb + " e1 --hunk 1\n  prsm changes " + verb +
			" --file src/app.go\n  prsm changes " + verb + " --all --yes\n  prsm changes " + verb + " e1 --hunk 2 --say \"keep the retry loop; only fix the timeout\"",
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("hunk") {
				if len(args) != 1 || file != "" || all {
					return usagef("usage: prsm changes "+verb+" ID --hunk N[,M]",
						"--hunk takes one change id (its hunks are numbered from 0: `prsm changes diff ID`)")
				}
				idx, err := parseHunks(hunks)
				if err != nil {
					return err
				}
				return a.decideHunks(cmd.Context(), *sessionID, args[0], verb, accept, idx, withEarlier || yes)
			}
			n := 0
			for _, set := range []bool{len(args) > 0, file != "", all} {
				if set {
					n++
				}
			}
			if n != 1 {
				return usagef("usage: prsm changes "+verb+" [ID... | --file P | --all]",
					"prsm changes %s takes exactly one of: change ids, --file P or --all", verb)
			}
			ctx := cmd.Context()
			cl, p, err := a.connect(ctx)
			if err != nil {
				return err
			}
			s, err := a.resolveSessionOwning(ctx, cl, *sessionID, ownsChanges(ctx, cl, args))
			if err != nil {
				return err
			}
			rel := p.fileArg(file)
			if len(args) == 0 && file == "" && s.PendingCount > bulkListMax {
				return a.bulkJob(ctx, cl, s, verb, done, accept, yes)
			}
			before, err := cl.Changes(ctx, s.ID, "", "")
			if err != nil {
				return err
			}
			var answers []*prsm.Record
			var ids []string
			if len(args) > 0 {
				for _, arg := range args {
					id, err := resolveChangeID(before, arg)
					if err != nil {
						return err
					}
					if !namesChange(before, id) {
						// Every id is checked before any is acted on.
						return prsm.Errorf(prsm.ErrNotFound, "change_not_found", "`prsm changes` lists them; nothing was "+verb+"ed",
							"no change %q in session %s", printable(arg), s.ID)
					}
					ids = append(ids, id)
				}
				if accept {
					// A conflict is resolved, never merely accepted.
					for _, id := range ids {
						if !inConflict(before, id) {
							continue
						}
						how, err := a.askResolve(id)
						if err != nil {
							return err
						}
						if len(ids) > 1 {
							return usagef("accept the others apart", "change %s is in conflict; settle it with `prsm changes resolve %s %s` on its own", printable(id), printable(id), how)
						}
						return a.resolveChange(ctx, cl, s.ID, id, how)
					}
					// In review mode an accept applies the earlier pending
					// changes of its file first: asked before, never after.
					if err := a.confirmEarlier(ctx, cl, s, ids, withEarlier || yes); err != nil {
						return err
					}
				}
				for _, id := range ids {
					recs, err := reviewOne(ctx, cl, accept, s.ID, id, a.say)
					if err != nil {
						if len(answers) > 0 {
							_ = a.printReview(ctx, cl, s, verb, done, ids, before, answers)
						}
						return err
					}
					answers = append(answers, recs.Records...)
				}
			} else {
				ok, err := a.confirmBulk(ctx, cl, s, verb, rel, file, yes)
				if err != nil || !ok {
					return err
				}
				recs, err := cl.BulkWith(ctx, s.ID, accept, rel, api.BulkRequest{Say: a.say, Author: author})
				if err != nil {
					return err
				}
				if err := a.printReview(ctx, cl, s, verb, done, ids, before, recs.Records); err != nil || a.jsonOut || recs.Job == nil {
					return err
				}
				// A bulk decision leaves conflicts (and their files' other
				// changes) pending: each is resolved, never decided in bulk.
				var conflicted []string
				for _, r := range before {
					if r.Status == prsm.StatusPending && r.SyncState == prsm.SyncConflict && (rel == "" || r.RelPath == rel) {
						conflicted = append(conflicted, r.ID)
					}
				}
				printLeft(a.stdio.Out, recs.Job.Left, conflicted)
				return nil
			}
			return a.printReview(ctx, cl, s, verb, done, ids, before, answers)
		},
	}
	c.Flags().StringVar(&file, "file", "", "every pending change of this file")
	c.Flags().BoolVar(&all, "all", false, "every pending change of the session")
	c.Flags().StringVar(&hunks, "hunk", "", "only these hunks of the one change named (indexes from 0, comma separated)")
	if accept {
		c.Flags().BoolVar(&withEarlier, "with-earlier", false, "in review mode, also accept the earlier pending changes of the same file, which an accept applies first (else prsm asks, or off a terminal refuses)")
		c.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask before a bulk accept, or before accepting earlier changes with the ones named")
	} else {
		c.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask before a bulk reject")
	}
	c.Flags().StringVar(&a.say, "say", "", "a note for the agent on this decision: it hears it, with the file, the lines and the hunk, at its next step")
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

// author is who a decision or a comment of the CLI is from.
const author = "cli"

// parseHunks reads --hunk's list of hunk indexes.
func parseHunks(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, usagef("usage: --hunk N[,M]: hunk indexes, from 0", "--hunk %q: not a hunk index", printable(f))
		}
		out = append(out, n)
	}
	return out, nil
}

// decideHunks is `prsm changes accept|reject ID --hunk N[,M]`: it prints
// each record the decision changed with its hunks' states, and the hunks
// of later changes a reject took with it. It sends the id as given, and
// the session only when one was named: the server resolves both, in the
// one request.
func (a *app) decideHunks(ctx context.Context, sessionID, arg, verb string, accept bool, idx []int, withEarlier bool) error {
	cl, _, err := a.connect(ctx)
	if err != nil {
		return err
	}
	sid := a.sessionOrAny(sessionID)
	req := api.HunksRequest{WithEarlier: withEarlier, Say: a.say, Author: author}
	if accept {
		req.Accept = idx
	} else {
		req.Reject = idx
	}
	ans, err := cl.DecideHunksWith(ctx, sid, arg, req)
	if code(err) == string(api.CodeNeedsEarlier) {
		// The hunks settle the change as accepted, which applies the
		// earlier pending changes of its file first: ask, then again.
		named, err := cl.ChangesOf(ctx, sid, arg)
		if err != nil {
			return err
		}
		s := &prsm.Session{ID: named.Records[0].SessionID}
		id := changeIn(named.Records, arg)
		if err := a.confirmEarlier(ctx, cl, s, []string{id}, false); err != nil {
			return err
		}
		req.WithEarlier = true
		ans, err = cl.DecideHunksWith(ctx, s.ID, id, req)
		if err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	id := changeIn(ans.Records, arg)
	if a.jsonOut {
		return printJSON(a.stdio.Out, ans)
	}
	w := a.stdio.Out
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range ans.Records {
		var hs []string
		for _, h := range r.Hunks {
			st := prsm.HunkStatus(r.Status, h.Status)
			if st == prsm.StatusPending {
				st = "still pending"
			}
			hs = append(hs, fmt.Sprintf("hunk %d %s", h.Index, st))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t(%s; %s)\n", r.Status, printable(r.ID), quoteName(r.RelPath), strings.Join(hs, ", "), r.SyncState)
	}
	for _, r := range ans.Earlier {
		fmt.Fprintf(tw, "%s\t%s\t%s\t(%s; earlier of the same file, applied first)\n", r.Status, printable(r.ID), quoteName(r.RelPath), r.SyncState)
	}
	tw.Flush()
	for _, c := range ans.Cascaded {
		fmt.Fprintf(w, "rejected with it: hunk %d of %s (its lines were built on the rejected ones)\n", c.Index, printable(c.ID))
	}
	fmt.Fprintf(w, "%sed %s of %s\n", verb, prsm.Plural(len(idx), "hunk"), printable(id))
	return nil
}

// inConflict says whether change id (a record or a tool call's) has a
// record in conflict that is not rejected.
func inConflict(recs []*prsm.Record, id string) bool {
	for _, r := range recs {
		if (r.ID == id || r.ToolCallID == id) && r.SyncState == prsm.SyncConflict && r.Status != prsm.StatusRejected {
			return true
		}
	}
	return false
}

// askResolve asks, on a terminal, how to settle a change in conflict that
// the user accepted; off a terminal it refuses and says how to choose.
func (a *app) askResolve(id string) (string, error) {
	hint := fmt.Sprintf("choose with `prsm changes resolve %s mine|agent|markers`", printable(id))
	if !isTTY(a.stdio.In) {
		return "", usagef(hint, "change %s is in conflict with your edits: accepting it would change nothing; say how to settle it", printable(id))
	}
	w := a.stdio.Err
	fmt.Fprintf(w, "change %s is in conflict with your edits. Keep [m]ine, take the [a]gent's, or merge in your [e]ditor? ", printable(id))
	line, _ := bufio.NewReader(a.stdio.In).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "m", "mine":
		return "mine", nil
	case "a", "agent":
		return "agent", nil
	case "e", "editor", "markers":
		return "markers", nil
	}
	return "", fmt.Errorf("aborted; nothing was changed (%s)", hint)
}

// reviewOne accepts or rejects one change; an accept takes the earlier
// pending changes of its file with it, which confirmEarlier asked about.
// say is the user's note, for the agent.
func reviewOne(ctx context.Context, cl *client.Client, accept bool, sessionID, id, say string) (*api.Records, error) {
	if accept {
		return cl.AcceptWith(ctx, sessionID, id, api.AcceptRequest{WithEarlier: true, Say: say, Author: author})
	}
	return cl.RejectWith(ctx, sessionID, id, api.RejectRequest{Say: say, Author: author})
}

// confirmEarlier asks before an accept of ids that applies earlier
// pending changes of the same files first (review mode), which the user
// did not name: it lists them and, unless told (--with-earlier, --yes),
// asks on a terminal and refuses off one, as a bulk accept does.
func (a *app) confirmEarlier(ctx context.Context, cl *client.Client, s *prsm.Session, ids []string, told bool) error {
	var earlier []*prsm.Record
	seen := map[string]bool{}
	for _, id := range ids {
		ans, err := cl.AcceptWith(ctx, s.ID, id, api.AcceptRequest{DryRun: true})
		if err != nil {
			return err
		}
		for _, r := range ans.Records {
			seen[r.ID] = true
		}
		for _, r := range ans.Earlier {
			if !seen[r.ID] {
				seen[r.ID] = true
				earlier = append(earlier, r)
			}
		}
	}
	// A change named among ids is no surprise, whatever the order.
	earlier = slices.DeleteFunc(earlier, func(r *prsm.Record) bool { return namedAmong(r, ids) })
	if len(earlier) == 0 || told {
		return nil
	}
	w := a.stdio.Err
	fmt.Fprintf(w, "accepting %s first applies %s of the same file, not named:\n", printable(strings.Join(ids, ", ")), prsm.Plural(len(earlier), "earlier pending change"))
	t := newTable(w, "  ID", "TYPE", "FILE", "TOOL", "LINES")
	for _, r := range earlier {
		t.row("  "+r.ID, r.ChangeType, quoteName(r.RelPath), r.ToolName, lineCounts(r))
	}
	t.flush()
	if !isTTY(a.stdio.In) {
		return usagef("pass --with-earlier (or --yes) to accept them too, or decide them first",
			"stdin is not a terminal, so prsm cannot ask before it accepts %s with the ones named; nothing was accepted", prsm.Plural(len(earlier), "earlier change"))
	}
	if !a.confirm("Accept them too?") {
		return fmt.Errorf("aborted; nothing was accepted")
	}
	return nil
}

// namedAmong says whether r is a change ids name (its own id or its tool
// call's).
func namedAmong(r *prsm.Record, ids []string) bool {
	return slices.Contains(ids, r.ID) || slices.Contains(ids, r.ToolCallID)
}

// code is the API error code of err, or "".
func code(err error) string {
	var ae *client.APIError
	if errors.As(err, &ae) {
		return ae.Code
	}
	return ""
}

// confirmBulk lists the pending records a bulk accept or reject will touch
// and asks before going on, unless --yes is given; off a terminal it
// refuses without --yes.
func (a *app) confirmBulk(ctx context.Context, cl *client.Client, s *prsm.Session, verb, rel, file string, yes bool) (bool, error) {
	pend, err := cl.Changes(ctx, s.ID, prsm.StatusPending, rel)
	if err != nil {
		return false, err
	}
	where := "session " + s.ID
	if file != "" {
		where = quoteName(file) + " in " + where
	}
	if len(pend) == 0 {
		if a.jsonOut {
			return false, printJSON(a.stdio.Out, []*prsm.Record{})
		}
		fmt.Fprintf(a.stdio.Out, "nothing to %s: no pending changes of %s\n", verb, where)
		return false, nil
	}
	ask := !yes
	if a.jsonOut && !ask {
		return true, nil
	}
	w := a.stdio.Err
	fmt.Fprintf(w, "will %s %s of %s:\n", verb, prsm.Plural(len(pend), "pending change"), where)
	t := newTable(w, "  ID", "TYPE", "FILE", "TOOL", "LINES")
	for _, r := range pend {
		t.row("  "+r.ID, r.ChangeType, quoteName(r.RelPath), r.ToolName, lineCounts(r))
	}
	t.flush()
	if !ask {
		return true, nil
	}
	if !isTTY(a.stdio.In) {
		// A bulk decision is never taken without a yes; off a terminal
		// only --yes can give one.
		return false, usagef("pass --yes to act without asking",
			"stdin is not a terminal, so prsm cannot ask before it %ss %s; nothing was %sed", verb, prsm.Plural(len(pend), "change"), verb)
	}
	if a.confirm("Proceed?") {
		return true, nil
	}
	return false, fmt.Errorf("aborted; nothing was %sed", verb)
}

// printReview prints what an accept or reject did: a line per record whose
// status it changed (cascades and review-mode chains included) or that it
// named, then a summary.
func (a *app) printReview(ctx context.Context, cl *client.Client, s *prsm.Session, verb, done string, ids []string, before, answers []*prsm.Record) error {
	after, err := cl.Changes(ctx, s.ID, "", "")
	if err != nil {
		return err
	}
	was := map[string]string{}
	for _, r := range before {
		was[r.ID] = r.Status
	}
	answered := map[string]bool{}
	for _, r := range answers {
		answered[r.ID] = true
	}
	// named: what the user asked for (every answer of a bulk operation).
	named := func(r *prsm.Record) bool { return ids == nil || namedAmong(r, ids) }
	var out []*prsm.Record
	changed, extra, conflicts := 0, 0, 0
	for _, r := range after {
		moved := was[r.ID] != "" && was[r.ID] != r.Status
		if !moved && !answered[r.ID] && (ids == nil || !named(r)) {
			continue
		}
		out = append(out, r)
		if moved {
			changed++
			if !named(r) {
				extra++
			}
			if r.SyncState == prsm.SyncConflict {
				conflicts++
			}
		}
	}
	if a.jsonOut {
		if out == nil {
			out = []*prsm.Record{}
		}
		return printJSON(a.stdio.Out, out)
	}
	w := a.stdio.Out
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range out {
		note := r.SyncState
		if was[r.ID] == r.Status {
			note += ", already " + r.Status
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t(%s)\n", r.Status, printable(r.ID), quoteName(r.RelPath), note)
	}
	tw.Flush()
	switch {
	case changed == 0:
		fmt.Fprintf(w, "nothing to %s: no change among them was left to %s\n", verb, verb)
	case extra > 0 && verb == "reject":
		fmt.Fprintf(w, "%s %s (%d by cascade: later changes of the same file)\n", done, prsm.Plural(changed, "change"), extra)
	case extra > 0:
		fmt.Fprintf(w, "%s %s (%d earlier of the same file applied first)\n", done, prsm.Plural(changed, "change"), extra)
	default:
		fmt.Fprintf(w, "%s %s\n", done, prsm.Plural(changed, "change"))
	}
	if conflicts > 0 {
		fmt.Fprintf(w, "%s in conflict: prsm left those workspace files as they are; merge them by hand\n", prsm.Plural(conflicts, "change"))
	}
	return nil
}

// printLeft says what a bulk decision left pending: n changes, for the
// conflicts among them (their ids, when known).
func printLeft(w io.Writer, n int, conflicted []string) {
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "left %s pending: in conflict with your edits, or of a file that is; resolve each with `prsm changes resolve ID mine|agent|markers`\n", prsm.Plural(n, "change"))
	for _, id := range conflicted {
		fmt.Fprintf(w, "  prsm changes resolve %s mine|agent|markers\n", printable(id))
	}
}
