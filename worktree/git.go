package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	linked  Linked // set by In: a session worktree, named to git by prsm
	timeout time.Duration
	user    bool // AsUser
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

// Env adds environment variables (KEY=VALUE) for this call only. A
// variable that would point git at another repository or bring in
// configuration (GIT_DIR, GIT_CONFIG_*, ...) is refused: the runner alone
// decides those.
func (c *Cmd) Env(kv ...string) *Cmd {
	for _, v := range kv {
		if k, _, _ := strings.Cut(v, "="); redirects(k) {
			c.err = fmt.Errorf("git: refusing environment variable %s", k)
		}
	}
	c.env = append(c.env, kv...)
	return c
}

// Stdin sets the standard input.
func (c *Cmd) Stdin(b []byte) *Cmd { c.stdin = b; return c }

// Dir sets the directory git runs in (passed as -C), where git finds the
// repository on its own. A runner with a Confined directory refuses a Dir
// inside it: a session worktree needs In.
func (c *Cmd) Dir(dir string) *Cmd { c.dir = dir; return c }

// In runs the command in the session worktree l, with its git directory
// and work tree named by prsm (--git-dir, --work-tree): git never reads
// the worktree's .git file, which the agent can rewrite to name a git
// directory (and so a config, with commands in it) of its own making.
func (c *Cmd) In(l Linked) *Cmd {
	if l.GitDir == "" || l.WorkTree == "" || !filepath.IsAbs(l.GitDir) || !filepath.IsAbs(l.WorkTree) {
		c.err = fmt.Errorf("git: incomplete worktree %+v", l)
	}
	c.linked = l
	return c
}

// AsUser runs the command as the user's own git command would run in
// the user's workspace: with their hooks and their commit signing
// (safeConfig switches both off for every other call). Only prsm commit
// uses it, for the commit it makes on the user's branch. It refuses a
// session worktree (In): there the agent controls the hooks.
func (c *Cmd) AsUser() *Cmd { c.user = true; return c }

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

// Runner runs git commands. Every git call in prsm goes through one, and
// every call it runs has what git's configuration could run switched off
// (safeConfig, and filter drivers: noFilters).
type Runner struct {
	// Git is the git binary; "git" when empty.
	Git string
	// Timeout bounds each call; DefaultTimeout when zero.
	Timeout time.Duration
	// Confined, when set, is where prsm keeps its session worktrees. No
	// call runs by Dir in it (or below it): there git would follow a
	// worktree's .git file, which the agent controls. Calls there use
	// Cmd.In.
	Confined string

	pin *pinned // Pinned
}

// safeConfig switches off, for every call, what git's configuration
// could make it run: the fsmonitor hook (run by every command that reads
// the index: status, check-ignore, cat-file), hooks (worktree add runs
// post-checkout, branch deletion reference-transaction), signing programs
// (commit-tree honours commit.gpgSign), and any transport with its ssh
// command (prsm never fetches: protocol.allow=never stops them all).
// Given with -c, they also reach the git processes git starts (through
// GIT_CONFIG_PARAMETERS) and outrank every config file. The diff family
// gets --no-ext-diff and --no-textconv too (diffOpts).
var safeConfig = []string{
	"-c", "core.fsmonitor=false",
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.sshCommand=false",
	"-c", "protocol.allow=never",
	"-c", "commit.gpgSign=false",
}

// userConfig is safeConfig without what switches off the user's hooks
// and signing (Cmd.AsUser).
var userConfig = []string{
	"-c", "core.fsmonitor=false",
	"-c", "core.sshCommand=false",
	"-c", "protocol.allow=never",
}

// diffOpts are added to commands that can run an external diff program
// (diff.external, GIT_EXTERNAL_DIFF) or a textconv filter
// (diff.<driver>.textconv, picked by the worktree's .gitattributes).
var diffOpts = map[string]bool{"diff": true, "log": true, "show": true}

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
	// Programs git would run, and a config file git would read besides
	// the user's own.
	"GIT_EXTERNAL_DIFF": true, "GIT_DIFF_OPTS": true, "GIT_SSH": true, "GIT_SSH_COMMAND": true,
	"GIT_ASKPASS": true, "GIT_PROXY_COMMAND": true, "GIT_EXEC_PATH": true, "GIT_CONFIG": true,
}

