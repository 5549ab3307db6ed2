package tracker

import (
	"path/filepath"
	"slices"
	"testing"
)

// FuzzBashTargets calls bashTargets, not BashTargets, so that a panic is
// reported instead of being recovered into nil.
func FuzzBashTargets(f *testing.F) {
	f.Fuzz(func(t *testing.T, command, cwd string) {
		got := bashTargets(command, cwd)
		if got != nil && len(got) == 0 {
			t.Fatalf("empty non-nil result")
		}
		for i, p := range got {
			if p == "" {
				t.Fatalf("empty path in %q", got)
			}
			if filepath.Clean(p) != p {
				t.Errorf("path %q is not clean", p)
			}
			if filepath.IsAbs(cwd) && !filepath.IsAbs(p) {
				t.Errorf("path %q is relative with cwd %q", p, cwd)
			}
			if i > 0 && got[i-1] >= p {
				t.Fatalf("not sorted and unique: %q", got)
			}
		}
		if !slices.Equal(got, BashTargets(command, cwd)) {
			t.Errorf("BashTargets differs from bashTargets")
		}
	})
}
