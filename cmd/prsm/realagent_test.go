package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/internal/testenv"
)

// The real-agent tests (TestRealAgent*) run a real agent CLI, installed
// from the npm registry at a pinned version, against a scripted fake model
// server, inside a prsm session. They run when PRSM_REAL_AGENTS=1, which
// `make test` sets (target agents); a plain `go test ./...` skips them, as
// they download packages the first time.

// realAgent installs npm package pkg at version into the cache
// (~/.cache/prsm-agents/<pkg>@<version>, or $PRSM_AGENTS_CACHE) once, and
// returns the path of its executable bin. Later runs reuse the install.
func realAgent(t *testing.T, pkg, version, bin string) string {
	t.Helper()
	if os.Getenv("PRSM_REAL_AGENTS") != "1" {
		t.Skip("real agents run with PRSM_REAL_AGENTS=1 (make test)")
	}
	// The servers an agent's hooks start in the test's workspaces end
	// with the test (they ran on, 46 minutes after a make test).
	testenv.StopsItsServers(t)
	cache := os.Getenv("PRSM_AGENTS_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		cache = filepath.Join(home, ".cache", "prsm-agents")
	}
	dir := filepath.Join(cache, strings.ReplaceAll(pkg, "/", "+")+"@"+version)
	exe := filepath.Join(dir, "node_modules", ".bin", bin)
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err == nil {
		return exe
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", dir, pkg+"@"+version)
	cmd.Env = os.Environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install %s@%s: %v\n%s", pkg, version, err, out)
	}
	if _, err := os.Stat(exe); err != nil {
		t.Fatalf("%s@%s has no bin %s: %v", pkg, version, bin, err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".installed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return exe
}