// redirects reports whether the environment variable k would point git at
// another repository or work tree, bring in configuration, or name a
// program for git to run: Cmd.Env refuses those.
func redirects(k string) bool {
	switch k {
	case "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
		"GIT_NAMESPACE", "GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "GIT_PROXY_COMMAND",
		"GIT_EXEC_PATH", "GIT_EDITOR", "GIT_PAGER":
		return true
	}
	return strings.HasPrefix(k, "GIT_CONFIG")
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
	argv, err := r.argv(c)
	if err != nil {
		return nil, err
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
	noFilters, err := r.noFilters(ctx, c)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, r.bin(), argv...)
	cmd.Env = Environ(append(noFilters, c.env...)...)
	cmd.WaitDelay = 5 * time.Second
	g := inGroup(cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if c.stdin != nil {
		cmd.Stdin = bytes.NewReader(c.stdin)
	}
	err = cmd.Run()
	g.finish()
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

// argv is the argument list c runs with after "git": safeConfig, then
// where it runs (-C dir, or a session worktree's --git-dir and
// --work-tree), then c's own arguments. It refuses a call with nowhere to
// run (git would look in prsm's own working directory) and a Dir inside
// the Confined directory.
func (r *Runner) argv(c *Cmd) ([]string, error) {
	loc, err := r.location(c)
	if err != nil {
		return nil, err
	}
	cfg := safeConfig
	if c.user {
		if c.linked.GitDir != "" {
			return nil, errors.New("git: a session worktree's command never runs the user's hooks")
		}
		cfg = userConfig
	}
	argv := append(append([]string(nil), cfg...), loc...)
	sub := subcommand(c.args)
	argv = append(argv, c.args[:sub+1]...)
	if sub < len(c.args) && diffOpts[c.args[sub]] {
		argv = append(argv, "--no-ext-diff", "--no-textconv")
	}
	return append(argv, c.args[sub+1:]...), nil
}

// location is where c runs, as git's options: -C dir, or a session
// worktree's -C, --git-dir and --work-tree.
func (r *Runner) location(c *Cmd) ([]string, error) {
	if c.err != nil {
		return nil, c.err
	}
	switch l := c.linked; {
	case l.GitDir != "":
		if c.dir != "" {
			return nil, errors.New("git: both Dir and In given")
		}
		// -C as well: paths on stdin and in output are relative to
		// the work tree's top.
		return []string{"-C", l.WorkTree, "--git-dir=" + l.GitDir, "--work-tree=" + l.WorkTree}, nil
	case c.dir != "":
		if r.Confined != "" && within(r.Confined, c.dir) {
			return nil, fmt.Errorf("git: refusing to run in %s by its .git file: a session worktree's git directory is named by prsm (Cmd.In)", c.dir)
		}
		return []string{"-C", c.dir}, nil
	}
	return nil, errors.New("git: no directory to run in")
}

// subcommand is the index of the subcommand in args: past the options
// given before it ("-c", "key=value" pairs).
func subcommand(args []string) int {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		if args[i] == "-c" {
			i++
		}
		i++
	}
	return min(i, len(args)-1)
}

// within reports whether dir is area or lies below it, both with their
// symlinks resolved (realPath) and compared by filepath.Rel.
func within(area, dir string) bool {
	rel, err := filepath.Rel(realPath(area), realPath(dir))
	return err == nil && filepath.IsLocal(rel)
}

// realPath is p absolute with the symlinks of its longest existing
// prefix resolved: a directory that does not exist yet still compares
// by where it would be.
func realPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	var rest []string
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(append([]string{p}, rest...)...)
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// bin is the git binary the runner runs.
func (r *Runner) bin() string {
	if r.Git == "" {
		return "git"
	}
	return r.Git
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
