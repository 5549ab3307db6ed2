package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/internal/safepath"
)

// changesCmd is `prsm changes`: list, diff, accept and reject records.
func (a *app) changesCmd() *cobra.Command {
	var status, file, sessionID string
	c := &cobra.Command{
		Use:   "changes [--session ID] [--file P] [--status pending|accepted|rejected]",
		Short: "List the file changes of a session; diff, accept or reject them",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("see `prsm changes --help`", "unknown subcommand %q of prsm changes; use diff, accept, reject, review or resolve", args[0])
			}
			return askSession(a, cmd.Context(), sessionID, func(ctx context.Context, cl *client.Client, s *prsm.Session) ([]*prsm.Record, error) {
				return cl.Changes(ctx, s.ID, status, a.proj.fileArg(file))
			}, func(s *prsm.Session, recs []*prsm.Record) { a.printChanges(s, recs, status, file) })
		},
	}
	c.PersistentFlags().StringVar(&sessionID, "session", "", "the session (id or unique prefix); default: the one active session")
	c.Flags().StringVar(&file, "file", "", "only changes of this file")
	c.Flags().StringVar(&status, "status", "", "only changes with this status: pending, accepted, rejected, partial or rewound")
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	c.AddCommand(a.changesDiffCmd(&sessionID), a.reviewCmd(&sessionID, true), a.reviewCmd(&sessionID, false), a.changesReviewCmd(&sessionID), a.changesResolveCmd(&sessionID))
	return c
}

// fileArg turns a user-given path into what the server expects: relative
// paths are taken from the current directory when it is inside the
// workspace, else from the workspace root.
func (p *project) fileArg(file string) string {
	if file == "" || filepath.IsAbs(file) {
		return file
	}
	wd, err := os.Getwd()
	if err != nil {
		return file
	}
	if r, err := filepath.EvalSymlinks(wd); err == nil {
		wd = r
	}
	root := p.repo.Root
	if p.here != "" {
		root = p.here
	}
	rel, err := filepath.Rel(root, wd)
	if err != nil || safepath.Escapes(rel) {
		return file
	}
	return filepath.ToSlash(filepath.Join(rel, file))
}

// printChanges prints records as a table grouped by file.
func (a *app) printChanges(s *prsm.Session, recs []*prsm.Record, status, file string) {
	w := a.stdio.Out
	if len(recs) == 0 {
		what := "changes"
		if status != "" {
			what = status + " changes"
		}
		if file != "" {
			what += " of " + quoteName(file)
		}
		fmt.Fprintf(w, "no %s in session %s (%s) yet\n", what, s.ID, printable(s.Name))
		return
	}
	pending, rewound := 0, 0
	for _, r := range recs {
		switch r.Status {
		case prsm.StatusPending:
			pending++
		case prsm.StatusRewound:
			rewound++
		}
	}
	more := ""
	if rewound > 0 {
		more = fmt.Sprintf(", %d rewound", rewound)
	}
	fmt.Fprintf(w, "session %s (%s, %s): %s, %d pending%s\n", s.ID, printable(s.Name), s.Mode, prsm.Plural(len(recs), "change"), pending, more)
	byFile := map[string][]*prsm.Record{}
	var files []string
	for _, r := range recs {
		if _, ok := byFile[r.RelPath]; !ok {
			files = append(files, r.RelPath)
		}
		byFile[r.RelPath] = append(byFile[r.RelPath], r)
	}
	sort.Strings(files)
	rows := [][]string{{"ID", "TYPE", "STATUS", "SYNC", "TOOL", "AGENT", "LINES", "AGE", "SUMMARY"}}
	var heads []int // index in rows before which a file header goes
	var headNames []string
	for _, f := range files {
		heads = append(heads, len(rows))
		headNames = append(headNames, quoteName(f))
		for _, r := range byFile[f] {
			rows = append(rows, []string{r.ID, r.ChangeType, r.Status, r.SyncState, r.ToolName, r.AgentID, lineCounts(r), age(r.Timestamp), shortSummary(r.Summary)})
		}
	}
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			row[i] = printable(cell)
			if n := len([]rune(row[i])); n > widths[i] {
				widths[i] = n
			}
		}
	}
	next := 0
	for i, row := range rows {
		if next < len(heads) && heads[next] == i {
			fmt.Fprintf(w, "%s\n", headNames[next])
			next++
		}
		var b strings.Builder
		b.WriteString("  ")
		for j, cell := range row {
			b.WriteString(cell)
			if j < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[j]-len([]rune(cell))+2))
			}
		}
		fmt.Fprintln(w, b.String())
	}
}

