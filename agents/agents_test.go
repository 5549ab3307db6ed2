package agents

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEveryAgentHasItsParts: each registered agent has a folder of its own
// under agents/ named after it, with agent.go, and adapter.go, install.go
// and run.go for exactly the parts it says it has (a part it has none of
// is nil, stated by its method); each part it has is complete. Every
// folder under agents/ is registered, but agent (the contract) and
// agenttest (the tests' fixtures).
func TestEveryAgentHasItsParts(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range All {
		name := a.Name()
		if name == "" || seen[name] || a.Title() == "" {
			t.Errorf("agent %q (%q): want a name of its own and a title", name, a.Title())
		}
		seen[name] = true
		if Lookup(name) != a {
			t.Errorf("Lookup(%q) is not the registered agent", name)
		}
		has := func(file string, want bool) {
			_, err := os.Stat(filepath.Join(name, file))
			if got := err == nil; got != want {
				t.Errorf("agent %s: %s exists %v, want %v (the part is nil: %v)", name, file, got, want, !want)
			}
		}
		has("agent.go", true)
		ad, in, run := a.Adapter(), a.Installer(), a.Runner()
		has("adapter.go", ad != nil)
		has("install.go", in != nil)
		has("run.go", run != nil)
		if ad != nil && (ad.Short == "" || ad.Long == "" || ad.Handle == nil) {
			t.Errorf("agent %s: adapter without help or handler", name)
		}
		if in != nil && (in.Help == "" || in.Path == nil || in.Install == nil || in.Uninstall == nil || in.Installed == nil) {
			t.Errorf("agent %s: installer with a part missing", name)
		}
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != "agent" && e.Name() != "agenttest" && !seen[e.Name()] {
			t.Errorf("agents/%s is not in the registry (All)", e.Name())
		}
	}
}

// TestAgentsNamedOnlyHere holds the code that reaches agents through the
// registry (hook, cmd/prsm, cmd/prsm-hook) to it: in their Go files, tests
// aside, no string literal is an agent's name (a switch case, a map key,
// an `== "codex"`) and no import is an agent's folder, so that adding an
// agent touches its folder and one line of All. Help text that mentions
// an agent in a sentence is not a name on its own and passes. The one
// exception is hook.ServeClaude: the server's http hook route, which only
// Claude Code calls, reaches agents/claude by name.
//
// Out of this rule's reach, as they belong to other layers: server/hooks.go
// (the http route's path parameter), engine/hookhealth.go (which process
// is which agent) and bench.
func TestAgentsNamedOnlyHere(t *testing.T) {
	names := map[string]bool{}
	for _, a := range All {
		names[a.Name()] = true
	}
	// The http hook routes' agents, served in process (ServeClaude,
	// ServeCopilot).
	allowedImports := map[string]map[string]bool{"hook/command.go": {
		"github.com/prsm-dev/prsm/agents/claude": true, "github.com/prsm-dev/prsm/agents/copilot": true}}
	for _, dir := range []string{"../hook", "../cmd/prsm", "../cmd/prsm-hook"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			rel := filepath.ToSlash(strings.TrimPrefix(path, "../"))
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if folder, ok := strings.CutPrefix(p, "github.com/prsm-dev/prsm/agents/"); ok && names[folder] && !allowedImports[rel][p] {
					t.Errorf("%s imports %s: reach it through the registry (package agents)", rel, p)
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if s, err := strconv.Unquote(lit.Value); err == nil && names[s] {
					t.Errorf("%s names agent %q: reach it through the registry (package agents)", rel, s)
				}
				return true
			})
		}
	}
}
