package hook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/mattn/go-isatty"
)

// Titles names each agent prsm has an adapter for, as people write it.
var Titles = map[string]string{
	"claude":   "Claude Code",
	"codex":    "Codex",
	"gemini":   "Gemini CLI",
	"opencode": "opencode",
	"copilot":  "GitHub Copilot CLI",
	"cursor":   "Cursor",
}

// Agents lists the agents prsm has an adapter for, sorted.
func Agents() []string {
	var names []string
	for name := range Titles {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Command is `prsm hook AGENT` (and `prsm-hook AGENT`) once the agent is
// known: args are what follows the agent on the command line, in the
// event on stdin. What every adapter shares is here: no arguments (a
// flag mistake would be a usage error, exit 2, which agents read as
// "block the tool"), a terminal on stdin refused, a panic made an
// ordinary failure, every error one line ("prsm hook: ...") for stderr
// and exit 1.
func (a *Adapter) Command(ctx context.Context, agent string, args []string, in io.Reader) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
		}
		if err != nil {
			err = errors.New(OneLine("prsm hook: " + err.Error()))
		}
	}()
	title, ok := Titles[agent]
	if !ok {
		return fmt.Errorf("unknown agent %q", agent)
	}
	if len(args) > 0 {
		return fmt.Errorf("prsm hook %s takes no arguments; it reads the hook event on stdin", agent)
	}
	if f, ok := in.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		return fmt.Errorf("prsm hook %s reads a %s hook event (JSON) on stdin; %s runs it, see `prsm hooks install %s`", agent, title, title, agent)
	}
	_, err = a.Run(ctx, agent, in)
	return err
}
