//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
)

// A prsm binary of another version, which does not know what this
// prsm-hook asks of it (here an older prsm, whose hook command takes
// "locate" for an agent): the hook fails with exit 1, never 2 (which
// blocks the agent's tool), and says that prsm and prsm-hook are of
// different versions and how to install them together.
func TestOtherVersionPrsm(t *testing.T) {
	bin := t.TempDir()
	old := "#!/bin/sh\necho 'error: prsm hook: unknown agent \"locate\"; prsm knows: claude' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "prsm"), []byte(old), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("PRSM_HOME", t.TempDir())
	t.Setenv("PRSM_SESSION_ID", "0123456789ab")
	ws := t.TempDir()
	t.Setenv("PRSM_WORKSPACE", ws)
	event := `{"session_id":"c1","cwd":"` + ws + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"toolu_1","tool_input":{"command":"true"}}`
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"claude"}, strings.NewReader(event), &out, &errb)
	if code != 1 || out.Len() > 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1", code, out.String(), errb.String())
	}
	want := filepath.Join(bin, "prsm") + " is not of this prsm-hook's version, " + prsm.Version + ": install prsm and prsm-hook together"
	if !strings.Contains(errb.String(), want) || !strings.HasPrefix(errb.String(), "prsm hook: ") {
		t.Errorf("stderr %q, want %q in it", errb.String(), want)
	}
}
