package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
)

// checkpointCmd is `prsm checkpoint`: create, list, show, annotate, delete
// and diff a session's checkpoints.
// checkpointCmds are the subcommands of `prsm checkpoint`.
type checkpointCmds struct{ *app }

func (a *app) checkpointCmd() *cobra.Command {
	var sessionID string
	cc := checkpointCmds{a}
	c := &cobra.Command{
		Use:   "checkpoint",
		Short: "Create, list, show, annotate, delete and diff a session's checkpoints",
		Args:  exactArgs(0, "a subcommand: create, list, show, annotate, delete or diff"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help() // with no subcommand: what they are
		},
	}
	c.PersistentFlags().StringVar(&sessionID, "session", "", "the session (id or unique prefix); default: the one active session")
	c.AddCommand(
		cc.checkpointCreateCmd(&sessionID),
		cc.checkpointListCmd(&sessionID),
		cc.checkpointShowCmd(&sessionID),
		cc.checkpointAnnotateCmd(&sessionID),
		cc.checkpointDeleteCmd(&sessionID),
		cc.checkpointDiffCmd(&sessionID),
	)
	return c
}

func (a checkpointCmds) checkpointCreateCmd(sessionID *string) *cobra.Command {
	var req api.CheckpointRequest
	c := &cobra.Command{
		Use:     "create --name N [--note T] [--session ID]",
		Example: "  prsm checkpoint create --name before-refactor --note \"tests green\"",
		Short:   "Take a named checkpoint of the session's worktree as it is now",
		Args:    exactArgs(0, "no arguments (give the name with --name)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(req.Name) == "" {
				return usagef("usage: "+cmd.UseLine(), "a named checkpoint needs --name")
			}
			return askSession(a.app, cmd.Context(), *sessionID, func(ctx context.Context, cl *client.Client, s *prsm.Session) (*prsm.Checkpoint, error) {
				return cl.CreateCheckpoint(ctx, s.ID, req)
			}, func(_ *prsm.Session, cp *prsm.Checkpoint) {
				fmt.Fprintf(a.stdio.Out, "created checkpoint %s\n", cp.ID)
				a.showCheckpoint(cp)
			})
		},
	}
	c.Flags().StringVar(&req.Name, "name", "", "the checkpoint's name")
	c.Flags().StringVar(&req.Annotation, "note", "", "an annotation, searchable with prsm checkpoint list --grep")
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

func (a checkpointCmds) checkpointListCmd(sessionID *string) *cobra.Command {
	var grep string
	c := &cobra.Command{
		Use:     "list [--grep TEXT] [--session ID]",
		Example: "  prsm checkpoint list\n  prsm checkpoint list --grep green",
		Short:   "Show a session's checkpoints as a timeline, oldest first",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return askSession(a.app, cmd.Context(), *sessionID, func(ctx context.Context, cl *client.Client, s *prsm.Session) ([]*prsm.Checkpoint, error) {
				return cl.Checkpoints(ctx, s.ID, grep)
			}, func(s *prsm.Session, list []*prsm.Checkpoint) {
				w := a.stdio.Out
				if len(list) == 0 {
					if grep != "" {
						fmt.Fprintf(w, "no checkpoint of session %s matches %q\n", s.ID, grep)
					} else {
						fmt.Fprintf(w, "no checkpoints in session %s (%s) yet\n", s.ID, printable(s.Name))
					}
					return
				}
				sort.SliceStable(list, func(i, j int) bool { return list[i].CreatedAt.Before(list[j].CreatedAt) })
				now := time.Now()
				t := newTable(w, "ID", "TIME", "KIND", "NAME", "FILES", "ANNOTATION")
				for _, cp := range list {
					t.row(cp.ID, clock(cp.CreatedAt, now), cp.Kind, cutRunes(cp.Name, 60),
						strconv.Itoa(cp.FilesChanged), firstLine(cp.Annotation, 60))
				}
				t.flush()
			})
		},
	}
	c.Flags().StringVar(&grep, "grep", "", "only checkpoints whose name or annotation contains TEXT (case-insensitive)")
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

// clock is t's local time of day, with the date when t is not today.
func clock(t, now time.Time) string {
	l, n := t.Local(), now.Local()
	if l.Year() == n.Year() && l.YearDay() == n.YearDay() {
		return l.Format("15:04:05")
	}
	return l.Format("2006-01-02 15:04:05")
}

// firstLine is the first non-blank line of s, trimmed and cut to n runes.
func firstLine(s string, n int) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return cutRunes(line, n)
		}
	}
	return ""
}

