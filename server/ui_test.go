package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/server"
)

// browser is a client that acts like the review page's browser: no token,
// its cookie (when logged in), no redirects followed.
type browser struct {
	ts     *testServer
	cookie *http.Cookie
	csrf   string
}

type answer struct {
	status int
	hdr    http.Header
	body   string
}

func (b *browser) do(t *testing.T, method, path, body string, hdr map[string]string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, b.ts.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if b.cookie != nil {
		req.AddCookie(b.cookie)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(data)}
}

func errCode(t *testing.T, body string) string {
	t.Helper()
	var e struct{ Error, Code string }
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error == "" {
		t.Fatalf("not a JSON error: %s", body)
	}
	return e.Code
}

// mint asks for a one-time code with the bearer token, as `prsm ui` does.
func mint(t *testing.T, ts *testServer) api.LoginCode {
	t.Helper()
	status, _, body := ts.do(t, "POST", "/ui/codes", "", nil)
	if status != http.StatusCreated {
		t.Fatalf("mint code: %d %s", status, body)
	}
	var lc api.LoginCode
	if err := json.Unmarshal([]byte(body), &lc); err != nil {
		t.Fatal(err)
	}
	return lc
}

// login swaps a fresh code for the cookie and reads the CSRF token from
// the page.
func login(t *testing.T, ts *testServer) *browser {
	t.Helper()
	b := &browser{ts: ts}
	lc := mint(t, ts)
	u, err := url.Parse(lc.URL)
	if err != nil {
		t.Fatal(err)
	}
	a := b.do(t, "GET", u.RequestURI(), "", nil)
	if a.status != http.StatusSeeOther {
		t.Fatalf("login: %d %s", a.status, a.body)
	}
	cookies := (&http.Response{Header: a.hdr}).Cookies()
	if len(cookies) != 1 {
		t.Fatalf("login set %d cookies", len(cookies))
	}
	b.cookie = &http.Cookie{Name: cookies[0].Name, Value: cookies[0].Value}
	page := b.do(t, "GET", "/", "", nil)
	m := regexp.MustCompile(`<meta name="prsm-csrf" content="([0-9a-f]{64})"`).FindStringSubmatch(page.body)
	if page.status != 200 || m == nil {
		t.Fatalf("page after login: %d, no CSRF token in %.300s", page.status, page.body)
	}
	b.csrf = m[1]
	return b
}

