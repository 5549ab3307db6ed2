package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/feedback"
)

// changesNotesCmds are `prsm changes comment` and `prsm changes show`.
func (a *app) changesNotesCmds(sessionID *string) []*cobra.Command {
	return []*cobra.Command{changesCommentCmd(a, sessionID), changesShowCmd(a, sessionID)}
}

// changesCommentCmd is `prsm changes comment ID [--lines N-M] TEXT`.
func changesCommentCmd(a *app, sessionID *string) *cobra.Command {
	var lines string
	c := &cobra.Command{
		Use:     "comment ID [--lines N[-M]] TEXT [--session ID]",
		Example: "  prsm changes comment e1 --lines 12-18 \"why a loop here?\"",
		Short:   "Comment on lines of a change, without deciding it: the agent hears it at its next step",
		Args:    exactArgs(2, "a change id and the comment's text"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cl, _, err := a.connect(ctx)
			if err != nil {
				return err
			}
			f, err := cl.Comment(ctx, a.sessionOrAny(*sessionID), args[0], api.CommentRequest{Lines: lines, Text: args[1], Author: author})
			if err != nil {
				return err
			}
			return a.answer(f, func() {
				where := quoteName(f.Path)
				if f.Lines != "" {
					where += ", lines " + f.Lines
				}
				fmt.Fprintf(a.stdio.Out, "commented on %s (change %s): %s\n", where, printable(f.RecordID), feedback.Status(f))
			})
		},
	}
	c.Flags().StringVar(&lines, "lines", "", "the lines of the change's new side it is about: N or N-M, from 1")
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

// changesShowCmd is `prsm changes show ID`: a change, and the notes and
// comments on it with what became of each.
func changesShowCmd(a *app, sessionID *string) *cobra.Command {
	c := &cobra.Command{
		Use:     "show ID [--session ID]",
		Example: "  prsm changes show e1",
		Short:   "Show a change, and the notes and comments on it with whether its agent heard them",
		Args:    exactArgs(1, "a change id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cl, _, err := a.connect(ctx)
			if err != nil {
				return err
			}
			recs, err := cl.ChangesOf(ctx, a.sessionOrAny(*sessionID), args[0])
			if err != nil {
				return err
			}
			var items []*prsm.Feedback
			if len(recs.Records) > 0 {
				r := recs.Records[0]
				if items, err = cl.Feedback(ctx, r.SessionID, changeIn(recs.Records, args[0])); err != nil {
					return err
				}
			}
			out := struct {
				Records  []*prsm.Record   `json:"records"`
				Feedback []*prsm.Feedback `json:"feedback"`
			}{recs.Records, items}
			if out.Feedback == nil {
				out.Feedback = []*prsm.Feedback{}
			}
			return a.answer(out, func() { printChange(a.stdio.Out, recs.Records, items) })
		},
	}
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

// printChange prints records and, under them, the notes and comments on
// them: every byte of a note is shown, control bytes escaped.
func printChange(w io.Writer, recs []*prsm.Record, items []*prsm.Feedback) {
	for _, r := range recs {
		fields(w, "change", r.ID, "file", r.RelPath, "status", r.Status+" ("+r.SyncState+")", "tool", r.ToolName+" by "+r.AgentID,
			"lines", lineCounts(r), "at", r.Timestamp.Local().Format("2006-01-02 15:04:05"))
		var hs []string
		for _, h := range r.Hunks {
			hs = append(hs, fmt.Sprintf("%d (+%d,%d) %s", h.Index, h.NewStart, h.NewLines, prsm.HunkStatus(r.Status, h.Status)))
		}
		if len(hs) > 0 {
			fields(w, "hunks", strings.Join(hs, "; "))
		}
	}
	if len(items) == 0 {
		fmt.Fprintln(w, "no notes or comments")
		return
	}
	fmt.Fprintf(w, "notes and comments (%d):\n", len(items))
	for _, f := range items {
		what := f.Kind
		if f.Decision != "" {
			what += " on " + f.Decision
		}
		if f.Lines != "" {
			what += ", lines " + f.Lines
		}
		by := ""
		if f.Author != "" {
			by = " by " + f.Author
		}
		fmt.Fprintf(w, "- %s%s, %s: %s\n", printable(what), printable(by), age(f.CreatedAt), printable(feedback.Status(f)))
		if f.Text != "" {
			fmt.Fprintf(w, "  %s\n", strings.ReplaceAll(printableLines(f.Text), "\n", "\n  "))
		}
	}
}
