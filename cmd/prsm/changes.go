package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

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
		Use:     "changes [--session ID] [--file P] [--status pending|accepted|rejected|partial|rewound]",
		Example: "  prsm changes\n  prsm changes --status pending --file src/app.go\n  prsm changes --session my-run --json",
		Short:   "List the file changes of a session; diff, accept or reject them",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("see `prsm changes --help`", "unknown subcommand %q of prsm changes; use diff, accept, reject, review, resolve, comment or show", args[0])
			}
			ctx := cmd.Context()
			cl, p, err := a.connect(ctx)
			if err != nil {
				return err
			}
			var s *prsm.Session
			if sessionID == "" && a.inSession == "" {
				// No session named: the one active session, or with
				// several, all of them, a table each, as the page shows
				// them.
				active, err := cl.Sessions(ctx, prsm.SessionActive)
				if err != nil {
					return err
				}
				if len(active) > 1 {
					return a.changesOfEach(ctx, cl, active, status, p.fileArg(file), file)
				}
				if len(active) == 1 {
					s = &active[0]
				}
			}
			if s == nil {
				if s, err = a.resolveSession(ctx, cl, sessionID); err != nil {
					return err
				}
			}
			recs, err := cl.Changes(ctx, s.ID, status, p.fileArg(file))
			if err != nil {
				return err
			}
			return a.answer(recs, func() { a.printChanges(s, recs, status, file) })
		},
	}
	c.PersistentFlags().StringVar(&sessionID, "session", "", "the session (id or unique prefix); default: the one active session")
	c.Flags().StringVar(&file, "file", "", "only changes of this file")
	c.Flags().StringVar(&status, "status", "", "only changes with this status: pending, accepted, rejected, partial or rewound")
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	c.AddCommand(a.changesDiffCmd(&sessionID), a.reviewCmd(&sessionID, true), a.reviewCmd(&sessionID, false), a.changesReviewCmd(&sessionID), a.changesResolveCmd(&sessionID))
	c.AddCommand(a.changesNotesCmds(&sessionID)...)
	return c
}

// changesOfEach prints the changes of each session, a table each (as
// JSON, one list of them all: each record names its session).
func (a *app) changesOfEach(ctx context.Context, cl *client.Client, sessions []prsm.Session, status, rel, file string) error {
	var all []*prsm.Record
	var each [][]*prsm.Record
	for i := range sessions {
		recs, err := cl.Changes(ctx, sessions[i].ID, status, rel)
		if err != nil {
			return err
		}
		all = append(all, recs...)
		each = append(each, recs)
	}
	return a.answer(all, func() {
		for i, recs := range each {
			if i > 0 {
				fmt.Fprintln(a.stdio.Out)
			}
			a.printChanges(&sessions[i], recs, status, file)
		}
	})
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
			st := r.Status
			if r.Commit != "" {
				st += " @" + r.Commit[:min(len(r.Commit), 8)] // committed by prsm commit
			}
			rows = append(rows, []string{r.ID, r.ChangeType, st, r.SyncState, r.ToolName, r.AgentID, lineCounts(r), age(r.Timestamp), shortSummary(r.Summary)})
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
		add, del, ok := linesLeft(r)
		if !ok {
			add, del = 0, 0
			for _, x := range r.AddedRanges {
				add += x.EndLine - x.StartLine + 1
			}
			for _, x := range r.RemovedRanges {
				del += x.EndLine - x.StartLine + 1
			}
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

// linesLeft counts the lines of a change some of whose hunks were
// rejected alone: those of the hunks left, pending or accepted, which is
// what the change still does; ok is false for a change with no hunk so
// rejected (its ranges count it).
func linesLeft(r *prsm.Record) (add, del int, ok bool) {
	if r.Status != prsm.StatusPending && r.Status != prsm.StatusPartial {
		return 0, 0, false
	}
	for _, h := range r.Hunks {
		if h.Status == prsm.StatusRejected {
			ok = true
			continue
		}
		add += h.NewLines
		del += h.OldLines
	}
	return add, del, ok
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
