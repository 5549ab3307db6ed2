package tracker_test

import (
	"strings"
	"testing"
)

// TestWatcherDotDotNames: names that start with two dots are names like
// any other; only a whole ".." segment leads out of a root.
func TestWatcherDotDotNames(t *testing.T) {
	w, root := newWatched(t)
	shell(t, root, "echo a > ..txt && mkdir ..foo && echo b > ..foo/bar && echo c > ... && echo d > old/..deep")
	d := settled(t, w, root)
	if got, want := strings.Join(d.Paths, ","), "...,..foo/bar,..txt,old/..deep"; got != want {
		t.Errorf("dirty = %q, want %q", got, want)
	}
}