func TestUILoginCode(t *testing.T) {
	ts := start(t, server.Config{})
	port := strings.Split(ts.url, ":")[2]
	anon := &browser{ts: ts}

	lc := mint(t, ts)
	if !regexp.MustCompile(`^http://127\.0\.0\.1:` + port + `/login\?code=[0-9a-f]{32}$`).MatchString(lc.URL) {
		t.Errorf("url = %s", lc.URL)
	}
	if d := time.Until(lc.ExpiresAt); d <= 0 || d > server.CodeTTL {
		t.Errorf("expires in %s", d)
	}
	// Only the bearer token mints codes.
	if a := anon.do(t, "POST", "/ui/codes", "", nil); a.status != 401 {
		t.Errorf("mint without token: %d", a.status)
	}

	// The first visit swaps the code for the cookie and redirects to the
	// clean address.
	a := anon.do(t, "GET", "/login?code="+lc.Code, "", nil)
	if a.status != http.StatusSeeOther || a.hdr.Get("Location") != "/" {
		t.Fatalf("swap: %d Location %q", a.status, a.hdr.Get("Location"))
	}
	if cc := a.hdr.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q", cc)
	}
	raw := a.hdr.Values("Set-Cookie")
	if len(raw) != 1 {
		t.Fatalf("Set-Cookie %q", raw)
	}
	for _, want := range []string{"prsm_session_" + port + "=", "HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(raw[0], want) {
			t.Errorf("Set-Cookie %q lacks %s", raw[0], want)
		}
	}
	ck := (&http.Response{Header: a.hdr}).Cookies()[0]
	if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || len(ck.Value) < 32 {
		t.Errorf("cookie = %+v", ck)
	}

	// The code works once.
	again := anon.do(t, "GET", "/login?code="+lc.Code, "", nil)
	if again.status != http.StatusForbidden || again.hdr.Get("Set-Cookie") != "" || !strings.Contains(again.body, "prsm ui") {
		t.Errorf("reused code: %d Set-Cookie %q", again.status, again.hdr.Get("Set-Cookie"))
	}
	if a := anon.do(t, "GET", "/login?code=0123456789abcdef0123456789abcdef", "", nil); a.status != http.StatusForbidden {
		t.Errorf("unknown code: %d", a.status)
	}

	// The page's own address takes a code too.
	lc2 := mint(t, ts)
	if a := anon.do(t, "GET", "/?code="+lc2.Code, "", nil); a.status != http.StatusSeeOther || a.hdr.Get("Location") != "/" ||
		!strings.Contains(a.hdr.Get("Set-Cookie"), "HttpOnly") {
		t.Errorf("swap at /: %d %q", a.status, a.hdr.Get("Set-Cookie"))
	}
	if a := anon.do(t, "GET", "/?code="+lc2.Code, "", nil); a.status != http.StatusForbidden {
		t.Errorf("reused code at /: %d", a.status)
	}

	// The cookie opens the page and its assets.
	b := &browser{ts: ts, cookie: &http.Cookie{Name: ck.Name, Value: ck.Value}}
	page := b.do(t, "GET", "/", "", nil)
	if page.status != 200 || !strings.HasPrefix(page.hdr.Get("Content-Type"), "text/html") || !strings.Contains(page.body, "/assets/app.js") {
		t.Fatalf("page: %d %s", page.status, page.hdr.Get("Content-Type"))
	}
	if csp := page.hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", csp)
	}
	for _, asset := range []string{"/assets/app.js", "/assets/app.css"} {
		if a := b.do(t, "GET", asset, "", nil); a.status != 200 || len(a.body) < 1000 || a.hdr.Get("ETag") == "" {
			t.Errorf("%s: %d, %d bytes", asset, a.status, len(a.body))
		} else if a2 := b.do(t, "GET", asset, "", map[string]string{"If-None-Match": a.hdr.Get("ETag")}); a2.status != http.StatusNotModified {
			t.Errorf("%s revalidation: %d", asset, a2.status)
		}
	}
	// Visiting /login while logged in goes to the page.
	if a := b.do(t, "GET", "/login", "", nil); a.status != http.StatusSeeOther {
		t.Errorf("/login when logged in: %d", a.status)
	}
}

func TestUIRefusedWithoutLogin(t *testing.T) {
	ts := start(t, server.Config{})
	anon := &browser{ts: ts}
	for _, p := range []string{"/", "/login"} {
		a := anon.do(t, "GET", p, "", nil)
		if a.status != http.StatusUnauthorized || !strings.HasPrefix(a.hdr.Get("Content-Type"), "text/html") ||
			!strings.Contains(a.body, "prsm ui") {
			t.Errorf("GET %s without login: %d %s", p, a.status, a.hdr.Get("Content-Type"))
		}
	}
	// The hint's style sheet is public; the page's code is not.
	if a := anon.do(t, "GET", "/assets/login.css", "", nil); a.status != 200 {
		t.Errorf("login.css: %d", a.status)
	}
	if a := anon.do(t, "GET", "/assets/app.js", "", nil); a.status != http.StatusUnauthorized {
		t.Errorf("app.js without login: %d", a.status)
	}
	// The API answers JSON as before.
	if a := anon.do(t, "GET", "/sessions", "", nil); a.status != 401 || errCode(t, a.body) != "unauthorized" {
		t.Errorf("API without login: %d %s", a.status, a.body)
	}
	// A forged or stale cookie is no login.
	port := strings.Split(ts.url, ":")[2]
	forged := &browser{ts: ts, cookie: &http.Cookie{Name: "prsm_session_" + port, Value: strings.Repeat("ab", 32)}}
	if a := forged.do(t, "GET", "/sessions", "", nil); a.status != 401 {
		t.Errorf("forged cookie: %d", a.status)
	}
	if a := forged.do(t, "GET", "/", "", nil); a.status != 401 {
		t.Errorf("forged cookie on the page: %d", a.status)
	}
}

