package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
)

// Filter drivers. A `filter` attribute names a driver whose programs git
// runs on a file's content: clean on the way in (add, hash-object, a
// status that checks a changed file), smudge or a long-running process
// on the way out (checkout, cat-file --filters). The drivers live in
// git's configuration, and an agent writes the repository's shared
// config from its worktree (`git config filter.x.clean ...`), so prsm
// runs none of them, the user's own (git-lfs) included, as it runs no
// hook or fsmonitor: it cannot tell them apart. git has no switch for
// all drivers, so every call that could run one first lists the drivers
// its configuration defines there (from the config files' bytes, asking
// git only for bytes it has not parsed: cachedDrivers; or asking git),
// and runs with each one's programs emptied and required off
// (GIT_CONFIG_KEY_n, which takes any name). Built-in conversions (eol, ident, working-tree-encoding) run no
// program and stay. A driver added between the two calls (a few
// milliseconds) would still run: the one gap. A runner Pinned for one
// short operation asks once for all its calls there, and widens that gap
// to the operation's length.

// convertsNothing are the subcommands that never read or write a
// working-tree file's content, and so run no filter. (Any command that
// writes an index may read a file: git checks a racily clean entry's
// content when it writes the index, write-tree too.)
var convertsNothing = map[string]bool{
	"rev-parse": true, "for-each-ref": true, "notes": true, "update-ref": true, "symbolic-ref": true,
	"commit-tree": true, "branch": true, "config": true, "check-ignore": true,
	"check-attr": true, "ls-tree": true, "diff-tree": true, "init": true, "merge-base": true,
	"show-ref": true, "log": true, "show": true,
}

// mayFilter reports whether c's git could run a filter driver.
func mayFilter(c *Cmd) bool {
	sub := subcommand(c.args)
	if sub >= len(c.args) || convertsNothing[c.args[sub]] {
		return false
	}
	rest := c.args[sub+1:]
	switch c.args[sub] {
	case "cat-file":
		return slices.Contains(rest, "--filters") || slices.Contains(rest, "--textconv")
	case "hash-object":
		return !slices.Contains(rest, "--no-filters")
	case "diff":
		// Two revisions: trees against each other, no file read.
		if i := slices.Index(rest, "--end-of-options"); i >= 0 {
			revs := rest[i+1:]
			if j := slices.Index(revs, "--"); j >= 0 {
				revs = revs[:j]
			}
			return len(revs) < 2
		}
	}
	return true
}

// noFilters is the environment that switches off, for c, every filter
// driver git's configuration defines where c runs (none asked for a call
// that runs no filter).
func (r *Runner) noFilters(ctx context.Context, c *Cmd) ([]string, error) {
	if !mayFilter(c) {
		return nil, nil
	}
	names, err := r.pinnedDrivers(c)
	if names == nil && err == nil {
		names, err = r.drivers(ctx, c)
	}
	if err != nil {
		return nil, err
	}
	env := make([]string, 0, 8*len(names)+1)
	n := 0
	for _, name := range names {
		for _, kv := range [][2]string{{"clean", ""}, {"smudge", ""}, {"process", ""}, {"required", "false"}} {
			env = append(env, "GIT_CONFIG_KEY_"+strconv.Itoa(n)+"=filter."+name+"."+kv[0], "GIT_CONFIG_VALUE_"+strconv.Itoa(n)+"="+kv[1])
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	return append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(n)), nil
}

// pinned is what Pinned found: where, and the filter drivers there.
type pinned struct {
	loc   []string
	names []string
}

// Pinned returns a runner for one short operation of several calls in
// the repository at dir (prsm commit's read-tree, commit and index
// update, say): it asks git once, now, for the filter drivers defined
// there, and its calls in dir switch those off without asking again, a
// git process each saved. A driver defined after Pinned would run in
// them, so the runner must not outlive the operation.
func (r *Runner) Pinned(ctx context.Context, dir string) (*Runner, error) {
	c := NewCmd("config").Dir(dir)
	loc, err := r.location(c)
	if err != nil {
		return nil, err
	}
	names, err := r.drivers(ctx, c)
	if err != nil {
		return nil, err
	}
	p := *r
	p.pin = &pinned{loc: loc, names: append([]string{}, names...)}
	return &p, nil
}

// pinnedDrivers are the drivers Pinned found for c's location (non-nil,
// maybe empty); nil when the runner is not pinned there.
func (r *Runner) pinnedDrivers(c *Cmd) ([]string, error) {
	if r.pin == nil {
		return nil, nil
	}
	loc, err := r.location(c)
	if err != nil || !slices.Equal(loc, r.pin.loc) {
		return nil, err
	}
	return r.pin.names, nil
}

// drivers lists the filter drivers that git's configuration defines
// where c runs: from the config files' content when it can
// (cachedDrivers), else by asking git (filterDrivers).
func (r *Runner) drivers(ctx context.Context, c *Cmd) ([]string, error) {
	if names, ok := r.cachedDrivers(ctx, c); ok {
		return names, nil
	}
	return r.filterDrivers(ctx, c)
}

// filterDrivers asks git for the filter drivers its configuration
// defines where c runs: the <name> of every filter.<name>.<key>.
func (r *Runner) filterDrivers(ctx context.Context, c *Cmd) ([]string, error) {
	loc, err := r.location(c)
	if err != nil {
		return nil, err
	}
	out, err := r.listGit(ctx, append(loc, "config", "-z", "--name-only", "--get-regexp", `^filter\.`), nil)
	if err != nil {
		if ExitCode(err) == 1 && err.(*Error).Stderr == "" {
			return nil, nil // none defined
		}
		return nil, err
	}
	return driverNames(out), nil
}

// listGit runs git, with safeConfig, for what prsm asks of git's
// configuration (args: where, then the config command), stdin its
// input when not nil.
func (r *Runner) listGit(ctx context.Context, args []string, stdin []byte, env ...string) ([]byte, error) {
	argv := append(append([]string(nil), safeConfig...), args...)
	cmd := exec.CommandContext(ctx, r.bin(), argv...)
	cmd.Env = Environ(env...)
	inGroup(cmd)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.Output()
	if err != nil {
		gerr := &Error{Args: args, ExitCode: -1, Stderr: stderr.String(), Err: fmt.Errorf("list filter drivers: %w", err)}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			gerr.ExitCode = ee.ExitCode()
		}
		if ctx.Err() == context.DeadlineExceeded {
			gerr.Err = fmt.Errorf("list filter drivers: %w", ErrTimeout)
		}
		return out, gerr
	}
	return out, nil
}
