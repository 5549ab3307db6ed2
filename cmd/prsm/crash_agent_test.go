package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/internal/testgit"
)

// agent plays one session's agent and its reviewer, one step at a time.
type agent struct {
	h   *harness
	s   *prsm.Session
	dir string
	rng *rand.Rand

	review                                               bool // the session is in review mode: accepts instead of rollbacks
	rewinder                                             bool // the session also rewinds (see settled)
	n                                                    int  // tool calls started
	writes                                               int  // versions written
	calls, accepts, rejects, rollbacks, rewinds, retries int
	answered                                             map[string][]string // tool call -> record ids complete answered with
	log                                                  []string            // the last steps
	conflicts                                            map[string]bool
}

// retry runs op until it gets an answer from a server: a kill makes calls
// fail to connect (or lose their answer); the same call goes to the next
// server. Once stop is set (the last server is up) it gives up, with the
// error, after a minute more without an answer: how many times it tried
// before does not count, since under load a call may fail for a long
// stretch of kills and restarts and still reach the last server.
func (a *agent) retry(stop *atomic.Bool, op func(cl *client.Client) error) error {
	var stoppedAt time.Time
	for i := 0; ; i++ {
		err := op(a.h.client())
		var ae *client.APIError
		if err == nil || errors.As(err, &ae) {
			return err
		}
		if stop.Load() {
			if stoppedAt.IsZero() {
				stoppedAt = time.Now()
			} else if time.Since(stoppedAt) > time.Minute {
				return err
			}
		}
		if i == 0 {
			a.retries++
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cut counts a call that a kill cut off (no answer from a server): the
// step is not repeated, and the next start finishes what it wrote down.
func (a *agent) cut(err error) {
	var ae *client.APIError
	if err != nil && !errors.As(err, &ae) {
		a.retries++
	}
}

func (a *agent) run(stop *atomic.Bool) {
	a.answered = map[string][]string{}
	diverged := false
	for !stop.Load() {
		epoch, retries := a.h.epoch.Load(), a.retries
		switch p := a.rng.IntN(100); {
		case p < 65:
			a.toolCall(stop)
		case a.review && p < 85:
			a.settle(stop, true)
		case a.review:
			a.settle(stop, false)
		case p < 80:
			a.settle(stop, false)
		case p < 92 || !a.rewinder:
			a.rollback(stop)
		default:
			a.rewind(stop)
		}
		if len(a.log) > 12 {
			a.log = a.log[len(a.log)-12:]
		}
		// A step that ran against one server from start to finish must
		// leave the session's files the same in workspace and worktree.
		if diverged || retries != a.retries {
			continue
		}
		d := a.diff()
		if d == "" {
			if recs, err := a.h.client().Changes(context.Background(), a.s.ID, "", ""); err == nil {
				for _, r := range recs {
					if !settled(r, a.review, a.rewinder) && !a.conflicts[r.ID] {
						if a.conflicts == nil {
							a.conflicts = map[string]bool{}
						}
						a.conflicts[r.ID] = true
						d += fmt.Sprintf("record %s (%s %s) is %s/%s\n", r.ID, r.ToolName, r.RelPath, r.Status, r.SyncState)
					}
				}
			}
		}
		if a.h.epoch.Load() == epoch && d != "" {
			diverged = true
			a.errorf("workspace and worktree differ after a step without a kill:\n%s\nlast steps:\n%s", d, strings.Join(a.log, "\n"))
		}
	}
}

// diff compares the session's files in the workspace and the worktree (in
// review mode, those without a pending change).
func (a *agent) diff() string {
	ws, err1 := testgit.TreeOf(filepath.Join(a.h.ws, a.dir), nil)
	wt, err2 := testgit.TreeOf(filepath.Join(a.s.WorktreePath, a.dir), nil)
	if err := errors.Join(err1, err2); err != nil {
		return err.Error()
	}
	ws, wt = filtered(ws), filtered(wt)
	if a.review {
		pend, err := a.h.client().Changes(context.Background(), a.s.ID, prsm.StatusPending, "")
		if err != nil {
			return "" // cut off by a kill: nothing to compare with
		}
		for _, r := range pend {
			rel := strings.TrimPrefix(r.RelPath, a.dir+"/")
			delete(ws, rel)
			delete(wt, rel)
		}
	}
	return testgit.Diff(ws, wt)
}

func (a *agent) logf(format string, args ...any) {
	a.log = append(a.log, fmt.Sprintf(format, args...))
}

func (a *agent) errorf(format string, args ...any) {
	a.h.t.Errorf("session %s: "+format, append([]any{a.dir}, args...)...)
}

// toolCall: capture, write whole new versions (and delete files) in the
// worktree, complete; every call is retried across kills.
func (a *agent) toolCall(stop *atomic.Bool) {
	ctx := context.Background()
	a.n++
	id := fmt.Sprintf("%s-t%d", a.dir, a.n)
	wt := a.s.WorktreePath
	type op struct {
		rel    string
		delete bool
	}
	var ops []op
	tool := "Edit"
	var args []byte
	pick := func() string {
		if a.rng.IntN(3) == 0 {
			return fmt.Sprintf("%s/n%d.txt", a.dir, a.rng.IntN(4))
		}
		return fmt.Sprintf("%s/f%d.txt", a.dir, a.rng.IntN(4))
	}
	if a.rng.IntN(3) == 0 {
		tool = "Bash"
		seen := map[string]bool{}
		for i := 0; i < 2+a.rng.IntN(3); i++ {
			rel := pick()
			if seen[rel] {
				continue
			}
			seen[rel] = true
			ops = append(ops, op{rel: rel, delete: a.rng.IntN(5) == 0})
		}
		args, _ = json.Marshal(map[string]string{"command": "sh -c 'rewrite " + id + "'"})
	} else {
		rel := pick()
		if _, err := os.Lstat(filepath.Join(wt, rel)); err != nil {
			tool = "Write"
		}
		ops = []op{{rel: rel}}
		args, _ = json.Marshal(map[string]string{"file_path": filepath.Join(wt, rel)})
	}
	err := a.retry(stop, func(cl *client.Client) error {
		_, err := cl.StartToolCall(ctx, a.s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: tool, Args: args, Cwd: wt})
		return err
	})
	if err != nil {
		a.errorf("start %s: %v", id, err)
		return
	}
	a.calls++
	for _, o := range ops {
		p := filepath.Join(wt, o.rel)
		if o.delete {
			a.h.noteAbsent(o.rel)
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				a.errorf("agent rm: %v", err)
			}
			continue
		}
		a.writes++
		content := version(o.rel, a.writes, 1+a.rng.IntN(40))
		a.h.note(o.rel, content)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			a.errorf("agent write: %v", err)
		}
	}
	var recs *api.Records
	err = a.retry(stop, func(cl *client.Client) error {
		var err error
		recs, err = cl.CompleteToolCall(ctx, a.s.ID, id, api.CompleteRequest{Result: json.RawMessage(`{"ok":true}`)})
		return err
	})
	if err != nil {
		a.errorf("complete %s: %v", id, err)
		return
	}
	var got []string
	if _, seen := a.answered[id]; !seen && len(recs.Records) > 0 {
		a.h.answered.Add(1)
	}
	for _, r := range recs.Records {
		a.answered[id] = append(a.answered[id], r.ID)
		got = append(got, fmt.Sprintf("%s %s %s/%s", r.ID, r.RelPath, r.Status, r.SyncState))
	}
	a.logf("tool call %s %s %v -> %v", id, tool, ops, got)
}

