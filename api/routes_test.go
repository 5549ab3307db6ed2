package api

import (
	"go/ast"
	"go/token"
	"runtime/metrics"
	"strings"
	"testing"
)

// TestRoutes checks the table: each route once, a name each, and
// parameters named as Route says.
func TestRoutes(t *testing.T) {
	names, keys := map[string]bool{}, map[string]bool{}
	known := map[string]bool{"id": true, "call": true, "record": true, "cid": true, "other": true, "n": true, "agent": true, "name": true, "rev": true}
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

// handTyped are the files outside api that still write a route's path by
// hand, each with why: the packages others are reorganising now (issue
// 43's items 4 and 5), whose owners move them to Routes.
var handTyped = map[string]string{
	"bench/hooks.go":    "the bench's http hook URL",
	"bench/measures.go": "the bench's raw /events stream",
}

// TestNoPathWrittenByHand reads every Go file of the module but tests and
// package api, and fails on a string literal that starts with a route's
// path, or with a fixed segment of one: a path is built from Routes.
func TestNoPathWrittenByHand(t *testing.T) {
	segs := map[string]bool{}
	for _, r := range Routes {
		for _, s := range strings.Split(r.Pattern, "/") {
			if s != "" && !strings.HasPrefix(s, ":") {
				segs["/"+s] = true
			}
		}
	}
	// runtime/metrics names (/gc/heap/live:bytes) look like paths.
	metricNames := map[string]bool{}
	for _, d := range metrics.All() {
		metricNames[d.Name] = true
	}
	handWritten := func(s string) bool {
		if strings.Contains(s, " ") {
			return false // a sentence for people that names a route
		}
		if metricNames[s] {
			return false
		}
		for seg := range segs {
			if s == seg || strings.HasPrefix(s, seg+"/") || strings.HasPrefix(s, seg+"?") {
				return true
			}
		}
		return false
	}
	found := map[string]bool{}
	eachGoFile(t, func(rel string, f *ast.File, fset *token.FileSet) {
		if strings.HasPrefix(rel, "api/") {
			return
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && handWritten(stringLit(lit)) {
				if _, ok := handTyped[rel]; ok {
					found[rel] = true
					return true
				}
				t.Errorf("%s: path %s written by hand: build it from api.Routes", fset.Position(lit.Pos()), lit.Value)
			}
			return true
		})
	})
	for rel := range handTyped {
		if !found[rel] {
			t.Errorf("%s writes no path by hand any more: take it out of handTyped", rel)
		}
	}
}
