package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/sync"
)

// walkContext is how many unchanged lines the walk shows around a hunk;
// blocks whose context would meet are shown together, as `git add -p`
// shows them (groupBlocks follows sync.DiffHunks's rule), and `s`
// splits them.
const walkContext = 3

// changesReviewCmd is `prsm changes review`: a `git add -p` style walk over
// the pending hunks of a session.
func (a *app) changesReviewCmd(sessionID *string) *cobra.Command {
	var answers string
	c := &cobra.Command{
		Use:     "review [--session ID] [--answers KEYS]",
		Example: "  prsm changes review\n  prsm changes review --answers ynq   # from a script",
		Short:   "Walk the pending hunks one by one and accept or reject each (as git add -p)",
		Long: `Walk the pending hunks of the session, file by file, and decide each:
  y  accept this hunk          n  reject this hunk
  a  accept it and the rest of this change
  d  reject it and the rest of this change
  s  split it into smaller hunks
  q  quit; what is left stays pending (so do Ctrl-C, SIGTERM and
     Ctrl-D, keeping what was decided; Ctrl-C exits 130, SIGTERM 143)
  ?  help
Binary, symlink and mode-only changes are decided whole. A reject takes
the hunk's lines out of the workspace and the worktree at once, and later
hunks built on them with it. On a terminal, after n or d it asks for a
note for the agent (Enter for none), which the agent hears with the hunk
at its next step. It needs a terminal; --answers gives the keys instead
(one per question, in order; no notes), for scripts.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			in := a.stdio.In
			if cmd.Flags().Changed("answers") {
				in = strings.NewReader(strings.Join(strings.Split(answers, ""), "\n") + "\n")
			} else if !isTTY(a.stdio.In) {
				return usagef("run it on a terminal, or give the keys with --answers (for example --answers ynq)",
					"prsm changes review asks about each hunk and needs a terminal")
			}
			err := a.walk(cmd.Context(), *sessionID, bufio.NewReader(in), !cmd.Flags().Changed("answers"))
			if err != nil && !errors.As(err, new(*exitError)) {
				if ie := interrupted(cmd.Context()); ie != nil {
					return ie // a call the signal cut short
				}
			}
			return err
		},
	}
	c.Flags().StringVar(&answers, "answers", "", "the keys to answer with, one per question (y, n, a, d, s, q)")
	return c
}

// walkHunk is what one question is about: blocks of a record, by index.
type walkHunk struct{ blocks []int }

// has says whether block i is one of q's.
func (q walkHunk) has(i int) bool { return slices.Contains(q.blocks, i) }

// walk asks about each pending hunk; with notes, it asks for a note for
// the agent after each reject.
func (a *app) walk(ctx context.Context, sessionID string, in *bufio.Reader, notes bool) error {
	cl, _, err := a.connect(ctx)
	if err != nil {
		return err
	}
	s, err := a.resolveSession(ctx, cl, sessionID)
	if err != nil {
		return err
	}
	w := a.stdio.Out
	pend, err := cl.Changes(ctx, s.ID, prsm.StatusPending, "")
	if err != nil {
		return err
	}
	if len(pend) == 0 {
		fmt.Fprintf(w, "nothing to review: no pending changes in session %s\n", s.ID)
		return nil
	}
	accepted, rejected := 0, 0
	// The answers are read apart from the questions, so that Ctrl-C or
	// SIGTERM ends a walk waiting at its prompt at once ("!" below).
	lines := make(chan string)
	go func() {
		defer close(lines)
		for {
			line, err := in.ReadString('\n')
			if err != nil && line == "" {
				return // end of input
			}
			select {
			case lines <- line:
			case <-ctx.Done():
				return
			}
		}
	}()
	read := func(prompt string) (string, bool) {
		fmt.Fprint(w, prompt)
		select {
		case line, ok := <-lines:
			fmt.Fprintln(w)
			if !ok {
				return "q", false // end of input: quit, leaving the rest
			}
			return strings.TrimSpace(line), true
		case <-ctx.Done():
			fmt.Fprintln(w)
			return "!", false
		}
	}
	ask := func(prompt string) (string, error) {
		line, _ := read(prompt)
		return strings.ToLower(line), nil
	}
	// note asks for a note for the agent after a reject; "" for none,
	// and at the end of input or a signal (which the next question
	// meets).
	note := func(said string) string {
		if !notes {
			return said
		}
		line, ok := read("Note for the agent on this reject (Enter for none): ")
		if !ok || line == "" {
			return said
		}
		if said != "" {
			return said + "\n" + line
		}
		return line
	}
	summary := func() {
		fmt.Fprintf(w, "accepted %s, rejected %s\n", prsm.Plural(accepted, "hunk"), prsm.Plural(rejected, "hunk"))
	}
	// stop ends a walk that a signal interrupted: what was decided stays
	// decided, the rest pending.
	stop := func() error {
		summary()
		fmt.Fprintln(a.stdio.Err, "interrupted; what is left stays pending")
		return interrupted(ctx)
	}
	for _, p := range pend {
		// A reject may have decided this one (a cascade) meanwhile.
		ans, err := cl.ChangesOf(ctx, s.ID, p.ID)
		if err != nil {
			return err
		}
		if len(ans.Records) != 1 {
			continue
		}
		r := ans.Records[0]
		if r.Status != prsm.StatusPending {
			continue
		}
		old, new, err := walkContents(ctx, cl, s.ID, r)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s %s (%s, %s)\n", quoteName(r.RelPath), printable(r.ID), r.ChangeType, printable(r.ToolName))
		if len(r.Hunks) == 0 || old == nil || new == nil {
			key, err := ask("Accept this whole change (it has no hunks) [y,n,q,?]? ")
			if err != nil {
				return err
			}
			switch key {
			case "y", "a":
				_, err = cl.Accept(ctx, s.ID, r.ID)
				accepted++
			case "n", "d":
				_, err = cl.RejectWith(ctx, s.ID, r.ID, api.RejectRequest{Say: note(""), Author: author})
				rejected++
			case "q":
				summary()
				return nil
			case "!":
				return stop()
			default:
				fmt.Fprintln(w, "y - accept it, n - reject it, q - quit")
			}
			if err != nil {
				return err
			}
			continue
		}
		var todo []int
		for _, h := range r.Hunks {
			if h.Status == prsm.StatusPending {
				todo = append(todo, h.Index)
			}
		}
		queue := groupBlocks(r.Hunks, todo)
		var acc, rej []int
		say := ""
		quit, signalled := false, false
		for i := 0; i < len(queue) && !quit; {
			q := queue[i]
			// Always for a person's eyes, the hidden bytes of a line shown,
			// before the question about it.
			writeDiff(w, sync.DiffHunks(old, new, walkContext, q.has), diffView{visible: true, color: colorOK(w)})
			canSplit := len(q.blocks) > 1
			keys := "y,n,a,d"
			if canSplit {
				keys += ",s"
			}
			key, err := ask(fmt.Sprintf("(%d/%d) Accept this hunk [%s,q,?]? ", i+1, len(queue), keys))
			if err != nil {
				return err
			}
			switch key {
			case "y":
				acc = append(acc, q.blocks...)
				i++
			case "n":
				rej = append(rej, q.blocks...)
				say = note(say)
				i++
			case "a", "d":
				for _, rest := range queue[i:] {
					if key == "a" {
						acc = append(acc, rest.blocks...)
					} else {
						rej = append(rej, rest.blocks...)
					}
				}
				if key == "d" {
					say = note(say)
				}
				i = len(queue)
			case "s":
				if !canSplit {
					fmt.Fprintln(w, "this hunk is one block of changed lines; it cannot be split")
					continue
				}
				split := make([]walkHunk, len(q.blocks))
				for j, b := range q.blocks {
					split[j] = walkHunk{blocks: []int{b}}
				}
				fmt.Fprintf(w, "split into %d hunks\n", len(split))
				queue = append(append(append([]walkHunk{}, queue[:i]...), split...), queue[i+1:]...)
			case "q":
				quit = true
			case "!":
				quit, signalled = true, true
			default:
				fmt.Fprintln(w, "y - accept this hunk\nn - reject this hunk\na - accept this hunk and the rest of this change\nd - reject this hunk and the rest of this change\ns - split this hunk\nq - quit; what is left stays pending\n? - this help")
			}
		}
		if len(acc)+len(rej) > 0 {
			dctx := ctx
			if signalled {
				// The hunks decided before the signal are sent on a
				// context of their own: the command's has ended.
				var cancel context.CancelFunc
				dctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
				defer cancel()
			}
			ans, err := cl.DecideHunksWith(dctx, s.ID, r.ID, api.HunksRequest{Accept: acc, Reject: rej, Say: say, Author: author})
			if err != nil {
				return err
			}
			accepted += len(acc)
			rejected += len(rej)
			for _, c := range ans.Cascaded {
				fmt.Fprintf(w, "rejected with it: hunk %d of %s (its lines were built on the rejected ones)\n", c.Index, printable(c.ID))
			}
		}
		if signalled {
			return stop()
		}
		if quit {
			break
		}
	}
	summary()
	return nil
}

// walkContents are a text record's two sides (an absent side is empty),
// from the record where they are inline, else from the server.
func walkContents(ctx context.Context, cl *client.Client, sessionID string, r *prsm.Record) (old, new []byte, err error) {
	get := func(side string, inline *string, present bool) ([]byte, error) {
		if !present {
			return []byte{}, nil
		}
		if inline != nil {
			return []byte(*inline), nil
		}
		b, err := cl.Content(ctx, sessionID, r.ID, side)
		if err != nil {
			return nil, err
		}
		return b, nil
	}
	if old, err = get("before", r.OldContent, r.ChangeType != prsm.ChangeCreate); err != nil {
		return nil, nil, err
	}
	new, err = get("after", r.NewContent, r.ChangeType != prsm.ChangeDelete)
	return old, new, err
}

// groupBlocks puts the blocks todo (indexes into hunks, in order) into the
// hunks the walk asks about: blocks whose context would meet go together.
func groupBlocks(hunks []prsm.Hunk, todo []int) []walkHunk {
	var out []walkHunk
	for _, b := range todo {
		if n := len(out); n > 0 {
			last := hunks[out[n-1].blocks[len(out[n-1].blocks)-1]]
			if oldStart(hunks[b])-oldEnd(last) <= 2*walkContext {
				out[n-1].blocks = append(out[n-1].blocks, b)
				continue
			}
		}
		out = append(out, walkHunk{blocks: []int{b}})
	}
	return out
}

// oldStart and oldEnd are where a hunk's old lines start and end,
// 0-based (a side of no lines is the point after its start line).
func oldStart(h prsm.Hunk) int {
	if h.OldLines == 0 {
		return h.OldStart
	}
	return h.OldStart - 1
}

func oldEnd(h prsm.Hunk) int { return oldStart(h) + h.OldLines }
