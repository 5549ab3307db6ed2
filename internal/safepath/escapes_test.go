package safepath_test

import (
	"errors"
	"strings"
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

// TestJoinTooLong: a path no system call would take is refused as too
// long (a bad path, the input's fault), up to the byte; a long one that
// fits is joined.
func TestJoinTooLong(t *testing.T) {
	root := t.TempDir()
	room := safepath.MaxPath - len(root) - 1 // bytes left after "root/"
	fits := strings.Repeat("d/", (room-1)/2) + strings.Repeat("f", 1+(room-1)%2)
	if len(fits) != room {
		t.Fatalf("built %d bytes, want %d", len(fits), room)
	}
	p, err := safepath.Join(root, fits)
	if err != nil || len(p) != safepath.MaxPath {
		t.Fatalf("Join of a path of exactly MaxPath bytes: %d %v", len(p), err)
	}
	_, err = safepath.Join(root, fits+"x")
	if !errors.Is(err, safepath.ErrTooLong) || !errors.Is(err, safepath.ErrBadPath) {
		t.Fatalf("Join one byte over: %v, want ErrTooLong", err)
	}
	if !strings.Contains(err.Error(), "over the system's") {
		t.Errorf("error says: %v", err)
	}
}
