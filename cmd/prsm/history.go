package main

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm/api"
)

// blameCmd is `prsm blame FILE`: who wrote each line.
func blameCmd(a *app) *cobra.Command {
	var (
		lines     string
		porcelain bool
	)
	c := &cobra.Command{
		Use: "blame FILE [-L A,B] [--porcelain | --json]",
		Example: "  prsm blame src/app.py\n  prsm blame -L 10,20 src/app.py\n" +
			"  prsm blame --porcelain src/app.py",
		Short: "Show which agent, tool call and prompt wrote each line of a file, or that you did",
		Args:  exactArgs(1, "a file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			start, end, err := lineRange(lines)
			if err != nil {
				return err
			}
			cl, p, err := a.connect(ctx)
			if err != nil {
				return err
			}
			b, err := cl.Blame(ctx, p.fileArg(args[0]), start, end)
			if err != nil {
				return err
			}
			for _, w := range b.Warnings {
				fmt.Fprintf(a.stdio.Err, "warning: %s\n", printable(w))
			}
			return a.answer(b, func() {
				if porcelain {
					printPorcelain(a.stdio.Out, b)
				} else {
					printBlame(a.stdio.Out, b)
				}
			})
		},
	}
	c.Flags().StringVarP(&lines, "lines", "L", "", "only lines A to B (A,B), as git blame -L")
	c.Flags().BoolVar(&porcelain, "porcelain", false, "print git blame's line-porcelain format, with prsm's fields")
	c.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

// lineRange reads -L A,B (or A, or A,+N).
func lineRange(s string) (start, end int, err error) {
	if s == "" {
		return 0, 0, nil
	}
	a, b, two := strings.Cut(s, ",")
	bad := usagef("give -L A,B with 1 <= A <= B, as git blame -L", "-L %q is not a line range", s)
	if start, err = strconv.Atoi(a); err != nil || start < 1 {
		return 0, 0, bad
	}
	if !two || b == "" {
		return start, 0, nil
	}
	if n, ok := strings.CutPrefix(b, "+"); ok {
		k, err := strconv.Atoi(n)
		if err != nil || k < 1 {
			return 0, 0, bad
		}
		return start, start + k - 1, nil
	}
	if end, err = strconv.Atoi(b); err != nil || end < start {
		return 0, 0, bad
	}
	return start, end, nil
}

// printBlame prints a blame as git blame does: each line with who wrote
// it (the change or commit, the agent, when, its review state) before it.
func printBlame(w io.Writer, b *api.Blame) {
	width := 1
	if n := len(b.Lines); n > 0 {
		width = len(strconv.Itoa(b.Lines[n-1].Line))
	}
	for _, l := range b.Lines {
		id, who, when, state := "", "you", "", ""
		if l.Origin >= 0 && l.Origin < len(b.Origins) {
			o := b.Origins[l.Origin]
			id, who, state = o.RecordID, o.AgentID, o.Status
			if o.Source == api.OriginNote {
				id = o.Commit
			}
			if who == "" {
				who = "agent"
			}
			if o.ToolName != "" {
				who += " " + o.ToolName
			}
			when = o.Time.Local().Format("2006-01-02 15:04")
		}
		fmt.Fprintf(w, "%-8.8s (%-16.16s %-16s %-9s %*d) %s\n", printable(id), printable(who), when, state, width, l.Line, printable(l.Text))
	}
}

// printPorcelain prints git blame's --line-porcelain: for each line, a
// header (an id of 40 hex digits, the line's number twice and 1), the
// fields, then the line after a tab. The id is the commit of a committed
// line, all zeros for yours, and else stands for the change (a hash of
// its session and id); prsm's fields name the rest.
func printPorcelain(w io.Writer, b *api.Blame) {
	for _, l := range b.Lines {
		id := strings.Repeat("0", 40)
		var fieldsOut [][2]string
		if l.Origin >= 0 && l.Origin < len(b.Origins) {
			o := b.Origins[l.Origin]
			switch {
			case o.Source == api.OriginNote && len(o.Commit) == 40:
				id = o.Commit
			default:
				sum := sha1.Sum([]byte(o.SessionID + "/" + o.RecordID))
				id = hex.EncodeToString(sum[:])
			}
			prompt, _, _ := strings.Cut(o.Prompt, "\n")
			fieldsOut = [][2]string{{"author", o.AgentID}, {"author-time", strconv.FormatInt(o.Time.Unix(), 10)},
				{"summary", prompt}, {"prsm-source", o.Source}, {"prsm-session", o.SessionID}, {"prsm-change", o.RecordID},
				{"prsm-tool", o.ToolName}, {"prsm-tool-call", o.ToolCallID}, {"prsm-turn", strconv.Itoa(o.Turn)},
				{"prsm-status", o.Status}, {"prsm-commit", o.Commit}}
		} else {
			fieldsOut = [][2]string{{"author", "you"}, {"prsm-source", "you"}}
		}
		fmt.Fprintf(w, "%s %d %d 1\n", id, l.Line, l.Line)
		for _, f := range fieldsOut {
			if f[1] != "" {
				fmt.Fprintf(w, "%s %s\n", f[0], printable(f[1]))
			}
		}
		fmt.Fprintf(w, "filename %s\n\t%s\n", quoteName(b.Path), printable(l.Text))
	}
}

// commitCmd is `prsm commit`: accepted work as commits.
func commitCmd(a *app) *cobra.Command {
	var (
		req  api.CommitRequest
		edit bool
	)
	c := &cobra.Command{
		Use: "commit [--session ID] [--turn N] [--file F]... [--squash] [--include-mine] [--dry-run] [--edit]",
		Example: "  prsm commit --dry-run\n  prsm commit\n  prsm commit --session 3f2a --squash\n" +
			"  git push origin HEAD refs/notes/agent-trace",
		Short: "Commit the agents' accepted lines on your branch, one commit a turn, with the prompt as the message",
		Args:  exactArgs(0, "no arguments (name files with --file)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cl, p, err := a.connect(ctx)
			if err != nil {
				return err
			}
			for i, f := range req.Files {
				req.Files[i] = p.fileArg(f)
			}
			if edit && !req.DryRun {
				dry := req
				dry.DryRun = true
				plan, err := cl.Commit(ctx, dry)
				if err != nil {
					return err
				}
				for _, pc := range plan.Commits {
					msg, err := editMessage(ctx, p.repo.Root, pc.Message)
					if err != nil {
						return err
					}
					req.Messages = append(req.Messages, msg)
				}
			}
			rep, err := cl.Commit(ctx, req)
			if err != nil {
				return err
			}
			return a.answer(rep, func() { printCommits(a.stdio.Out, rep, req.DryRun) })
		},
	}
	f := c.Flags()
	f.StringVar(&req.Session, "session", "", "only this session's work (id, prefix or name)")
	f.IntVar(&req.Turn, "turn", 0, "only this turn's work")
	f.StringArrayVar(&req.Files, "file", nil, "only this file's work (repeat for more)")
	f.BoolVar(&req.Squash, "squash", false, "one commit a session, not one a turn")
	f.BoolVar(&req.IncludeMine, "include-mine", false, "commit the files as the workspace has them, your own edits included")
	f.BoolVar(&req.DryRun, "dry-run", false, "print the commits it would make, and make none")
	f.BoolVar(&edit, "edit", false, "edit each commit's message in your editor first")
	f.BoolVar(&a.jsonOut, "json", false, "print JSON")
	return c
}

// printCommits prints what prsm commit made or would make, and what it
// left out.
func printCommits(w io.Writer, rep *api.CommitReport, dry bool) {
	for _, c := range rep.Commits {
		first, _, _ := strings.Cut(c.Message, "\n")
		id := c.Commit
		if dry {
			id = "would commit"
		}
		fmt.Fprintf(w, "[%.12s] %s\n", id, printable(first))
		names := make([]string, len(c.Files))
		for i, f := range c.Files {
			names[i] = quoteName(f)
		}
		fmt.Fprintf(w, "    %s, turn %s: %s (changes %s)\n", printable(c.AgentID), joinInts(c.Turns), strings.Join(names, ", "),
			printable(strings.Join(c.Records, " ")))
	}
	if len(rep.LeftOut) > 0 {
		fmt.Fprintf(w, "left out (%d):\n", len(rep.LeftOut))
		for _, l := range rep.LeftOut {
			fmt.Fprintf(w, "    %s %s: %s\n", printable(l.RecordID), quoteName(l.Path), printable(l.Reason))
		}
	}
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// editMessage opens the user's editor on msg, as git commit --edit does:
// $GIT_EDITOR, $VISUAL, $EDITOR, else vi. Lines starting with # go.
func editMessage(ctx context.Context, root, msg string) (string, error) {
	editor := "vi"
	for _, k := range []string{"GIT_EDITOR", "VISUAL", "EDITOR"} {
		if v := os.Getenv(k); v != "" {
			editor = v
			break
		}
	}
	dir, err := os.MkdirTemp("", "prsm-msg-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "COMMIT_EDITMSG")
	text := msg + "\n# Edit the message of this commit; lines starting with # are left out.\n# An empty message keeps prsm's.\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", err
	}
	// As git does: the editor setting is a shell command.
	cmd := exec.CommandContext(ctx, "sh", "-c", editor+` "$@"`, editor, path)
	cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = root, os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("the editor %q failed: %w", editor, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "#") {
			keep = append(keep, l)
		}
	}
	return strings.TrimSpace(strings.Join(keep, "\n")) + "\n", nil
}

// traceCmd is `prsm trace show REV` and `prsm trace export --session ID`.
func traceCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "trace",
		Short: "Show the Agent Trace records of commits, or export a session's",
	}
	show := &cobra.Command{
		Use:     "show REV",
		Example: "  prsm trace show HEAD",
		Short:   "Print the Agent Trace records in the note of commit REV (refs/notes/agent-trace)",
		Args:    exactArgs(1, "a commit"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cl, _, err := a.connect(ctx)
			if err != nil {
				return err
			}
			t, err := cl.TraceShow(ctx, args[0])
			if err != nil {
				return err
			}
			if len(t.Records) == 0 {
				fmt.Fprintf(a.stdio.Err, "%s has no Agent Trace note\n", printable(args[0]))
			}
			for _, r := range t.Records {
				if err := printIndented(a.stdio.Out, r); err != nil {
					return err
				}
			}
			return nil
		},
	}
	var session string
	export := &cobra.Command{
		Use:     "export --session ID",
		Example: "  prsm trace export --session 3f2a > trace.json",
		Short:   "Write a session's uncommitted work as an Agent Trace record (application/vnd.agent-trace.record+json)",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cl, s, err := a.connectSession(ctx, session)
			if err != nil {
				return err
			}
			t, err := cl.TraceExport(ctx, s.ID)
			if err != nil {
				return err
			}
			return printIndented(a.stdio.Out, t)
		},
	}
	export.Flags().StringVar(&session, "session", "", "the session (id, prefix or name); the one active when not given")
	c.AddCommand(show, export)
	return c
}

func printIndented(w io.Writer, raw json.RawMessage) error {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return err
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}