func TestUICookieAuthAndCSRF(t *testing.T) {
	ts := start(t, server.Config{})
	port := strings.Split(ts.url, ":")[2]
	b := login(t, ts)

	// Reads need only the cookie, /events included.
	if a := b.do(t, "GET", "/sessions", "", nil); a.status != 200 {
		t.Errorf("GET /sessions with cookie: %d %s", a.status, a.body)
	}
	req, _ := http.NewRequest("GET", ts.url+"/events", nil)
	req.AddCookie(b.cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("events with cookie: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	resp.Body.Close()

	// Changes need the CSRF header too.
	body := `{"name":"from the page"}`
	if a := b.do(t, "POST", "/sessions", body, nil); a.status != 403 || errCode(t, a.body) != "csrf" {
		t.Errorf("POST without CSRF: %d %s", a.status, a.body)
	}
	if a := b.do(t, "POST", "/sessions", body, map[string]string{server.CSRFHeader: strings.Repeat("0", 64)}); a.status != 403 {
		t.Errorf("POST with wrong CSRF: %d %s", a.status, a.body)
	}
	if a := b.do(t, "DELETE", "/sessions/abc", "", nil); a.status != 403 {
		t.Errorf("DELETE without CSRF: %d %s", a.status, a.body)
	}
	if a := b.do(t, "POST", "/sessions", body, map[string]string{server.CSRFHeader: b.csrf, "Origin": "http://evil.example"}); a.status != 403 ||
		errCode(t, a.body) != "forbidden_origin" {
		t.Errorf("POST from another origin: %d %s", a.status, a.body)
	}
	a := b.do(t, "POST", "/sessions", body, map[string]string{server.CSRFHeader: b.csrf, "Origin": "http://127.0.0.1:" + port})
	if a.status != 201 {
		t.Fatalf("POST with cookie and CSRF: %d %s", a.status, a.body)
	}
	var s prsm.Session
	if err := json.Unmarshal([]byte(a.body), &s); err != nil || s.Name != "from the page" {
		t.Errorf("session %s", a.body)
	}

	// The Host check still comes first.
	if a := b.do(t, "GET", "/sessions", "", map[string]string{"Host": "evil.example:" + port}); a.status != 403 || errCode(t, a.body) != "forbidden_host" {
		t.Errorf("foreign host with cookie: %d %s", a.status, a.body)
	}
	if a := b.do(t, "POST", "/sessions", body, map[string]string{"Host": "evil.example:" + port, server.CSRFHeader: b.csrf}); a.status != 403 ||
		errCode(t, a.body) != "forbidden_host" {
		t.Errorf("foreign host with cookie and CSRF: %d %s", a.status, a.body)
	}
	if a := b.do(t, "GET", "/", "", map[string]string{"Host": "rebound.example:" + port}); a.status != 403 {
		t.Errorf("foreign host on the page: %d", a.status)
	}

	// A login cannot mint more logins.
	if a := b.do(t, "POST", "/ui/codes", "", map[string]string{server.CSRFHeader: b.csrf}); a.status != 403 || errCode(t, a.body) != "token_required" {
		t.Errorf("mint with cookie: %d %s", a.status, a.body)
	}

	// The token works as it always did, without CSRF; a wrong token is
	// refused even beside a good cookie.
	if status, _, body := ts.do(t, "POST", "/sessions", `{"name":"cli"}`, nil); status != 201 {
		t.Errorf("POST with token: %d %s", status, body)
	}
	if status, _, _ := ts.do(t, "GET", "/sessions", "", map[string]string{"Cookie": b.cookie.String(), "Authorization": "Bearer wrong"}); status != 401 {
		t.Errorf("wrong token beside a cookie: %d", status)
	}

	// Logging out ends the cookie.
	if a := b.do(t, "POST", "/ui/logout", "", map[string]string{server.CSRFHeader: b.csrf}); a.status != 200 {
		t.Errorf("logout: %d %s", a.status, a.body)
	}
	if a := b.do(t, "GET", "/sessions", "", nil); a.status != 401 {
		t.Errorf("after logout: %d", a.status)
	}
}

// TestUIWorkspaceFile: a conflict shows the user's side, read from the
// workspace for one record.
func TestUIWorkspaceFile(t *testing.T) {
	ts := start(t, server.Config{})
	b := login(t, ts)
	status, _, body := ts.do(t, "POST", "/sessions", `{"name":"w"}`, nil)
	if status != 201 {
		t.Fatalf("start: %d %s", status, body)
	}
	var s prsm.Session
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatal(err)
	}
	wtFile := filepath.Join(s.WorktreePath, "a.txt")
	args, _ := json.Marshal(map[string]any{"tool_call_id": "t1", "tool_name": "Edit", "args": map[string]string{"file_path": wtFile}})
	if status, _, body := ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls", string(args), nil); status != 200 {
		t.Fatalf("tool call: %d %s", status, body)
	}
	if err := os.WriteFile(filepath.Join(ts.ws, "a.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wtFile, []byte("agent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	status, _, body = ts.do(t, "POST", "/sessions/"+s.ID+"/tool-calls/t1/complete", `{}`, nil)
	if status != 200 || !strings.Contains(body, `"sync_state":"conflict"`) {
		t.Fatalf("complete: %d %s", status, body)
	}
	a := b.do(t, "GET", "/ui/api/sessions/"+s.ID+"/file-changes/t1/workspace", "", nil)
	if a.status != 200 {
		t.Fatalf("workspace file: %d %s", a.status, a.body)
	}
	var wf api.WorkspaceFile
	if err := json.Unmarshal([]byte(a.body), &wf); err != nil {
		t.Fatal(err)
	}
	if !wf.Present || wf.Binary || wf.Content == nil || *wf.Content != "mine\n" || wf.RelPath != "a.txt" {
		t.Errorf("workspace file = %+v", wf)
	}
	if err := os.Remove(filepath.Join(ts.ws, "a.txt")); err != nil {
		t.Fatal(err)
	}
	a = b.do(t, "GET", "/ui/api/sessions/"+s.ID+"/file-changes/t1/workspace", "", nil)
	if err := json.Unmarshal([]byte(a.body), &wf); err != nil || wf.Present || wf.Content != nil {
		t.Errorf("gone file: %s", a.body)
	}
	if a := b.do(t, "GET", "/ui/api/sessions/"+s.ID+"/file-changes/nope/workspace", "", nil); a.status != 404 {
		t.Errorf("unknown record: %d %s", a.status, a.body)
	}
	if a := (&browser{ts: ts}).do(t, "GET", "/ui/api/sessions/"+s.ID+"/file-changes/t1/workspace", "", nil); a.status != 401 {
		t.Errorf("without login: %d", a.status)
	}
}

// loginForm is what a login file holds: the form's action and the code it
// posts.
var loginForm = regexp.MustCompile(`(?s)<form id="login" method="post" action="([^"]+)">.*<input type="hidden" name="code" value="([0-9a-f]{32})">`)

// mintFile asks for a one-time code written into a login file, as `prsm ui`
// does before it opens the browser.
func mintFile(t *testing.T, ts *testServer) (lc api.LoginCode, action, code string) {
	t.Helper()
	status, _, body := ts.do(t, "POST", "/ui/codes", `{"login_file":true}`, nil)
	if status != http.StatusCreated {
		t.Fatalf("mint login file: %d %s", status, body)
	}
	if err := json.Unmarshal([]byte(body), &lc); err != nil {
		t.Fatal(err)
	}
	if lc.LoginFile == "" {
		t.Fatalf("no login file in %s", body)
	}
	data, err := os.ReadFile(lc.LoginFile)
	if err != nil {
		t.Fatal(err)
	}
	m := loginForm.FindStringSubmatch(string(data))
	if m == nil {
		t.Fatalf("no login form in %s", data)
	}
	return lc, m[1], m[2]
}

// postLogin posts a code to /login as the login file's form does: a form
// body, sent from a file:// page (Origin: null) unless origin says otherwise.
func (b *browser) postLogin(t *testing.T, code, origin string) answer {
	t.Helper()
	hdr := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	if origin != "" {
		hdr["Origin"] = origin
	}
	return b.do(t, "POST", "/login", url.Values{"code": {code}}.Encode(), hdr)
}

// TestUILoginFile: `prsm ui` gets its code in a file only the user can
// read, which posts it to /login; the browser's address carries no secret.
// The answer sets the cookie and sends the browser on to the page from the
// server's own origin, since a SameSite=Strict cookie is not sent on a
// redirect that a file:// page's POST started. The file goes once used.
func TestUILoginFile(t *testing.T) {
	ts := start(t, server.Config{})
	port := strings.Split(ts.url, ":")[2]
	anon := &browser{ts: ts}

	lc, action, code := mintFile(t, ts)
	if action != "http://127.0.0.1:"+port+"/login" || code != lc.Code {
		t.Errorf("form posts %s to %s", code, action)
	}
	dir := filepath.Join(ts.dir, "ui")
	if filepath.Dir(lc.LoginFile) != dir || !regexp.MustCompile(`^login-[0-9a-f]{32}\.html$`).MatchString(filepath.Base(lc.LoginFile)) {
		t.Errorf("login file %s, want login-<random>.html in %s", lc.LoginFile, dir)
	}
	if strings.Contains(lc.LoginFile, code) {
		t.Errorf("the file's name holds the code: %s", lc.LoginFile)
	}
	for p, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, lc.LoginFile: 0o600} {
		if fi, err := os.Lstat(p); err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v (%v), want %v", p, fi.Mode(), err, want)
		}
	}
	if data, _ := os.ReadFile(lc.LoginFile); strings.Contains(string(data), ts.token) {
		t.Error("the login file holds the server's token")
	}

	// A post from another origin is refused and spends nothing.
	if a := anon.postLogin(t, code, "http://evil.example"); a.status != http.StatusForbidden ||
		errCode(t, a.body) != "forbidden_origin" || a.hdr.Get("Set-Cookie") != "" {
		t.Errorf("post from another origin: %d %s", a.status, a.body)
	}
	// A code in the query of a post is not read.
	if a := anon.do(t, "POST", "/login?code="+code, "", map[string]string{"Origin": "null"}); a.status != http.StatusForbidden ||
		a.hdr.Get("Set-Cookie") != "" {
		t.Errorf("post with the code in the query: %d %q", a.status, a.hdr.Get("Set-Cookie"))
	}
	if _, err := os.Stat(lc.LoginFile); err != nil {
		t.Errorf("the file went before its code was used: %v", err)
	}

	// The file's post logs in: the cookie, and a page of our own origin that
	// goes on to the review page.
	a := anon.postLogin(t, code, "null")
	if a.status != http.StatusOK || !strings.Contains(a.body, `<meta http-equiv="refresh" content="0;url=/">`) {
		t.Fatalf("login post: %d %s", a.status, a.body)
	}
	if cc := a.hdr.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q", cc)
	}
	raw := a.hdr.Values("Set-Cookie")
	if len(raw) != 1 {
		t.Fatalf("Set-Cookie %q", raw)
	}
	for _, want := range []string{"prsm_session_" + port + "=", "HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(raw[0], want) {
			t.Errorf("Set-Cookie %q lacks %s", raw[0], want)
		}
	}
	ck := (&http.Response{Header: a.hdr}).Cookies()[0]
	b := &browser{ts: ts, cookie: &http.Cookie{Name: ck.Name, Value: ck.Value}}
	if page := b.do(t, "GET", "/", "", nil); page.status != 200 || !strings.Contains(page.body, `<meta name="prsm-csrf" content="`) {
		t.Errorf("page with the new cookie: %d", page.status)
	}
	if a := b.do(t, "GET", "/sessions", "", nil); a.status != 200 {
		t.Errorf("API with the new cookie: %d", a.status)
	}
	if _, err := os.Stat(lc.LoginFile); !os.IsNotExist(err) {
		t.Errorf("the login file is still there after its use: %v", err)
	}

	// Once only, whichever way.
	if a := anon.postLogin(t, code, "null"); a.status != http.StatusForbidden || a.hdr.Get("Set-Cookie") != "" ||
		!strings.Contains(a.body, "prsm ui") {
		t.Errorf("second post: %d %q", a.status, a.hdr.Get("Set-Cookie"))
	}
	if a := anon.do(t, "GET", "/login?code="+code, "", nil); a.status != http.StatusForbidden {
		t.Errorf("the posted code by GET: %d", a.status)
	}

	// The page's own origin may post too (a form the server showed), and a
	// post without Origin (not a browser) works as GET does.
	_, _, code2 := mintFile(t, ts)
	if a := anon.postLogin(t, code2, "http://127.0.0.1:"+port); a.status != http.StatusOK || a.hdr.Get("Set-Cookie") == "" {
		t.Errorf("post from our origin: %d", a.status)
	}
	_, _, code3 := mintFile(t, ts)
	if a := anon.postLogin(t, code3, ""); a.status != http.StatusOK || a.hdr.Get("Set-Cookie") == "" {
		t.Errorf("post without Origin: %d", a.status)
	}

	// A plain code (--print-url) makes no file.
	if lc := mint(t, ts); lc.LoginFile != "" {
		t.Errorf("plain code made a file %s", lc.LoginFile)
	}
	if a := anon.postLogin(t, "", "null"); a.status != http.StatusForbidden {
		t.Errorf("post without a code: %d", a.status)
	}
	if status, _, body := ts.do(t, "POST", "/ui/codes", `{"login_file":"yes"}`, nil); status != 400 {
		t.Errorf("bad mint body: %d %s", status, body)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files left in %s: %v", dir, entries)
	}
}
