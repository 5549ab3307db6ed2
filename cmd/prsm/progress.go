package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
)

// bulkListMax: a bulk accept or reject of more pending changes than this
// (an agent's npm install, a generator) lists none of them, before or
// after: it asks by their count, runs as a job the CLI follows with a
// progress bar (on a terminal), and sums up what it did.
const bulkListMax = 200

// jobPoll is how often the CLI reads a job it follows.
const jobPoll = 200 * time.Millisecond

// progressBar draws a job's progress on one line of a terminal, redrawn
// in place; off a terminal it draws nothing.
type progressBar struct {
	w     io.Writer
	tty   bool
	label string
	width int // of the last line drawn, to blank it out
}

func newProgressBar(w io.Writer, label string) *progressBar {
	f, ok := w.(*os.File)
	return &progressBar{w: w, tty: ok && isatty.IsTerminal(f.Fd()), label: label}
}

// barWidth is the bar's length in characters.
const barWidth = 30

// update draws the job as it stands.
func (p *progressBar) update(j *api.Job) {
	if !p.tty || j.Total == 0 {
		return
	}
	filled := barWidth * j.Done / j.Total
	line := fmt.Sprintf("%s [%s%s] %d/%d", p.label, strings.Repeat("#", filled), strings.Repeat(".", barWidth-filled), j.Done, j.Total)
	if j.Conflicts > 0 {
		line += fmt.Sprintf(" (%d in conflict)", j.Conflicts)
	}
	line += fmt.Sprintf(" %ds", int(time.Since(j.StartedAt).Seconds()))
	pad := max(0, p.width-len(line))
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", pad))
	p.width = len(line)
}

// done ends the bar's line.
func (p *progressBar) done() {
	if p.tty && p.width > 0 {
		fmt.Fprintln(p.w)
	}
}

// followJob follows job until it ends, with a progress bar on stderr.
// The server runs the job to its end whatever the CLI does: an
// interrupted CLI leaves it running. A failed job comes back as its
// error (what it decided stays decided).
func (a *app) followJob(ctx context.Context, cl *client.Client, job *api.Job, label string) (*api.Job, error) {
	bar := newProgressBar(a.stdio.Err, label)
	end, err := cl.WaitJob(ctx, job.ID, jobPoll, bar.update)
	bar.done()
	if err != nil {
		return nil, fmt.Errorf("follow job %s (it goes on in the server; `prsm changes` shows what it did): %w", job.ID, err)
	}
	if end.State == api.JobFailed && end.Error != nil {
		return end, &client.APIError{Code: string(end.Error.Code), Msg: end.Error.Error, Hint: end.Error.Hint}
	}
	return end, nil
}

// bulkJob is `prsm changes accept|reject --all` of many pending changes
// of session s: asked about by their count, run as a job with a progress
// bar, and summed up.
func (a *app) bulkJob(ctx context.Context, cl *client.Client, s *prsm.Session, verb, done string, accept, yes bool) error {
	if err := a.askByCount(s, verb, yes); err != nil {
		return err
	}
	job, err := cl.StartBulkWith(ctx, s.ID, accept, "", api.BulkRequest{Say: a.say, Author: author})
	if err != nil {
		return err
	}
	end, err := a.followJob(ctx, cl, job, verb+"ing")
	if a.jsonOut && end != nil {
		if perr := printJSON(a.stdio.Out, end); perr != nil {
			return perr
		}
	} else if end != nil {
		fmt.Fprintf(a.stdio.Out, "%s %s\n", done, prsm.Plural(end.Done, "change"))
		if end.Conflicts > 0 {
			fmt.Fprintf(a.stdio.Out, "%s in conflict: prsm left those workspace files as they are; merge them by hand\n", prsm.Plural(end.Conflicts, "change"))
		}
		printLeft(a.stdio.Out, end.Left, nil)
	}
	return err
}

// askByCount asks before a verb of all the pending changes of session s,
// too many to list, by their count; off a terminal only yes (--yes) goes
// on.
func (a *app) askByCount(s *prsm.Session, verb string, yes bool) error {
	if yes {
		return nil
	}
	what := fmt.Sprintf("%s of session %s", prsm.Plural(s.PendingCount, "pending change"), s.ID)
	if !isTTY(a.stdio.In) {
		return usagef("pass --yes to act without asking",
			"stdin is not a terminal, so prsm cannot ask before it %ss %s; nothing was %sed", verb, what, verb)
	}
	if !a.confirm(fmt.Sprintf("will %s %s (`prsm changes --session %s` lists them). Proceed?", verb, what, s.ID)) {
		return fmt.Errorf("aborted; nothing was %sed", verb)
	}
	return nil
}

// discardJob ends session s with its unreviewed work discarded, as a job
// it follows with a progress bar, and returns the ended session.
func (a *app) discardJob(ctx context.Context, cl *client.Client, s *prsm.Session) (*prsm.Session, error) {
	job, err := cl.StartDiscard(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	if _, err := a.followJob(ctx, cl, job, "discarding"); err != nil {
		return nil, err
	}
	return cl.Session(ctx, s.ID)
}
