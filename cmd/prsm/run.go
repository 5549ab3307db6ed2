package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/safepath"
)

func (a *app) runCmd() *cobra.Command {
	var sessionID, name, mode, agent string
	var noAuto bool
	c := &cobra.Command{
		Use:   "run [--session ID | --name N] [--mode M] -- CMD [ARGS...]",
		Short: "Run an agent (any command) inside a session's worktree; every change it makes is recorded",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("usage: prsm run [--session ID | --name N] -- CMD [ARGS...]", "prsm run needs a command to run")
			}
			if sessionID != "" && name != "" {
				return usagef("give one of them", "--session and --name cannot be used together")
			}
			if mode != "" && mode != prsm.ModeAuto && mode != prsm.ModeReview {
				return usagef("use --mode auto or --mode review", "unknown mode %q", mode)
			}
			return a.run(cmd.Context(), sessionID, name, mode, agent, noAuto, args)
		},
	}
	c.Flags().StringVar(&sessionID, "session", "", "reuse this session (id or unique prefix)")
	c.Flags().StringVar(&name, "name", "", "reuse the active session with this name, or start one with it")
	c.Flags().StringVar(&mode, "mode", "", "auto or review, for a new session")
	c.Flags().StringVar(&agent, "agent", "", "agent name for a new session (default: the command's name)")
	c.Flags().BoolVar(&noAuto, "no-auto-checkpoints", false, "a new session takes no automatic checkpoints")
	return c
}

