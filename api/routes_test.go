package api

import (
	"strings"
	"testing"
)

// TestRoutes checks the table: each route once, a name each, and
// parameters named as Route says.
func TestRoutes(t *testing.T) {
	names, keys := map[string]bool{}, map[string]bool{}
	known := map[string]bool{"id": true, "call": true, "record": true, "cid": true, "other": true, "n": true, "agent": true, "name": true}
	for id, r := range Routes {
		if r.Name == "" || r.Method == "" || !strings.HasPrefix(r.Pattern, "/") {
			t.Errorf("route %d is incomplete: %+v", id, r)
		}
		if names[r.Name] {
			t.Errorf("route name %s twice", r.Name)
		}
		names[r.Name] = true
		if k := r.Method + " " + r.Pattern; keys[k] {
			t.Errorf("route %s twice", k)
		} else {
			keys[k] = true
		}
		for _, p := range r.Params() {
			if !known[p] {
				t.Errorf("route %s: parameter :%s is not one Route documents", r.Name, p)
			}
		}
	}
}

func TestRoutePath(t *testing.T) {
	if got, want := RouteAcceptHunk.Path("s 1", "b1:0", "2"), "/sessions/s%201/file-changes/b1:0/hunks/2/accept"; got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
	if got, want := RouteGetCheckpoint.Path("s", "feat/x"), "/sessions/s/checkpoints/feat%2Fx"; got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("a path with too few parameters did not panic")
		}
	}()
	RouteAccept.Path("s")
}
