package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/worktree"
)

// Stdio are the streams a command uses; tests give their own.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// Main runs prsm with the process's arguments and streams.
func Main() int {
	// A relative PRSM_HOME means the caller's directory: the servers
	// and hooks this process starts run elsewhere, and get it absolute.
	if h := os.Getenv("PRSM_HOME"); h != "" && !filepath.IsAbs(h) {
		if abs, err := filepath.Abs(h); err == nil {
			os.Setenv("PRSM_HOME", abs)
		}
	}
	// The npm package's launcher (internal/release) runs this binary with
	// the path of the prsm command it installed; that is the command to
	// show. Not passed on to the processes prsm starts.
	npmLauncher = os.Getenv("PRSM_NPM_LAUNCHER")
	os.Unsetenv("PRSM_NPM_LAUNCHER")
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		if s, ok := <-sigs; ok {
			cancel(signalled{s.(syscall.Signal)})
		}
	}()
	return Run(ctx, os.Args[1:], Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
}

// npmLauncher is the path of the npm package's prsm command when that ran
// this binary, else "".
var npmLauncher string

// signalled is the cause of a command's context ending on a signal (Ctrl-C,
// SIGTERM): a command that stops on it exits as a shell reports a process
// killed by it (interrupted).
type signalled struct{ sig syscall.Signal }

func (s signalled) Error() string { return s.sig.String() + " signal received" }

// Is makes a signal's cause a cancellation, as signal.NotifyContext's is.
func (s signalled) Is(target error) bool { return target == context.Canceled }

// interrupted is the exit error of a command stopped by the signal that
// ended ctx (128+n, as a shell reports it), or nil while ctx is live.
func interrupted(ctx context.Context) error {
	var s signalled
	if errors.As(context.Cause(ctx), &s) {
		return &exitError{code: 128 + int(s.sig)}
	}
	if ctx.Err() != nil {
		return &exitError{code: 128 + int(syscall.SIGINT)}
	}
	return nil
}

// usageError is a mistake in how prsm was called: exit code 2.
type usageError struct{ msg, hint string }

func (e *usageError) Error() string { return e.msg }

func usagef(hint, format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), hint: hint}
}

// Run executes one prsm command and returns its exit code: 0 ok, 1 failure,
// 2 usage error. Errors are printed here, once, with a hint where the user
// can act.
func Run(ctx context.Context, args []string, stdio Stdio) int {
	app := &app{stdio: stdio}
	root := app.rootCmd()
	root.SetArgs(args)
	root.SetIn(stdio.In)
	root.SetOut(stdio.Out)
	root.SetErr(stdio.Err)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code // the agent's own exit code, passed through
	}
	msg, hint, code := explain(err)
	// A message may quote a path or a name the agent chose.
	fmt.Fprintf(stdio.Err, "error: %s\n", printableLines(msg))
	if hint != "" {
		fmt.Fprintf(stdio.Err, "hint: %s\n", printableLines(hint))
	}
	return code
}

// explain maps an error to its message, hint and exit code.
func explain(err error) (msg, hint string, code int) {
	var ue *usageError
	var ae *client.APIError
	var pe *prsm.Error
	switch {
	case errors.As(err, &ue):
		return ue.msg, ue.hint, 2
	case errors.As(err, &ae):
		code = 1
		if ae.Code == "ambiguous_id" || ae.Code == "several_sessions" || ae.Status == 400 && strings.HasPrefix(ae.Code, "invalid") {
			code = 2
		}
		return ae.Msg, ae.Hint, code
	case errors.As(err, &pe):
		code = 1
		if errors.Is(pe.Err, prsm.ErrInvalid) || errors.Is(pe.Err, prsm.ErrAmbiguous) {
			code = 2
		}
		return pe.Msg, pe.Hint, code
	case strings.HasPrefix(err.Error(), "unknown command "):
		// cobra's, for a command prsm does not have.
		return err.Error(), "see `prsm --help`", 2
	case errors.Is(err, worktree.ErrNotRepo):
		return err.Error(), "run prsm inside a git repository, or pass --workspace DIR", 1
	case errors.Is(err, worktree.ErrBare):
		return err.Error(), "prsm needs a working tree; run it in a non-bare clone", 1
	}
	return err.Error(), "", 1
}

