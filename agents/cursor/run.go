package cursor

import (
	"fmt"
	"io"
	"path/filepath"
)

// cursorRunNote tells the user, once per `prsm run -- cursor-agent ...`,
// that prsm cannot add its hooks for one Cursor run: Cursor reads hooks
// only from its hooks.json files (the user's ~/.cursor and the project's
// .cursor), and has no flag or variable that names another; a file prsm
// wrote into the worktree for the run would itself be recorded as a
// change. Without prsm's hooks installed, its changes come in as Watch
// records, and the note says which `prsm hooks install` to run.
func cursorRunNote(argv []string, worktree string, errOut io.Writer) {
	if len(argv) == 0 {
		return
	}
	if name := filepath.Base(argv[0]); name != "cursor-agent" && name != "cursor" {
		return
	}
	candidates := []string{filepath.Join(worktree, ".cursor", "hooks.json")}
	if p, err := cursorHooksPath(""); err == nil {
		candidates = append(candidates, p)
	}
	installed := installer().Installed
	for _, p := range candidates {
		if ok, _ := installed(p); ok {
			return
		}
	}
	fmt.Fprintln(errOut, "prsm: Cursor takes hooks only from its hooks.json files, so prsm run cannot add prsm's for one run; its changes come in as Watch records. Run `prsm hooks install cursor` once")
}