// shortSummary is a record's summary cut for a table cell.
func shortSummary(s string) string {
	if r := []rune(s); len(r) > 50 {
		return string(r[:49]) + "…"
	}
	return s
}

// lineCounts is "+added/-removed" (or "binary"), with an exec-bit change.
func lineCounts(r *prsm.Record) string {
	var s string
	if r.Binary {
		s = "binary"
	} else {
		add, del := 0, 0
		for _, x := range r.AddedRanges {
			add += x.EndLine - x.StartLine + 1
		}
		for _, x := range r.RemovedRanges {
			del += x.EndLine - x.StartLine + 1
		}
		s = fmt.Sprintf("+%d/-%d", add, del)
	}
	if r.ChangeType == prsm.ChangeModify {
		switch before, after := r.ModeBefore&0o111 != 0, r.ModeAfter&0o111 != 0; {
		case !before && after:
			s += " +x"
		case before && !after:
			s += " -x"
		}
	}
	return s
}

// changesDiffCmd is `prsm changes diff`.
func (a *app) changesDiffCmd(sessionID *string) *cobra.Command {
	var file string
	var every bool
	c := &cobra.Command{
		Use:   "diff [ID... | --file P] [--all] [--session ID]",
		Short: "Show the unified diff of changes: the pending ones (of a file with --file), every one with --all, or those named",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && file != "" {
				return usagef("usage: "+cmd.UseLine(), "give change ids or --file, not both")
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
			all, err := cl.Changes(ctx, s.ID, "", p.fileArg(file))
			if err != nil {
				return err
			}
			var ids []string
			if len(args) > 0 {
				for _, arg := range args {
					id, err := resolveChangeID(all, arg)
					if err != nil {
						return err
					}
					ids = append(ids, id)
				}
			} else {
				for _, r := range all {
					if every || r.Status == prsm.StatusPending {
						ids = append(ids, r.ID)
					}
				}
				if len(ids) == 0 {
					what := "session " + s.ID
					if file != "" {
						what = quoteName(file) + " in " + what
					}
					kind := "pending changes"
					if every {
						kind = "changes"
					}
					fmt.Fprintf(a.stdio.Err, "no %s of %s\n", kind, what)
					if !every && len(all) > 0 {
						fmt.Fprintf(a.stdio.Err, "(%s decided: --all shows them)\n", prsm.Plural(len(all), "change"))
					}
					return nil
				}
			}
			view := viewFor(a.stdio.Out)
			for _, id := range ids {
				d, err := cl.Diff(ctx, s.ID, id)
				if err != nil {
					return err
				}
				writeDiffLabel(a.stdio.Out, diffLabel(all, id), view)
				writeDiff(a.stdio.Out, d, view)
			}
			return nil
		},
	}
	c.Flags().StringVar(&file, "file", "", "the changes of this file, in order")
	c.Flags().BoolVar(&every, "all", false, "every change, decided ones too (default: the pending ones)")
	return c
}

// colorOK says whether w is a terminal that wants colour.
func colorOK(w io.Writer) bool {
	return isTerminal(w) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}

