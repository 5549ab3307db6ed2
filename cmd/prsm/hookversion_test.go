//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
)

// prsm hooks status warns when the prsm-hook beside prsm, which the
// installed hooks run, is another build (issue 48, bad input).
func TestHookVersionWarning(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "prsm")
	if w := hookVersionWarning(context.Background(), self); w != "" {
		t.Errorf("no prsm-hook beside prsm: %q", w)
	}
	lean := filepath.Join(dir, "prsm-hook")
	write := func(script string) {
		t.Helper()
		if err := os.WriteFile(lean, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("echo 'prsm-hook version " + prsm.BuildInfo() + "'\n")
	if w := hookVersionWarning(context.Background(), self); w != "" {
		t.Errorf("the same build: %q", w)
	}
	write("echo 'prsm-hook version 0.0.1 (commit 0123456789ab, 2020-01-01T00:00:00Z)'\n")
	w := hookVersionWarning(context.Background(), self)
	if !strings.Contains(w, "is version 0.0.1 (commit 0123456789ab, 2020-01-01T00:00:00Z), this prsm is "+prsm.BuildInfo()) {
		t.Errorf("another build: %q", w)
	}
	write("exit 3\n")
	if w := hookVersionWarning(context.Background(), self); !strings.Contains(w, "--version fails") {
		t.Errorf("a prsm-hook that fails: %q", w)
	}
}
