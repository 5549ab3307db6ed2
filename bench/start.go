package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/prsm-dev/prsm/api"
)

// sessionStart: POST /sessions (snapshot, worktree, watches) with a warm
// worktree ready, and cold (a second server with PRSM_WARM_WORKTREES=0
// on the same workspace), against a plain `git worktree add` of the same
// commit, in turns. A variant with checkout.workers=0 (parallel
// checkout, one worker per core, as prsm's cold start uses) is shown
// too. Each sample starts from a quiet disk, and a warm sample from a
// warm worktree the server says is ready: the writeback of the worktree
// the sample before removed, or the checkout of the next warm one, would
// otherwise land on it.
func (b *bench) sessionStart(ctx context.Context) error {
	cold, err := startServer(ctx, b.bin, filepath.Join(b.dir, "home-cold"), b.ws, "PRSM_WARM_WORKTREES=0")
	if err != nil {
		return err
	}
	defer cold.stop()
	var warmS, coldS, gs, gw []time.Duration
	plain := filepath.Join(b.dir, "plain-wt")
	quiet := func() {
		settle(b.srv.cmd.Process.Pid)
		settle(cold.cmd.Process.Pid)
	}
	prsmStart := func(srv *prsmServer, name string, out *[]time.Duration) error {
		if srv == b.srv {
			if err := b.awaitWarm(ctx, len(warmS)+1); err != nil {
				return err
			}
		}
		quiet()
		t0 := time.Now()
		s, err := srv.cl.StartSession(ctx, api.StartRequest{Name: name})
		if err != nil {
			return err
		}
		*out = append(*out, time.Since(t0))
		_, err = srv.cl.EndSession(ctx, s.ID, true)
		return err
	}
	gitAdd := func(i int, cfg []string, out *[]time.Duration) error {
		branch := fmt.Sprintf("plain-%d-%d", i, len(cfg))
		args := append(append([]string{}, cfg...), "worktree", "add", "--quiet", "-b", branch, plain, "HEAD")
		quiet()
		t0 := time.Now()
		if _, err := git(ctx, b.ws, nil, args...); err != nil {
			return err
		}
		*out = append(*out, time.Since(t0))
		if _, err := git(ctx, b.ws, nil, "worktree", "remove", "--force", plain); err != nil {
			return err
		}
		_, err := git(ctx, b.ws, nil, "branch", "-D", branch)
		return err
	}
	for i := 0; i < b.o.startRuns; i++ {
		steps := []func() error{
			func() error { return prsmStart(b.srv, fmt.Sprintf("warm-%d", i), &warmS) },
			func() error { return prsmStart(cold, fmt.Sprintf("cold-%d", i), &coldS) },
			func() error { return gitAdd(i, nil, &gs) },
			func() error { return gitAdd(i, []string{"-c", "checkout.workers=0"}, &gw) },
		}
		for j := range steps { // rotate who goes first
			if err := steps[(i+j)%len(steps)](); err != nil {
				return err
			}
		}
	}
	b.rep.add("session-start", b.n, "prsm, warm worktree", "ms", false, durations(warmS), "")
	b.rep.add("session-start", b.n, "prsm, cold", "ms", false, durations(coldS), "")
	b.rep.add("session-start", b.n, "git worktree add", "ms", true, durations(gs), "")
	b.rep.add("session-start", b.n, "git worktree add (checkout.workers=0)", "ms", true, durations(gw), "")
	// The main server's next warm worktree is ready before the other
	// measures run.
	return b.awaitWarm(ctx, len(warmS)+1)
}

// awaitWarm waits until the server logged its n-th warm worktree ready.
func (b *bench) awaitWarm(ctx context.Context, n int) error {
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		log, err := os.ReadFile(b.srv.log)
		if err != nil {
			return err
		}
		if bytes.Count(log, []byte(`msg="warm worktree ready"`)) >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("no warm worktree ready (number %d) after 5 minutes: see %s", n, b.srv.log)
}
