package prsm_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestLayoutMatchesTree: every folder the layout table of docs/ARCHITECTURE.md
// names exists, and every top-level folder and internal/ package of the
// repository (and each of internal/ and cmd/) is in the table, so a reader finds any behaviour from it.
func TestLayoutMatchesTree(t *testing.T) {
	b, err := os.ReadFile("docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "## Layout")
	if !ok {
		t.Fatal("docs/ARCHITECTURE.md has no ## Layout section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	named := map[string]bool{}
	row := regexp.MustCompile("(?m)^\\| (`[^|]+) \\|")
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		for _, f := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(m[1], -1) {
			named[f[1]] = true
		}
	}
	if len(named) < 10 {
		t.Fatalf("layout table names %d folders: %v", len(named), named)
	}
	for f := range named {
		if fi, err := os.Stat(f); err != nil || !fi.IsDir() {
			t.Errorf("the layout table names %s, which is not a folder", f)
		}
	}
	out, err := exec.Command("git", "ls-files").Output()
	if err != nil {
		t.Skipf("git ls-files: %v", err)
	}
	dirs := map[string]bool{}
	for _, p := range strings.Split(string(out), "\n") {
		parts := strings.Split(p, "/")
		switch {
		case len(parts) < 2 || strings.HasPrefix(parts[0], "."):
		case parts[0] == "internal" || parts[0] == "cmd":
			if len(parts) > 2 {
				dirs[parts[0]+"/"+parts[1]] = true
			}
		default:
			dirs[parts[0]] = true
		}
	}
	for d := range dirs {
		if !named[d] {
			t.Errorf("folder %s is missing from the layout table of docs/ARCHITECTURE.md", d)
		}
	}
}
