//go:build unix

package engine_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testgit"
)

// umask is the process's file mode creation mask.
func umask() os.FileMode {
	old := syscall.Umask(0)
	syscall.Umask(old)
	return os.FileMode(old)
}

// TestAgentModesReachWorkspaceAsGitWould (issue 42, item 10): the
// agent's permission bits reach the workspace as git would check them
// out: only the executable bit, under the user's umask. A new file is
// 0666 or 0777 less the umask; an existing one keeps the user's own bits
// with its x bits toggled. A chmod 000 never makes a user's file
// unreadable, a chmod 0777 never makes it world-writable; and a rewind
// that brings back a file the agent made 0777 brings it back the same
// way.
func TestAgentModesReachWorkspaceAsGitWould(t *testing.T) {
	f := newFixture(t)
	write(t, f.ws, "mine.txt", "mine\n")
	testgit.Git(t, f.ws, "add", "-A")
	testgit.Git(t, f.ws, "commit", "-qm", "mine")
	if err := os.Chmod(filepath.Join(f.ws, "mine.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := f.start(prsm.ModeAuto)
	f.turn(s, 1)
	f.tool(s, "m1", "Bash", "", func(wt string) {
		sh(t, wt, "chmod 000 f.txt && chmod 777 keep.txt && echo more >> mine.txt && chmod 000 mine.txt && "+
			"echo new > open.sh && chmod 777 open.sh && echo new > shut.txt && chmod 000 shut.txt && "+
			"echo new > private.txt && chmod 600 private.txt")
	})
	engine.Settle(f.eng)
	m := umask()
	want := map[string]os.FileMode{
		"f.txt":       0o644,      // chmod 000: no x bit changed, the user's file as it was
		"keep.txt":    0o755,      // chmod 777: its x bits set from its read bits
		"mine.txt":    0o600,      // edited and chmod 000: the user's 0600 kept
		"open.sh":     0o777 &^ m, // new and executable
		"shut.txt":    0o666 &^ m, // new, 000 in the worktree
		"private.txt": 0o666 &^ m, // new, 600 in the worktree: git makes no private files either
	}
	check := func(when string) {
		t.Helper()
		for rel, mode := range want {
			fi, err := os.Lstat(filepath.Join(f.ws, rel))
			if err != nil {
				t.Errorf("%s: %v", when, err)
				continue
			}
			if got := fi.Mode().Perm(); got != mode {
				t.Errorf("%s: workspace %s is %o, want %o", when, rel, got, mode)
			}
			if fi.Mode().Perm()&0o002 != 0 {
				t.Errorf("%s: workspace %s is world-writable", when, rel)
			}
		}
	}
	check("after the tool call")
	if got := read(t, f.ws, "mine.txt"); got != "mine\nmore\n" {
		t.Errorf("mine.txt = %q", got)
	}

	// Deleted by the agent, then brought back by a rewind: made anew,
	// as git would make it.
	cp2 := f.turn(s, 2)
	f.tool(s, "m2", "Bash", "", func(wt string) { sh(t, wt, "rm open.sh shut.txt") })
	for _, rel := range []string{"open.sh", "shut.txt"} {
		if _, err := os.Lstat(filepath.Join(f.ws, rel)); !os.IsNotExist(err) {
			t.Fatalf("workspace %s after its deletion: %v", rel, err)
		}
	}
	if _, err := f.eng.Rewind(f.ctx, s.ID, cp2.ID, false); err != nil {
		t.Fatalf("rewind: %v", err)
	}
	engine.Settle(f.eng)
	check("after the rewind")
}
