package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm"
)

// changesDiffCmd is `prsm changes diff`.
func (a *app) changesDiffCmd(sessionID *string) *cobra.Command {
	var file string
	var every bool
	c := &cobra.Command{
		Use:     "diff [ID... | --file P] [--all] [--session ID]",
		Example: "  prsm changes diff\n  prsm changes diff e1\n  prsm changes diff --file src/app.go",
		Short:   "Show the unified diff of changes: the pending ones (of a file with --file), every one with --all, or those named",
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
