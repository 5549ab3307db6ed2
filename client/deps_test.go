package client

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDepsWireOnly checks that the client depends on the wire contract
// (packages prsm and api, and internal/wire) and not on the packages that
// implement the server: a program that talks to prsm must not link its engine, its
// store or its git layer.
func TestDepsWireOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	const mod = "github.com/prsm-dev/prsm"
	allowed := map[string]bool{mod: true, mod + "/api": true, mod + "/client": true, mod + "/internal/wire": true,
		mod + "/internal/osproc": true} // wire's: is a server's process alive
	seen := 0
	for _, p := range strings.Fields(string(out)) {
		if p != mod && !strings.HasPrefix(p, mod+"/") {
			continue
		}
		seen++
		if !allowed[p] {
			// engine, server, store, tracker, worktree, sync, internal/...
			t.Errorf("client depends on %s; it should need only prsm, api, internal/wire and internal/osproc", p)
		}
	}
	if seen == 0 {
		t.Fatalf("go list named none of prsm's packages:\n%s", out)
	}
}