// cutRunes cuts s to n runes, marking the cut.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

func (a checkpointCmds) showCheckpoint(cp *prsm.Checkpoint) {
	tc := cp.ToolCallID
	if tc == "" {
		tc = "-"
	}
	ann := strings.TrimRight(cp.Annotation, "\n")
	multi := strings.Contains(ann, "\n")
	one := ann
	switch {
	case ann == "":
		one = "-"
	case multi:
		one = ""
	}
	fields(a.stdio.Out,
		"id", cp.ID,
		"session", cp.SessionID,
		"kind", cp.Kind,
		"name", cp.Name,
		"created", cp.CreatedAt.Local().Format("2006-01-02 15:04:05"),
		"turn", strconv.Itoa(cp.MessageIndex),
		"tool call", tc,
		"tree", cp.Tree,
		"files", strconv.Itoa(cp.FilesChanged),
		"annotation", one,
	)
	if multi {
		for _, line := range strings.Split(ann, "\n") {
			fmt.Fprintf(a.stdio.Out, "  %s\n", printable(line))
		}
	}
}

func (a checkpointCmds) checkpointShowCmd(sessionID *string) *cobra.Command {
	c := &cobra.Command{
		Use:     "show CHECKPOINT [--session ID]",
		Example: "  prsm checkpoint show before-refactor",
		Short:   "Show one checkpoint (id, unique id prefix, or its name)",
		Args:    exactArgs(1, "one checkpoint id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return askSession(a.app, cmd.Context(), *sessionID, func(ctx context.Context, cl *client.Client, s *prsm.Session) (*prsm.Checkpoint, error) {
				return cl.Checkpoint(ctx, s.ID, args[0])
			}, func(_ *prsm.Session, cp *prsm.Checkpoint) { a.showCheckpoint(cp) })
		},
	}
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

func (a checkpointCmds) checkpointAnnotateCmd(sessionID *string) *cobra.Command {
	var note string
	c := &cobra.Command{
		Use:     "annotate CHECKPOINT (TEXT | --note TEXT) [--session ID]",
		Example: "  prsm checkpoint annotate 3f2a \"the good one\"",
		Short:   "Replace a checkpoint's annotation (an empty text clears it)",
		RunE: func(cmd *cobra.Command, args []string) error {
			hasNote := cmd.Flags().Changed("note")
			switch {
			case len(args) == 2 && !hasNote:
				note = args[1]
			case len(args) == 1 && hasNote:
			default:
				return usagef("usage: "+cmd.UseLine(), "prsm checkpoint annotate takes a checkpoint id and the text (as an argument or with --note)")
			}
			return askSession(a.app, cmd.Context(), *sessionID, func(ctx context.Context, cl *client.Client, s *prsm.Session) (*prsm.Checkpoint, error) {
				return cl.Annotate(ctx, s.ID, args[0], note)
			}, func(_ *prsm.Session, cp *prsm.Checkpoint) {
				fmt.Fprintf(a.stdio.Out, "annotated checkpoint %s\n", cp.ID)
				a.showCheckpoint(cp)
			})
		},
	}
	c.Flags().StringVar(&note, "note", "", "the new annotation")
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

func (a checkpointCmds) checkpointDeleteCmd(sessionID *string) *cobra.Command {
	var yes bool
	c := &cobra.Command{
		Use:     "delete CHECKPOINT [--yes] [--session ID]",
		Example: "  prsm checkpoint delete before-refactor --yes",
		Short:   "Delete a checkpoint",
		Args:    exactArgs(1, "one checkpoint id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return askSession(a.app, cmd.Context(), *sessionID, func(ctx context.Context, cl *client.Client, s *prsm.Session) (*prsm.Checkpoint, error) {
				id := args[0]
				if !yes && !isTTY(a.stdio.In) {
					return nil, usagef("pass --yes to delete without asking",
						"stdin is not a terminal, so prsm cannot ask before it deletes checkpoint %s; nothing was deleted", printable(id))
				}
				if !yes {
					cp, err := cl.Checkpoint(ctx, s.ID, id)
					if err != nil {
						return nil, err
					}
					id = cp.ID
					q := fmt.Sprintf("Delete %s checkpoint %s (%s)?", cp.Kind, cp.ID, printable(cutRunes(cp.Name, 60)))
					if !a.confirm(q) {
						return nil, fmt.Errorf("aborted; checkpoint %s was kept", cp.ID)
					}
				}
				return cl.DeleteCheckpoint(ctx, s.ID, id)
			}, func(_ *prsm.Session, cp *prsm.Checkpoint) {
				fmt.Fprintf(a.stdio.Out, "deleted %s checkpoint %s (%s)\n", cp.Kind, cp.ID, printable(cutRunes(cp.Name, 60)))
			})
		},
	}
	c.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask first")
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

