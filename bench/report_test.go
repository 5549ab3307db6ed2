package main

import (
	"strings"
	"testing"
)

// TestTargetsBindAt50k: the targets are set on the 50k-file repository.
// A 10k figure that would miss one is shown for reference, not as a MISS;
// a 50k figure that misses is a MISS.
func TestTargetsBindAt50k(t *testing.T) {
	r := &report{Machine: map[string]string{}}
	r.add("roundtrip", 10_000, "prsm", "ms", false, []float64{1.8}, "")
	r.add("roundtrip", 10_000, "git status", "ms", true, []float64{24}, "")
	r.add("roundtrip", 50_000, "prsm", "ms", false, []float64{2.0}, "")
	r.add("roundtrip", 50_000, "git status", "ms", true, []float64{90}, "")
	r.Checks = checks(r, []int{10_000, 50_000})
	var out strings.Builder
	r.print(&out)
	lines := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		f := strings.Fields(l)
		if len(f) > 2 && strings.Contains(l, "round trip >= 50x") {
			lines[f[1]] = f[0]
		}
	}
	if lines["10k"] != "-" || lines["50k"] != "MISS" {
		t.Errorf("marks of the round trip's target: %v, want 10k -, 50k MISS\n%s", lines, out.String())
	}
	for _, c := range r.Checks {
		if c.Binding != (c.Files == 50_000) {
			t.Errorf("check %q at %d files: binding %v", c.Target, c.Files, c.Binding)
		}
	}
}
