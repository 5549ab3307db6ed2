package safepath_test

import (
	"testing"

	"github.com/prsm-dev/prsm/internal/safepath"
)

// TestEscapes: only a whole ".." segment at the front of a relative path
// leads out of its base; names that merely start with dots do not.
func TestEscapes(t *testing.T) {
	for rel, want := range map[string]bool{
		"..":        true,
		"../x":      true,
		"../../x":   true,
		"..txt":     false,
		"..foo/bar": false,
		"...":       false,
		".../x":     false,
		".":         false,
		"a/..b":     false,
		"x":         false,
	} {
		if got := safepath.Escapes(rel); got != want {
			t.Errorf("Escapes(%q) = %v, want %v", rel, got, want)
		}
	}
}
