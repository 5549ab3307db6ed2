package server

import (
	"testing"

	"github.com/prsm-dev/prsm/api"
)

// TestEveryRouteServed checks that the server serves every route of
// api.Routes and no other: it registers nothing but handlers().
func TestEveryRouteServed(t *testing.T) {
	h := (&Server{}).handlers()
	for id, r := range api.Routes {
		if h[api.RouteID(id)] == nil {
			t.Errorf("no handler for %s %s (%s)", r.Method, r.Pattern, r.Name)
		}
	}
	if len(h) != len(api.Routes) {
		t.Errorf("%d handlers for %d routes", len(h), len(api.Routes))
	}
}
