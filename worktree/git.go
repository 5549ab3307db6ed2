package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// DefaultTimeout bounds every git call that does not set its own.
const DefaultTimeout = 2 * time.Minute

// Cmd is one git invocation built as an argument list. Options are trusted
// literals given to NewCmd and Opt; revisions and paths, which may come from
// users or agents, go through Rev and Paths, which place --end-of-options and
// -- so that they can never be taken as options.
type Cmd struct {
	args    []string
	revs    bool
	paths   bool
	env     []string
	stdin   []byte
	dir     string
	timeout time.Duration
	err     error
}

// NewCmd starts a command: the subcommand and its trusted options.
func NewCmd(sub string, opts ...string) *Cmd {
	return &Cmd{args: append([]string{sub}, opts...)}
}

// Opt adds trusted options. It must not be called after Rev or Paths.
func (c *Cmd) Opt(opts ...string) *Cmd {
	if c.revs || c.paths {
		c.err = errors.New("git: option after revision or path")
	}
	c.args = append(c.args, opts...)
	return c
}

// Rev adds revisions (or other positional arguments) after --end-of-options.
func (c *Cmd) Rev(revs ...string) *Cmd {
	if c.paths {
		c.err = errors.New("git: revision after paths")
	}
	if !c.revs {
		c.args = append(c.args, "--end-of-options")
		c.revs = true
	}
	c.args = append(c.args, revs...)
	return c
}

// Arg adds a positional argument for commands that do not understand
// --end-of-options (commit-tree in git 2.39, for example). An argument that
// starts with "-" is refused.
func (c *Cmd) Arg(args ...string) *Cmd {
	for _, a := range args {
		if strings.HasPrefix(a, "-") || a == "" {
			c.err = fmt.Errorf("git: refusing argument %q", a)
		}
	}
	c.args = append(c.args, args...)
	return c
}

// Paths adds pathspecs after "--". The runner sets GIT_LITERAL_PATHSPECS, so
// no glob or magic applies.
func (c *Cmd) Paths(paths ...string) *Cmd {
	if !c.paths {
		c.args = append(c.args, "--")
		c.paths = true
	}
	c.args = append(c.args, paths...)
	return c
}

// Env adds environment variables (KEY=VALUE) for this call only.
func (c *Cmd) Env(kv ...string) *Cmd { c.env = append(c.env, kv...); return c }

// Stdin sets the standard input.
func (c *Cmd) Stdin(b []byte) *Cmd { c.stdin = b; return c }

// Dir sets the directory git runs in (passed as -C).
func (c *Cmd) Dir(dir string) *Cmd { c.dir = dir; return c }

// Timeout overrides the runner's timeout for this call.
func (c *Cmd) Timeout(d time.Duration) *Cmd { c.timeout = d; return c }

// Args returns the argument list after "git" (for tests and errors).
func (c *Cmd) Args() []string { return append([]string(nil), c.args...) }

// Error is a failed git call. It carries git's stderr so that callers and
// users see why.
type Error struct {
	Args     []string
	ExitCode int
	Stderr   string
	Err      error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrTimeout is wrapped by the Error of a git call that ran out of time.
var ErrTimeout = errors.New("git timed out")

// Runner runs git commands. Every git call in prsm goes through one.
type Runner struct {
	// Git is the git binary; "git" when empty.
	Git string
	// Timeout bounds each call; DefaultTimeout when zero.
	Timeout time.Duration
}

// DefaultRunner is used where no runner is injected.
var DefaultRunner = &Runner{}

// scrubbed are the variables that would redirect git to another repository,
// index or object store. prsm works in several worktrees, so none of them may
// leak in from the environment prsm was started in (a git hook, say).
var scrubbed = map[string]bool{
	"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true,
	"GIT_OBJECT_DIRECTORY": true, "GIT_ALTERNATE_OBJECT_DIRECTORIES": true,
	"GIT_COMMON_DIR": true, "GIT_NAMESPACE": true, "GIT_PREFIX": true,
	"GIT_QUARANTINE_PATH": true, "GIT_CONFIG_PARAMETERS": true, "GIT_CONFIG_COUNT": true,
	"GIT_GLOB_PATHSPECS": true, "GIT_NOGLOB_PATHSPECS": true, "GIT_ICASE_PATHSPECS": true,
	"GIT_LITERAL_PATHSPECS": true, "GIT_TERMINAL_PROMPT": true, "GIT_OPTIONAL_LOCKS": true,
	"GIT_EDITOR": true, "GIT_PAGER": true, "LC_ALL": true, "LANG": true, "LANGUAGE": true,
}

// Environ returns the fixed environment git runs with.
func Environ(extra ...string) []string {
	env := make([]string, 0, len(os.Environ())+8)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if scrubbed[k] || strings.HasPrefix(k, "GIT_CONFIG_KEY_") || strings.HasPrefix(k, "GIT_CONFIG_VALUE_") || strings.HasPrefix(k, "GIT_INTERNAL_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"LC_ALL=C",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_LITERAL_PATHSPECS=1",
		"GIT_EDITOR=true",
		"GIT_PAGER=cat",
	)
	return append(env, extra...)
}

// Run executes c and returns its standard output.
func (r *Runner) Run(ctx context.Context, c *Cmd) ([]byte, error) {
	if c.err != nil {
		return nil, c.err
	}
	timeout := c.timeout
	if timeout == 0 {
		timeout = r.Timeout
	}
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	bin := r.Git
	if bin == "" {
		bin = "git"
	}
	var argv []string
	if c.dir != "" {
		argv = append(argv, "-C", c.dir)
	}
	argv = append(argv, c.args...)
	cmd := exec.CommandContext(ctx, bin, argv...)
	cmd.Env = Environ(c.env...)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if c.stdin != nil {
		cmd.Stdin = bytes.NewReader(c.stdin)
	}
	err := cmd.Run()
	if err != nil {
		gerr := &Error{Args: c.Args(), ExitCode: -1, Stderr: stderr.String(), Err: err}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			gerr.ExitCode = ee.ExitCode()
		}
		if ctx.Err() == context.DeadlineExceeded {
			gerr.Err = fmt.Errorf("%w after %s", ErrTimeout, timeout)
			if gerr.Stderr == "" {
				gerr.Stderr = gerr.Err.Error()
			}
		}
		return stdout.Bytes(), gerr
	}
	return stdout.Bytes(), nil
}

// Output runs c and returns its output with the trailing newline trimmed.
func (r *Runner) Output(ctx context.Context, c *Cmd) (string, error) {
	out, err := r.Run(ctx, c)
	return strings.TrimRight(string(out), "\n"), err
}

// ExitCode returns the exit code of a git error, or -1.
func ExitCode(err error) int {
	var ge *Error
	if errors.As(err, &ge) {
		return ge.ExitCode
	}
	return -1
}
