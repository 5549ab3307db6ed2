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

// TestReadmeIsShort: a newcomer reads the README in three minutes, so it
// stays within 120 lines and 900 words; reference goes to docs/.
func TestReadmeIsShort(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(b), "\n"); lines > 120 {
		t.Errorf("README.md has %d lines, more than 120", lines)
	}
	if words := len(strings.Fields(string(b))); words > 900 {
		t.Errorf("README.md has %d words, more than 900", words)
	}
}