type app struct {
	stdio     Stdio
	workspace string
	jsonOut   bool
	// say is --say: the user's note on a decision, for the agent.
	say string
	// inSession is the session whose worktree the command runs in: the
	// one meant when no --session is given.
	inSession string
	// proj is the workspace connect found, for the commands that turn
	// a user's path into the server's (fileArg).
	proj *project
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "prsm",
		Short:         "prsm gives every AI agent session its own worktree and lets you review each change",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       prsm.BuildInfo(),
	}
	root.PersistentFlags().StringVar(&a.workspace, "workspace", "", "the workspace (git working tree); default: the current directory")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usagef("see `"+c.CommandPath()+" --help`", "%v", err)
	})
	root.AddCommand(a.serveCmd(), a.runCmd(), a.gcCmd(), a.stopCmd(), a.statusCmd(), a.sessionCmd(), a.changesCmd(),
		a.checkpointCmd(), a.rewindCmd(), a.rollbackCmd(), blameCmd(a), commitCmd(a), traceCmd(a),
		a.hookCmd(), a.hooksCmd(), a.uiCmd(), a.demoCmd(), a.versionCmd())
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "demo", "hook", "completion", "version":
			// --workspace means nothing to these: their help leaves it
			// out (demo refuses it; it makes its own repository).
			c.PersistentFlags().StringVar(&a.workspace, "workspace", "", "")
			c.PersistentFlags().MarkHidden("workspace")
		}
	}
	return root
}

// versionCmd is `prsm version`, which says what `prsm --version` does.
func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print prsm's version",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintf(a.stdio.Out, "prsm version %s\n", prsm.BuildInfo())
			return nil
		},
	}
}

// exactArgs is cobra.ExactArgs as a usage error.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("usage: "+c.UseLine(), "%s takes %s", c.CommandPath(), what)
		}
		return noEmptyArg(c, args, what)
	}
}

// noEmptyArg refuses a blank argument among args, which c takes as what.
func noEmptyArg(c *cobra.Command, args []string, what string) error {
	for _, arg := range args {
		if strings.TrimSpace(arg) == "" {
			return usagef("usage: "+c.UseLine(), "%s takes %s, not an empty one", c.CommandPath(), what)
		}
	}
	return nil
}

// workspaceDir is --workspace or the current directory.
func (a *app) workspaceDir() (string, error) {
	if a.workspace != "" {
		return filepath.Abs(a.workspace)
	}
	return os.Getwd()
}

// connectSession connects to the workspace's server and resolves the
// session a command acts on (see resolveSession).
func (a *app) connectSession(ctx context.Context, id string) (*client.Client, *prsm.Session, error) {
	cl, _, err := a.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	s, err := a.resolveSession(ctx, cl, id)
	if err != nil {
		return nil, nil, err
	}
	return cl, s, nil
}

// resolveSession is the session a command acts on: id (a unique prefix
// will do) when given, else the one active session. Several active sessions
// are a usage error that lists them.
func (a *app) resolveSession(ctx context.Context, cl *client.Client, id string) (*prsm.Session, error) {
	return a.resolveSessionOwning(ctx, cl, id, nil)
}

// resolveSessionOwning is resolveSession for a command that names
// something of a session (a change or a checkpoint id): with several
// sessions active and none named, the one active session that owns it
// (owns says) is the one, when exactly one does.
func (a *app) resolveSessionOwning(ctx context.Context, cl *client.Client, id string, owns func(*prsm.Session) bool) (*prsm.Session, error) {
	if id == "" {
		id = a.inSession
	}
	if id != "" {
		return cl.Session(ctx, id)
	}
	list, err := cl.Sessions(ctx, prsm.SessionActive)
	if err != nil {
		return nil, err
	}
	switch len(list) {
	case 0:
		return nil, prsm.Errorf(prsm.ErrNotFound, "no_active_session",
			"start one with `prsm session start`, or name an ended one with --session ID", "no active session")
	case 1:
		return &list[0], nil
	}
	if owns != nil {
		var owners []*prsm.Session
		for i := range list {
			if owns(&list[i]) {
				owners = append(owners, &list[i])
			}
		}
		if len(owners) == 1 {
			return owners[0], nil
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d sessions are active; say which with --session ID:", len(list))
	for _, s := range list {
		fmt.Fprintf(&b, "\n  %s  %s", s.ID, printable(s.Name))
	}
	return nil, usagef("pass --session ID (a unique prefix will do)", "%s", b.String())
}
