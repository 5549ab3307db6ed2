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
	"github.com/prsm-dev/prsm/agents"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/safepath"
)

func (a *app) runCmd() *cobra.Command {
	var sessionID, name, mode, agent string
	var noAuto, fresh bool
	c := &cobra.Command{
		Use:     "run [--session ID | --name N | --new] [--mode M] -- CMD [ARGS...]",
		Example: "  prsm run -- claude\n  prsm run --new --name edge -- codex\n  prsm run --mode review -- gemini",
		Short:   "Run an agent (any command) inside a session's worktree; every change it makes is recorded",
		Long: `Run an agent (any command) inside a session's worktree; every change it makes
is recorded. The session is the one --session or --name names; else the one
active session of the same agent (the command's name, or --agent), when there
is exactly one; else a new one. --new always starts a new one (named, with
--name). A session a live run is in is never joined by another: a second run
starts a session of its own, and --session or --name of a held one is
refused with the holder's pid.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("usage: prsm run [--session ID | --name N] -- CMD [ARGS...]", "prsm run needs a command to run")
			}
			if sessionID != "" && (name != "" || fresh) {
				return usagef("give one of them", "--session cannot be used with --name or --new")
			}
			if mode != "" && mode != prsm.ModeAuto && mode != prsm.ModeReview {
				return usagef("use --mode auto or --mode review", "unknown mode %q", mode)
			}
			return a.run(cmd.Context(), sessionID, name, mode, agent, noAuto, fresh, args)
		},
	}
	c.Flags().StringVar(&sessionID, "session", "", "reuse this session (id or unique prefix)")
	c.Flags().StringVar(&name, "name", "", "reuse the active session with this name, or start one with it")
	c.Flags().StringVar(&mode, "mode", "", "auto or review, for a new session")
	c.Flags().StringVar(&agent, "agent", "", "agent name for a new session (default: the command's name)")
	c.Flags().BoolVar(&noAuto, "no-auto-checkpoints", false, "a new session takes no automatic checkpoints")
	c.Flags().BoolVar(&fresh, "new", false, "start a new session (named with --name) even when one of this agent is active")
	return c
}

// exitError carries the agent's exit code through prsm.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func (a *app) run(ctx context.Context, sessionID, name, mode, agent string, noAuto, fresh bool, argv []string) error {
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
	// hold is this run's hold on its session: a session another live run
	// holds is never joined (runhold.go).
	var s *prsm.Session
	var hold *runHold
	defer func() { hold.release() }()
	take := func(ss *prsm.Session) (int, error) {
		h, pid, err := holdRun(p.dir, ss.ID)
		if h != nil {
			hold = h
		}
		return pid, err
	}
	switch {
	case sessionID != "":
		if s, err = cl.Session(ctx, sessionID); err != nil {
			return err
		}
		if s.Status != prsm.SessionActive {
			return fmt.Errorf("session %s has ended; start a new one with `prsm run -- %s`", s.ID, argv[0])
		}
	case name != "" && !fresh:
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
	if s != nil {
		if pid, err := take(s); err != nil {
			return err
		} else if hold == nil {
			return heldError(s, pid)
		}
	}
	if agent == "" {
		agent = filepath.Base(argv[0])
	}
	if s == nil && sessionID == "" && name == "" && !fresh {
		// The one active session of this agent, if there is one.
		list, err := cl.Sessions(ctx, prsm.SessionActive)
		if err != nil {
			return err
		}
		var mine []prsm.Session
		for _, ss := range list {
			if ss.AgentID == agent {
				mine = append(mine, ss)
			}
		}
		if len(mine) == 1 {
			pid, err := take(&mine[0])
			if err != nil {
				return err
			}
			if hold != nil {
				s = &mine[0]
				fmt.Fprintf(a.stdio.Err, "prsm: joining session %s (%s), the active session of %s; --new starts another\n", s.ID, printable(s.Name), printable(agent))
			} else {
				fmt.Fprintf(a.stdio.Err, "prsm: session %s (%s) of %s is held by %s; starting a new one\n",
					mine[0].ID, printable(mine[0].Name), printable(agent), holder("another live run", pid))
			}
		} else if len(mine) > 1 {
			fmt.Fprintf(a.stdio.Err, "prsm: %d sessions of %s are active; starting a new one (--session ID joins one)\n", len(mine), printable(agent))
		}
	}
	created := s == nil
	if s == nil {
		req := api.StartRequest{Name: name, AgentID: agent, Mode: mode}
		if noAuto {
			off := false
			req.AutoCheckpoints = &off
		}
		if s, err = cl.StartSession(ctx, req); err != nil {
			return err
		}
		// A new session is this run's; nobody else can hold it yet.
		if _, err := take(s); err != nil {
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
	env := append(withoutEnv(os.Environ(), api.HookTokenEnv), "PWD="+dir, "PRSM_SESSION_ID="+s.ID, "PRSM_WORKSPACE="+p.repo.Root)
	// The agent's hooks send a hook token of this session, which sends
	// its hook events and nothing else; the server's own token never
	// enters the agent's environment.
	baseURL := cl.BaseURL
	if ht, err := cl.HookToken(ctx, s.ID); err == nil {
		env = append(env, api.HookTokenEnv+"="+ht.Token)
	} else {
		fmt.Fprintf(a.stdio.Err, "prsm: no hook token for this run (%v); the agent's hooks find the server through server.json\n", err)
		baseURL = "" // Claude's http hooks would have no token: its command hooks instead
	}
	// An agent prsm has hooks for gets them for this run.
	argv, wired := agents.WireRun(ctx, &agents.Run{Argv: argv, Dir: dir, Env: env,
		Worktree: s.WorktreePath, Workspace: p.repo.Root, ProjectDir: p.dir, BaseURL: baseURL, Self: selfPath(), Err: a.stdio.Err})
	child := exec.Command(argv[0], argv[1:]...)
	child.Dir = dir
	child.Env = append(env, wired...)
	child.Stdin, child.Stdout, child.Stderr = a.stdio.In, a.stdio.Out, a.stdio.Err
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
		fmt.Fprintf(a.stdio.Err, "prsm: %s exited with %d; %s changed", printable(argv[0]), code, prsm.Plural(len(names), "file"))
		if len(names) > 0 && len(names) <= 5 {
			fmt.Fprintf(a.stdio.Err, " (%s)", joinShort(names))
		}
		var conflicts []string
		for _, r := range recs {
			if r.Status == prsm.StatusPending && r.SyncState == prsm.SyncConflict {
				conflicts = append(conflicts, r.ID)
			}
		}
		fmt.Fprintf(a.stdio.Err, ", %s pending", prsm.Plural(pending, "change"))
		if len(conflicts) > 0 {
			fmt.Fprintf(a.stdio.Err, ", %d of them in conflict", len(conflicts))
		}
		fmt.Fprintln(a.stdio.Err)
		for _, id := range conflicts {
			fmt.Fprintf(a.stdio.Err, "prsm: conflict: resolve with `prsm changes resolve %s mine|agent|markers`\n", printable(id))
		}
		fmt.Fprintf(a.stdio.Err, "prsm: review with `prsm changes --session %s`, or `prsm ui`\n", s.ID)
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// withoutEnv is env without its entries for name: a variable the run
// sets itself is not inherited from an outer one (a `prsm run` inside an
// agent's shell holds that agent's hook token).
func withoutEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return out
}

func joinShort(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += quoteName(n)
	}
	return out
}
