package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/server"
)

// The server resolves a change's id by prefix, and its session too
// (api.AnySession: the one active session that has it), on every route
// that names a change: a unique prefix answers as the full id would, an
// ambiguous one is 400 ambiguous_id naming the changes, an unknown one
// 404 record_not_found; with AnySession, a change no single active
// session has is 400 several_sessions, and no active session at all 404
// no_active_session.
func TestChangePrefixes(t *testing.T) {
	ts := start(t, server.Config{})
	if status, _, body := ts.do(t, "GET", api.RouteGetChange.Path(api.AnySession, "x"), "", nil); status != 404 || !strings.Contains(body, `"no_active_session"`) {
		t.Fatalf("no active session: %d %s", status, body)
	}
	s1 := ts.session(t, `{"name":"one"}`)
	s2 := ts.session(t, `{"name":"two"}`)
	ts.bash(t, s1, "alpha1", "a1.txt", "a1\n")
	ts.bash(t, s1, "alpha2", "a2.txt", "a2\n")
	ts.bash(t, s2, "beta1", "b.txt", "b\n")

	for _, c := range []struct {
		session, arg string
		status       int
		want         []string
	}{
		{s1.ID, "alpha1", 200, []string{`"id":"alpha1:0"`}},
		{s1.ID[:6], "alpha2:", 200, []string{`"id":"alpha2:0"`}},
		{s2.ID, "bet", 200, []string{`"id":"beta1:0"`}},
		{api.AnySession, "bet", 200, []string{`"id":"beta1:0"`, `"session_id":"` + s2.ID + `"`}},
		{api.AnySession, "alpha1", 200, []string{`"id":"alpha1:0"`, `"session_id":"` + s1.ID + `"`}},
		{s1.ID, "alph", 400, []string{`"ambiguous_id"`, `matches 2 changes: alpha1, alpha2`}},
		{s1.ID, "zzz", 404, []string{`"record_not_found"`}},
		{s2.ID, "alpha1", 404, []string{`"record_not_found"`}},
		{api.AnySession, "alph", 400, []string{`"several_sessions"`, "2 sessions are active", s1.ID, s2.ID}},
		{api.AnySession, "zzz", 400, []string{`"several_sessions"`}},
	} {
		status, _, body := ts.do(t, "GET", api.RouteGetChange.Path(c.session, c.arg), "", nil)
		ok := status == c.status
		for _, w := range c.want {
			ok = ok && strings.Contains(body, w)
		}
		if !ok {
			t.Errorf("GET change %q of session %q: %d %s, want %d with %q", c.arg, c.session, status, body, c.status, c.want)
		}
	}

	// A decision by prefix, session unnamed, decides the full id's change.
	status, _, body := ts.do(t, "POST", api.RouteReject.Path(api.AnySession, "bet"), "", nil)
	var recs api.Records
	if json.Unmarshal([]byte(body), &recs); status != 200 || len(recs.Records) != 1 || recs.Records[0].ID != "beta1:0" || recs.Records[0].Status != "rejected" {
		t.Fatalf("reject by prefix: %d %s", status, body)
	}
}

// A checkpoint's routes take api.AnySession too: the one active session
// with a checkpoint of that id, prefix or name.
func TestCheckpointAnySession(t *testing.T) {
	ts := start(t, server.Config{})
	s1 := ts.session(t, `{"name":"one"}`)
	ts.session(t, `{"name":"two"}`)
	status, _, body := ts.do(t, "POST", api.RouteCreateCheckpoint.Path(s1.ID), `{"name":"mark"}`, nil)
	if status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	for _, c := range []struct {
		route  api.RouteID
		arg    string
		status int
		want   string
	}{
		{api.RouteGetCheckpoint, "mark", 200, `"session_id":"` + s1.ID + `"`},
		{api.RouteRewindPreview, "mark", 200, `"operations":[]`},
		{api.RouteGetCheckpoint, "nosuch", 400, `"several_sessions"`},
	} {
		status, _, body := ts.do(t, c.route.Method(), c.route.Path(api.AnySession, c.arg), "", nil)
		if status != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s %s: %d %s, want %d with %q", c.route.Method(), c.route.Path(api.AnySession, c.arg), status, body, c.status, c.want)
		}
	}
}
