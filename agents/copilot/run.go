package copilot

import (
	"fmt"
	"io"
	"path/filepath"
)

// copilotRunNote tells the user, once per `prsm run -- copilot ...`, that
// Copilot CLI reports nothing to prsm without prsm's hooks: Copilot reads
// hooks only from files (the user's ~/.copilot/hooks/ and the repository's
// .github/hooks/), and a file prsm wrote into the worktree for the run
// would itself be recorded as a change.
func copilotRunNote(argv []string, worktree string, errOut io.Writer) {
	if len(argv) == 0 || filepath.Base(argv[0]) != "copilot" {
		return
	}
	candidates := []string{filepath.Join(worktree, ".github", "hooks", "prsm.json")}
	if p, err := copilotHooksPath(""); err == nil {
		candidates = append(candidates, p)
	}
	for _, p := range candidates {
		if ok, _ := copilotHooksInstalled(p); ok {
			return
		}
	}
	fmt.Fprintln(errOut, "prsm: Copilot CLI tells prsm of its tool calls only through prsm's hooks, which are not installed; its changes come in as Watch records. Run `prsm hooks install copilot` once")
}