// exitError carries the agent's exit code through prsm.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func (a *app) run(ctx context.Context, sessionID, name, mode, agent string, noAuto bool, argv []string) error {
	// A command that is not there starts no session (a name with a slash
	// is found where it runs, in the worktree: checked at its start).
	if !strings.ContainsRune(argv[0], filepath.Separator) {
		if _, err := exec.LookPath(argv[0]); err != nil {
			return fmt.Errorf("%s: command not found", printable(argv[0]))
		}
	}
	cl, p, err := a.connect(ctx)
	if err != nil {
		return err
	}
	var s *prsm.Session
	switch {
	case sessionID != "":
		if s, err = cl.Session(ctx, sessionID); err != nil {
			return err
		}
		if s.Status != prsm.SessionActive {
			return fmt.Errorf("session %s has ended; start a new one with `prsm run -- %s`", s.ID, argv[0])
		}
	case name != "":
		list, err := cl.Sessions(ctx, prsm.SessionActive)
		if err != nil {
			return err
		}
		for _, ss := range list {
			if ss.Name == name {
				s = &ss
			}
		}
	}
	created := s == nil
	if s == nil {
		if agent == "" {
			agent = filepath.Base(argv[0])
		}
		req := api.StartRequest{Name: name, AgentID: agent, Mode: mode}
		if noAuto {
			off := false
			req.AutoCheckpoints = &off
		}
		if s, err = cl.StartSession(ctx, req); err != nil {
			return err
		}
		fmt.Fprintf(a.stdio.Err, "prsm: session %s (%s) in %s\n", s.ID, s.Name, s.WorktreePath)
	}
	// The run is a turn: its automatic checkpoint is where a rewind
	// undoes it.
	if _, err := cl.Turn(ctx, s.ID, api.TurnRequest{Prompt: "prsm run " + printable(strings.Join(argv, " "))}); err != nil {
		fmt.Fprintf(a.stdio.Err, "prsm: no checkpoint before the run: %v\n", err)
	}
	// Run where the user stands, mirrored into the worktree.
	dir := s.WorktreePath
	if wd, err := os.Getwd(); err == nil {
		if rel, err := safepath.Rel(p.repo.Root, wd); err == nil {
			if fi, err := os.Stat(filepath.Join(s.WorktreePath, rel)); err == nil && fi.IsDir() {
				dir = filepath.Join(s.WorktreePath, rel)
			}
		}
	}
	started := time.Now().UTC()
	// PWD too: the shell's says the workspace, and an agent that believes
	// it (opencode does) would work there, unrecorded.
	env := append(os.Environ(), "PWD="+dir, "PRSM_SESSION_ID="+s.ID, "PRSM_WORKSPACE="+p.repo.Root)
	// An agent prsm has hooks for gets them for this run.
	argv = codexRunArgs(ctx, argv, dir, env, a.stdio.Err)
	argv, claudeEnv := claudeRunArgs(argv, s.WorktreePath, p.dir, cl.BaseURL, cl.Token, a.stdio.Err)
	child := exec.Command(argv[0], argv[1:]...)
	child.Dir = dir
	child.Env = append(env, claudeEnv...)
	child.Stdin, child.Stdout, child.Stderr = a.stdio.In, a.stdio.Out, a.stdio.Err

	// Gemini CLI gets the workspace's trust for the run, and a word on
	// its hooks.
	child.Env = append(child.Env, geminiRun(a.stdio.Err, argv, p.repo.Root, s.WorktreePath)...)
	child.Env = append(child.Env, opencodeRunEnv(argv, s.WorktreePath, a.stdio.Err)...)
	copilotRunNote(argv, s.WorktreePath, a.stdio.Err)
	if err := child.Start(); err != nil {
		if created {
			// Nothing ran in it: the session goes, not left active.
			if _, eerr := cl.EndSession(context.WithoutCancel(ctx), s.ID, false); eerr != nil {
				fmt.Fprintf(a.stdio.Err, "prsm: end session %s: %v\n", s.ID, eerr)
			}
		}
		return fmt.Errorf("start %s: %w", printable(argv[0]), err)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	done := make(chan error, 1)
	go func() { done <- child.Wait() }()
	var waitErr error
wait:
	for {
		select {
		case sig := <-sigs:
			child.Process.Signal(sig) // the agent decides how to stop
		case waitErr = <-done:
			break wait
		}
	}
	code := 0
	if waitErr != nil {
		var ee *exec.ExitError
		if !errors.As(waitErr, &ee) {
			return waitErr
		}
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	}
	// Record what is left unclaimed, then sum up.
	bg := context.WithoutCancel(ctx)
	if _, err := cl.Flush(bg, s.ID); err != nil {
		fmt.Fprintf(a.stdio.Err, "prsm: record final changes: %v\n", err)
	}
	recs, err := cl.Changes(bg, s.ID, "", "")
	if err == nil && created && code != 0 && len(recs) == 0 {
		// A new session that recorded nothing and failed (an agent that
		// refused to start) is not left behind, active and empty.
		if _, err := cl.EndSession(bg, s.ID, false); err != nil {
			fmt.Fprintf(a.stdio.Err, "prsm: end session %s: %v\n", s.ID, err)
		} else {
			fmt.Fprintf(a.stdio.Err, "prsm: %s exited with %d and changed nothing; session %s ended\n", printable(argv[0]), code, s.ID)
		}
		return &exitError{code: code}
	}
	if err == nil {
		files := map[string]bool{}
		for _, r := range recs {
			if !r.Timestamp.Before(started) {
				files[r.RelPath] = true
			}
		}
		names := make([]string, 0, len(files))
		for f := range files {
			names = append(names, f)
		}
		sort.Strings(names)
		ss, _ := cl.Session(bg, s.ID)
		pending := 0
		if ss != nil {
			pending = ss.PendingCount
		}
		fmt.Fprintf(a.stdio.Err, "prsm: %s exited with %d; %d file(s) changed", printable(argv[0]), code, len(names))
		if len(names) > 0 && len(names) <= 5 {
			fmt.Fprintf(a.stdio.Err, " (%s)", joinShort(names))
		}
		fmt.Fprintf(a.stdio.Err, ", %d change(s) pending\n", pending)
		fmt.Fprintf(a.stdio.Err, "prsm: review with `prsm changes --session %s`, or `prsm ui`\n", s.ID)
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}

func joinShort(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += printable(n)
	}
	return out
}