// isTerminal says whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// isTTY says whether r is an interactive terminal.
func isTTY(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

const (
	red   = "\x1b[31m"
	green = "\x1b[32m"
	cyan  = "\x1b[36m"
	bold  = "\x1b[1m"
	reset = "\x1b[0m"
)

// diffView is how a diff is printed: for a person (visible: the files'
// control bytes shown in caret notation, tabs kept; colour when color is
// set too), or as the patch's exact bytes, which `git apply` takes.
type diffView struct{ visible, color bool }

// viewFor is the view of a diff printed to w: for a person on a
// terminal, the exact patch for a pipe or a file (a `> x.patch` must
// apply, CRLF lines and all). The names in it are quoted either way.
func viewFor(w io.Writer) diffView {
	return diffView{visible: isTerminal(w), color: colorOK(w)}
}

// diffLabel names the change id (a record, or a tool call's records)
// above its diff: its id, status, tool and file. Patch tools skip such
// a line before the first ---.
func diffLabel(all []*prsm.Record, id string) string {
	var status, tool, files []string
	for _, r := range all {
		if r.ID != id && r.ToolCallID != id {
			continue
		}
		if !slices.Contains(status, r.Status) {
			status = append(status, r.Status)
		}
		if !slices.Contains(tool, r.ToolName) {
			tool = append(tool, r.ToolName)
		}
		files = append(files, quoteName(r.RelPath))
	}
	what := strings.Join(files, ", ")
	if len(files) > 3 {
		what = prsm.Plural(len(files), "file")
	}
	return fmt.Sprintf("change %s (%s, %s): %s", printable(id), printable(strings.Join(status, "/")), printable(strings.Join(tool, "/")), what)
}

func writeDiffLabel(w io.Writer, label string, v diffView) {
	if v.color {
		label = bold + label + reset
	}
	fmt.Fprintln(w, label)
}

// writeDiff prints a unified diff as v says. The diff is the files' own
// bytes: for a person, every line's control bytes are shown (visibleLine),
// so that no line hides itself or another behind a \r or an escape.
func writeDiff(w io.Writer, d string, v diffView) {
	if !v.visible {
		io.WriteString(w, d)
		return
	}
	for _, line := range strings.SplitAfter(d, "\n") {
		if line == "" {
			continue
		}
		text := visibleLine(strings.TrimSuffix(line, "\n"))
		if v.color {
			switch {
			case strings.HasPrefix(line, "+++ "), strings.HasPrefix(line, "--- "), strings.HasPrefix(line, "diff --git "):
				text = bold + text + reset
			case strings.HasPrefix(line, "+"):
				text = green + text + reset
			case strings.HasPrefix(line, "-"):
				text = red + text + reset
			case strings.HasPrefix(line, "@@"):
				text = cyan + text + reset
			}
		}
		fmt.Fprintln(w, text)
	}
}

// namesChange reports whether id is a record's or a tool call's of recs.
func namesChange(recs []*prsm.Record, id string) bool {
	for _, r := range recs {
		if r.ID == id || r.ToolCallID == id {
			return true
		}
	}
	return false
}

// ownsChanges says whether a session has a change for every one of the
// ids (or unique prefixes) given; nil when none is given.
func ownsChanges(ctx context.Context, cl *client.Client, ids []string) func(*prsm.Session) bool {
	if len(ids) == 0 {
		return nil
	}
	return func(s *prsm.Session) bool {
		recs, err := cl.Changes(ctx, s.ID, "", "")
		if err != nil {
			return false
		}
		for _, arg := range ids {
			id, err := resolveChangeID(recs, arg)
			if err != nil || !namesChange(recs, id) {
				return false
			}
		}
		return true
	}
}

// sessionOrAny is the session a command names (--session, or the one
// whose worktree it runs in), or api.AnySession: for a request that names
// a change, whose session the server then finds.
func (a *app) sessionOrAny(sessionID string) string {
	if sessionID == "" {
		sessionID = a.inSession
	}
	if sessionID == "" {
		return api.AnySession
	}
	return sessionID
}

// changeIn is the id of the change arg names (exactly, or by a prefix the
// server resolved) among recs, the answer of a request that named it.
func changeIn(recs []*prsm.Record, arg string) string {
	if id, err := resolveChangeID(recs, arg); err == nil {
		return id
	}
	return arg
}

// resolveChangeID finds the record or tool call that arg names, exactly or
// by unique prefix, among a session's records. An unknown arg is passed
// through so the server names the error.
func resolveChangeID(recs []*prsm.Record, arg string) (string, error) {
	for _, r := range recs {
		if r.ID == arg || r.ToolCallID == arg {
			return arg, nil
		}
	}
	if arg == "" {
		return arg, nil
	}
	matches := prsm.ChangesPrefixed(recs, arg)
	switch len(matches) {
	case 0:
		return arg, nil
	case 1:
		return matches[0], nil
	}
	return "", usagef("give more characters of the id", "change id prefix %q matches %d changes: %s", arg, len(matches), strings.Join(matches, ", "))
}

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
	use := verb + " [ID... | --file P | --all] [--hunk N[,M]] [--session ID] [--yes]"
	if accept {
		use = verb + " [ID... | --file P | --all] [--hunk N[,M]] [--with-earlier] [--session ID] [--yes]"
	}
	c := &cobra.Command{
		Use:   use,
		Short: short,
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
					recs, err := reviewOne(ctx, cl, accept, s.ID, id)
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
				var recs *api.Records
				if accept {
					recs, err = cl.AcceptAll(ctx, s.ID, rel)
				} else {
					recs, err = cl.RejectAll(ctx, s.ID, rel)
				}
				if err != nil {
					return err
				}
				answers = recs.Records
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
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

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
	req := api.HunksRequest{WithEarlier: withEarlier}
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
			hs = append(hs, fmt.Sprintf("%d %s", h.Index, prsm.HunkStatus(r.Status, h.Status)))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t(hunks: %s; %s)\n", r.Status, printable(r.ID), quoteName(r.RelPath), strings.Join(hs, ", "), r.SyncState)
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
func reviewOne(ctx context.Context, cl *client.Client, accept bool, sessionID, id string) (*api.Records, error) {
	if accept {
		return cl.AcceptWith(ctx, sessionID, id, api.AcceptRequest{WithEarlier: true})
	}
	return cl.Reject(ctx, sessionID, id)
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