// confirm asks a yes/no question on stderr and reads the answer from stdin;
// anything but y or yes is a no.
func (a *app) confirm(question string) bool {
	w := a.stdio.Err
	fmt.Fprintf(w, "%s [y/N] ", question)
	line, _ := bufio.NewReader(a.stdio.In).ReadString('\n')
	if !strings.HasSuffix(line, "\n") {
		fmt.Fprintln(w)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}

func (a checkpointCmds) checkpointDiffCmd(sessionID *string) *cobra.Command {
	var stat, nameOnly bool
	c := &cobra.Command{
		Use:     "diff A [B] [--stat | --name-only] [--session ID]",
		Example: "  prsm checkpoint diff 3f2a\n  prsm checkpoint diff 3f2a 9c1b --stat",
		Short:   "Compare checkpoint A with checkpoint B, or with the worktree now",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usagef("usage: "+cmd.UseLine(), "prsm checkpoint diff takes one or two checkpoint ids")
			}
			if stat && nameOnly {
				return usagef("usage: "+cmd.UseLine(), "give --stat or --name-only, not both")
			}
			b := ""
			if len(args) == 2 {
				b = args[1]
			}
			return askSession(a.app, cmd.Context(), *sessionID, func(ctx context.Context, cl *client.Client, s *prsm.Session) (*api.CheckpointDiff, error) {
				return cl.CheckpointDiff(ctx, s.ID, args[0], b)
			}, func(_ *prsm.Session, d *api.CheckpointDiff) {
				if len(d.Files) == 0 {
					fmt.Fprintf(a.stdio.Err, "no differences between %s and %s\n", d.From, diffTarget(d.To))
					return
				}
				w := a.stdio.Out
				switch {
				case nameOnly:
					for _, f := range d.Files {
						fmt.Fprintln(w, quoteName(f.Path))
					}
				case stat:
					writeStat(w, d.Files)
				default:
					writeDiff(w, d.Patch, viewFor(w))
				}
			})
		},
	}
	c.Flags().BoolVar(&stat, "stat", false, "per-file counts of added and removed lines, and a total")
	c.Flags().BoolVar(&nameOnly, "name-only", false, "only the names of the files that differ")
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

func diffTarget(to string) string {
	if to == "current" {
		return "the worktree now"
	}
	return to
}

// writeStat prints git's --stat: " path | N +++--" per file (binary files
// as "Bin (binary)") and a total line.
func writeStat(w io.Writer, files []api.FileDiff) {
	const barMax = 40
	nameW, numW, maxN := 0, 1, 0
	for _, f := range files {
		if n := utf8.RuneCountInString(quoteName(f.Path)); n > nameW {
			nameW = n
		}
		if n := f.Added + f.Remove; !f.Binary && n > maxN {
			maxN = n
		}
	}
	numW = len(strconv.Itoa(maxN))
	adds, dels := 0, 0
	for _, f := range files {
		name := quoteName(f.Path)
		pad := strings.Repeat(" ", nameW-utf8.RuneCountInString(name))
		if f.Binary {
			fmt.Fprintf(w, " %s%s | Bin (binary, %s)\n", name, pad, f.Status)
			continue
		}
		adds += f.Added
		dels += f.Remove
		plus, minus := f.Added, f.Remove
		if maxN > barMax {
			plus, minus = scaleBar(f.Added, maxN, barMax), scaleBar(f.Remove, maxN, barMax)
		}
		bar := strings.Repeat("+", plus) + strings.Repeat("-", minus)
		if bar != "" {
			bar = " " + bar
		}
		fmt.Fprintf(w, " %s%s | %*d%s\n", name, pad, numW, f.Added+f.Remove, bar)
	}
	line := fmt.Sprintf(" %s changed", prsm.Plural(len(files), "file"))
	if adds > 0 || dels == 0 {
		line += fmt.Sprintf(", %d insertion%s(+)", adds, sOf(adds))
	}
	if dels > 0 || adds == 0 {
		line += fmt.Sprintf(", %d deletion%s(-)", dels, sOf(dels))
	}
	fmt.Fprintln(w, line)
}

// scaleBar scales n of max to width, keeping a non-zero count visible.
func scaleBar(n, max, width int) int {
	if n == 0 {
		return 0
	}
	if s := n * width / max; s > 0 {
		return s
	}
	return 1
}

func sOf(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
