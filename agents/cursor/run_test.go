package cursor

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// prsm run -- cursor-agent cannot add hooks for the run: without prsm's
// hooks installed it says so and offers the install; with them, or for
// another command, it says nothing.
func TestCursorRunNote(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	wt := t.TempDir()
	var errb bytes.Buffer
	cursorRunNote([]string{"codex", "exec"}, wt, &errb)
	if errb.Len() != 0 {
		t.Errorf("another command: %q", errb.String())
	}
	cursorRunNote([]string{"/usr/bin/cursor-agent", "-p", "x"}, wt, &errb)
	if got := errb.String(); !strings.Contains(got, "cannot add prsm's for one run") || !strings.Contains(got, "`prsm hooks install cursor`") {
		t.Errorf("not installed: %q", got)
	}
	errb.Reset()
	path := filepath.Join(home, ".cursor", "hooks.json")
	if err := installCursorHooks(&bytes.Buffer{}, path, []string{"/bin/prsm", "hook", "cursor"}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	cursorRunNote([]string{"cursor-agent"}, wt, &errb)
	if errb.Len() != 0 {
		t.Errorf("installed: %q", errb.String())
	}
}
