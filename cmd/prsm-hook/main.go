// Command prsm-hook is `prsm hook AGENT` in a binary of its own: the agent
// hook adapters (the agents registry, run by package hook) without the store, the git layer, the HTTP
// server, net/http or package net, so that the process an agent starts
// before and after every tool call starts in a fraction of the time the
// whole prsm binary's package initialisation and page faults cost
// (docs/performance.md). It links no libc, so a plain `go install` of it
// is as static as `make install`'s. What needs the heavy packages is rare,
// and done by the prsm binary beside it: finding the workspace of
// $PRSM_SESSION_ID (`prsm hook locate DIR`) and starting a server
// (`prsm serve --detach`).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents"
	"github.com/prsm-dev/prsm/hook"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `usage: prsm-hook AGENT < EVENT.json
       prsm-hook --version

The agent hook adapter prsm's hooks run (see prsm hooks install AGENT):
it reads one hook event (JSON) on stdin and tells the session's server,
as prsm hook AGENT does. AGENT is one of: %s.
`

// run is the command; it never exits 2, which agents read as "block the
// tool".
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	names := strings.Join(agents.Names(), ", ")
	for _, arg := range args {
		switch arg {
		case "-h", "--help":
			fmt.Fprintf(stdout, usage, names)
			return 0
		case "--version":
			fmt.Fprintf(stdout, "prsm-hook version %s\n", prsm.BuildInfo())
			return 0
		}
	}
	if len(args) == 0 {
		fmt.Fprintf(stderr, "prsm hook: prsm-hook needs an agent, one of: %s\n", names)
		return 1
	}
	ag := agents.Lookup(args[0])
	if ag == nil || ag.Adapter() == nil {
		fmt.Fprintf(stderr, "prsm hook: unknown agent %q; prsm knows: %s\n", hook.OneLine(args[0]), names)
		return 1
	}
	a := &hook.Adapter{Stdout: stdout, Stderr: stderr, Discover: discover, StartServer: startServer}
	if err := a.Command(ctx, ag, args[1:], stdin); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// prsmBinary is the prsm binary beside this one, else prsm on $PATH.
func prsmBinary() (string, error) {
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		p := filepath.Join(filepath.Dir(exe), "prsm")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := exec.LookPath("prsm")
	if err != nil {
		return "", errors.New("no prsm binary beside prsm-hook or on $PATH")
	}
	return p, nil
}

// runPrsm runs the prsm binary with args and returns its stdout.
func runPrsm(ctx context.Context, args ...string) ([]byte, error) {
	bin, err := prsmBinary()
	if err != nil {
		return nil, err
	}
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("prsm %s: %s%s", args[0], msg, versionNote(msg, bin))
	}
	return out.Bytes(), nil
}

// versionNote is what a failure of the prsm binary bin, which said msg,
// adds when bin does not know the command or a flag this prsm-hook gives
// it (an older prsm took `hook locate` for an agent named locate): bin is
// of another version (prsm and prsm-hook installed apart).
func versionNote(msg, bin string) string {
	if !strings.Contains(msg, "unknown command") && !strings.Contains(msg, "unknown flag") &&
		!strings.Contains(msg, "unknown shorthand flag") && !strings.Contains(msg, `unknown agent "locate"`) {
		return ""
	}
	return fmt.Sprintf(" (%s is not of this prsm-hook's version, %s: install prsm and prsm-hook together, with make install or both from one release)", bin, prsm.Version)
}

// discover asks prsm for the working tree that holds dir.
func discover(ctx context.Context, dir string) (*hook.Repo, error) {
	out, err := runPrsm(ctx, "hook", "locate", dir)
	if err != nil {
		return nil, err
	}
	var r hook.Repo
	if err := json.Unmarshal(out, &r); err != nil || r.Root == "" || r.Identity == "" {
		return nil, fmt.Errorf("prsm hook locate %s: unexpected answer %q", dir, out)
	}
	return &r, nil
}

// startServer has prsm start the workspace's server in the background;
// prsm serve --detach returns once it answers.
func startServer(ctx context.Context, _, root string) error {
	_, err := runPrsm(ctx, "serve", "--detach", "--workspace", root)
	return err
}
