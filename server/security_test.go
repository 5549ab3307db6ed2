package server_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/server"
)

// TestAuthAndHostVariants adds to TestGuards: tokens that are almost right,
// a token in the query of /events (refused, right or wrong: a URL ends up in
// logs and histories), and Host headers a DNS rebinding page could send.
// Every refusal is JSON {"error","code"}; the right token still works.
func TestAuthAndHostVariants(t *testing.T) {
	ts := start(t, server.Config{})
	port := ts.url[strings.LastIndex(ts.url, ":")+1:]
	tok := ts.token
	for _, c := range []struct {
		name, path string
		hdr        map[string]string
		status     int
		code       string
	}{
		{"token minus its last byte", "/sessions", map[string]string{"Authorization": "Bearer " + tok[:len(tok)-1]}, 401, "unauthorized"},
		{"token plus a byte", "/sessions", map[string]string{"Authorization": "Bearer " + tok + "0"}, 401, "unauthorized"},
		{"token last byte changed", "/sessions", map[string]string{"Authorization": "Bearer " + tok[:len(tok)-1] + string(tok[len(tok)-1]^1)}, 401, "unauthorized"},
		{"empty bearer", "/sessions", map[string]string{"Authorization": "Bearer "}, 401, "unauthorized"},
		{"token as basic auth", "/sessions", map[string]string{"Authorization": "Basic " + tok}, 401, "unauthorized"},
		{"token as a bare header", "/sessions", map[string]string{"Authorization": tok}, 401, "unauthorized"},
		{"wrong token in the events query", "/events?token=" + tok[:len(tok)-1] + "x", map[string]string{"Authorization": ""}, 401, "unauthorized"},
		{"no token for events", "/events", map[string]string{"Authorization": ""}, 401, "unauthorized"},
		{"right token, rebinding host", "/sessions", map[string]string{"Host": "localhost.evil.example:" + port}, 403, "forbidden_host"},
		{"right token, host ending in 127.0.0.1", "/sessions", map[string]string{"Host": "127.0.0.1.evil.example:" + port}, 403, "forbidden_host"},
		{"right token, host without port", "/sessions", map[string]string{"Host": "127.0.0.1"}, 403, "forbidden_host"},
		{"right token, another loopback address", "/sessions", map[string]string{"Host": "127.0.0.2:" + port}, 403, "forbidden_host"},
		{"right token, any address", "/sessions", map[string]string{"Host": "0.0.0.0:" + port}, 403, "forbidden_host"},
		{"foreign host before the token is looked at", "/sessions", map[string]string{"Host": "evil.example", "Authorization": ""}, 403, "forbidden_host"},
		{"upper-case localhost", "/sessions", map[string]string{"Host": "LOCALHOST:" + port}, 200, ""},
		{"IPv6 loopback", "/sessions", map[string]string{"Host": "[::1]:" + port}, 200, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, _, body := ts.do(t, "GET", c.path, "", c.hdr)
			if status != c.status {
				t.Fatalf("status %d, want %d: %s", status, c.status, body)
			}
			if c.code != "" {
				var e struct{ Error, Code string }
				if err := json.Unmarshal([]byte(body), &e); err != nil || e.Code != c.code || e.Error == "" {
					t.Errorf("body %s, want code %s", body, c.code)
				}
			}
			if strings.Contains(body, tok) {
				t.Errorf("the answer holds the token: %s", body)
			}
		})
	}
	// The right token in the events query is refused too; only the
	// Authorization header opens the stream. (The body is not read: an
	// opened stream does not end.)
	events := func(path, auth string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", ts.url+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := events("/events?token="+tok, ""); resp.StatusCode != 401 {
		t.Errorf("events with the token in the query: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp := events("/events?token="+tok, "Bearer wrong"); resp.StatusCode != 401 {
		t.Errorf("events with the token in the query and a wrong header: %d", resp.StatusCode)
	}
	if resp := events("/events", "Bearer "+tok); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("events with the token: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// TestTokenComparedInConstantTime reads the server's source: the auth
// middleware compares with subtle.ConstantTimeCompare, and no secret (a
// token, a CSRF token, a login code) is ever compared with == or != except
// to the empty string, which would leak its bytes through timing. A test
// that measured time would be flaky; this one fails on the code itself.
func TestTokenComparedInConstantTime(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	constantTime := false
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		text := func(n ast.Node) string {
			return string(src[fset.Position(n.Pos()).Offset:fset.Position(n.End()).Offset])
		}
		secret := func(e ast.Expr) bool {
			s := strings.ToLower(text(e))
			return strings.Contains(s, "token") || strings.Contains(s, "csrf") || s == "want" || s == "got"
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Name.Name == "auth" && strings.Contains(text(n.Body), "subtle.ConstantTimeCompare(") {
					constantTime = true
				}
			case *ast.BinaryExpr:
				if n.Op != token.EQL && n.Op != token.NEQ {
					return true
				}
				// Comparing with "" is no leak, nor is checking what
				// ConstantTimeCompare returned.
				empty := func(e ast.Expr) bool { return text(e) == `""` }
				if strings.HasPrefix(text(n.X), "subtle.ConstantTimeCompare(") {
					return true
				}
				if (secret(n.X) && !empty(n.Y)) || (secret(n.Y) && !empty(n.X)) {
					t.Errorf("%s: %s compares a secret with %s", fset.Position(n.Pos()), text(n), n.Op)
				}
			}
			return true
		})
	}
	if !constantTime {
		t.Errorf("func auth does not compare the token with subtle.ConstantTimeCompare")
	}
}