// pending lists the session's pending records (nil on a failed call).
func (a *agent) pending(stop *atomic.Bool) []*prsm.Record {
	var recs []*prsm.Record
	err := a.retry(stop, func(cl *client.Client) error {
		var err error
		recs, err = cl.Changes(context.Background(), a.s.ID, prsm.StatusPending, "")
		return err
	})
	if err != nil {
		a.errorf("list changes: %v", err)
		return nil
	}
	return recs
}

// settle rejects one pending record (the cascade follows) or accepts it
// (in review mode the earlier pending records of its file are applied
// first), or, now and then, every pending record of one file. A call cut
// off by a kill is not repeated: the next start finishes what it wrote
// down.
func (a *agent) settle(stop *atomic.Bool, accept bool) {
	pend := a.pending(stop)
	if len(pend) == 0 {
		return
	}
	r := pend[a.rng.IntN(len(pend))]
	cl := a.h.client()
	ctx := context.Background()
	verb := "reject"
	var err error
	switch whole := a.rng.IntN(4) == 0; {
	case accept && whole:
		_, err = cl.AcceptAll(ctx, a.s.ID, r.RelPath)
	case accept:
		_, err = cl.AcceptWith(ctx, a.s.ID, r.ID, api.AcceptRequest{WithEarlier: true})
	case whole:
		_, err = cl.RejectAll(ctx, a.s.ID, r.RelPath)
	default:
		_, err = cl.Reject(ctx, a.s.ID, r.ID)
	}
	if accept {
		verb = "accept"
		a.accepts++
	} else {
		a.rejects++
	}
	a.cut(err)
	a.logf("%s %s (%s) -> %v", verb, r.ID, r.RelPath, err)
	var ae *client.APIError
	if errors.As(err, &ae) {
		a.errorf("%s %s: %v", verb, r.ID, err)
	}
}

// rollback undoes the last 1-3 changes.
func (a *agent) rollback(stop *atomic.Bool) {
	n := 1 + a.rng.IntN(3)
	plan, err := a.h.client().Rollback(context.Background(), a.s.ID, api.RollbackRequest{Last: n})
	a.rollbacks++
	a.logf("rollback last %d -> %+v %v", n, plan, err)
	a.checkRollbackErr("rollback", err)
}

// rewind goes back to one of the session's last checkpoints.
func (a *agent) rewind(stop *atomic.Bool) {
	var cps []*prsm.Checkpoint
	err := a.retry(stop, func(cl *client.Client) error {
		var err error
		cps, err = cl.Checkpoints(context.Background(), a.s.ID, "")
		return err
	})
	if err != nil || len(cps) == 0 {
		return
	}
	sort.Slice(cps, func(i, j int) bool { return cps[i].CreatedAt.Before(cps[j].CreatedAt) })
	c := cps[len(cps)-1-a.rng.IntN(min(len(cps), 6))]
	plan, err := a.h.client().Rewind(context.Background(), a.s.ID, c.ID, false)
	a.rewinds++
	a.logf("rewind to %s (%s) -> %+v %v", c.ID, c.Name, plan, err)
	a.checkRollbackErr("rewind", err)
}

func (a *agent) checkRollbackErr(what string, err error) {
	a.cut(err)
	var ae *client.APIError
	if errors.As(err, &ae) && ae.Code != "worktree_conflict" {
		a.errorf("%s: %v (%s)", what, err, ae.Code)
	}
}