// unsized hides a body's length, so the client sends it chunked and the
// server finds out it is too large only while reading it.
type unsized struct{ io.Reader }

// TestBodyLimit: every route that reads a JSON body answers 413 too_large
// to a body over the limit, whether its length is announced or not, takes
// one of exactly the limit, and the server keeps serving afterwards.
func TestBodyLimit(t *testing.T) {
	const limit = 2 << 10
	ts := start(t, server.Config{BodyLimit: limit})
	status, _, body := ts.do(t, "POST", "/sessions", `{"name":"s"}`, nil)
	if status != 201 {
		t.Fatalf("start: %d %s", status, body)
	}
	var s struct{ ID string }
	json.Unmarshal([]byte(body), &s)
	status, _, body = ts.do(t, "POST", "/sessions/"+s.ID+"/checkpoints", `{"name":"cp"}`, nil)
	if status != 201 {
		t.Fatalf("checkpoint: %d %s", status, body)
	}
	var cp struct{ ID string }
	json.Unmarshal([]byte(body), &cp)

	// A JSON object of exactly n bytes: {"prompt":"xxx..."}.
	bodyOf := func(field string, n int) string {
		pre := `{"` + field + `":"`
		return pre + strings.Repeat("x", n-len(pre)-2) + `"}`
	}
	routes := []struct{ method, path, field string }{
		{"POST", "/sessions", "name"},
		{"POST", "/sessions/" + s.ID + "/tool-calls", "tool_name"},
		{"POST", "/sessions/" + s.ID + "/tool-calls/t1/complete", "tool_name"},
		{"POST", "/sessions/" + s.ID + "/checkpoints", "annotation"},
		{"PUT", "/sessions/" + s.ID + "/checkpoints/" + cp.ID, "annotation"},
		{"POST", "/sessions/" + s.ID + "/turns", "prompt"},
		{"POST", "/sessions/" + s.ID + "/rollback", "agent_id"},
		{"POST", "/sessions/" + s.ID + "/checkpoints/" + cp.ID + "/rewind", "x"},
	}
	send := func(method, path string, body io.Reader) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, ts.url+path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+ts.token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, r := range routes {
		for _, c := range []struct {
			name    string
			n       int
			chunked bool
			want413 bool
		}{
			{"limit+1 announced", limit + 1, false, true},
			{"limit+1 chunked", limit + 1, true, true},
			{"ten times the limit chunked", 10 * limit, true, true},
			{"exactly the limit", limit, false, false},
			{"exactly the limit chunked", limit, true, false},
		} {
			t.Run(r.method+" "+r.path+" "+c.name, func(t *testing.T) {
				var body io.Reader = strings.NewReader(bodyOf(r.field, c.n))
				if c.chunked {
					body = unsized{body}
				}
				status, resp := send(r.method, r.path, body)
				if !c.want413 {
					if status == 413 || status >= 500 {
						t.Fatalf("a body of exactly the limit got %d: %s", status, resp)
					}
					return
				}
				var e struct{ Error, Code string }
				if status != 413 || json.Unmarshal([]byte(resp), &e) != nil || e.Code != "too_large" || e.Error == "" {
					t.Fatalf("got %d %s, want 413 too_large", status, resp)
				}
			})
		}
	}
	// Still serving: reads and writes work.
	if status, _, body := ts.do(t, "GET", "/sessions/"+s.ID, "", nil); status != 200 {
		t.Fatalf("after the refusals: %d %s", status, body)
	}
	if status, _, body := ts.do(t, "POST", "/sessions/"+s.ID+"/turns", `{"prompt":"still here"}`, nil); status != 201 {
		t.Fatalf("after the refusals: %d %s", status, body)
	}
}
