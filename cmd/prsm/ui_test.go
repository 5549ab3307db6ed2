package main

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

var loginFileForm = regexp.MustCompile(`(?s)<form id="login" method="post" action="(http://127\.0\.0\.1:[0-9]+/login)">.*` +
	`<input type="hidden" name="code" value="([0-9a-f]{32})">`)

// uilogin ARGV PS: ARGV holds the arguments the browser opener got, one a
// line; PS the command lines of every process while it ran. The opener got
// one file:// address of a login file under $PRSM_HOME, 0600 in a 0700
// directory; neither file holds the file's code. Following the address as
// a browser does (the form posts the code from a file:// page, Origin:
// null) logs in: the answer sets the login cookie, and with it the page and
// the API answer. Afterwards the login file is gone.
func cmdUILogin(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: uilogin ARGV PS")
	}
	argv := strings.Split(strings.TrimSuffix(ts.ReadFile(args[0]), "\n"), "\n")
	if len(argv) != 1 {
		ts.Fatalf("opener got %d arguments: %q", len(argv), argv)
	}
	u, err := url.Parse(argv[0])
	if err != nil || u.Scheme != "file" || u.RawQuery != "" || u.Fragment != "" {
		ts.Fatalf("opener got %q, not a file address", argv[0])
	}
	file := u.Path
	home := ts.Getenv("PRSM_HOME")
	if rel, err := filepath.Rel(filepath.Join(home, "projects"), file); err != nil || strings.HasPrefix(rel, "..") {
		ts.Fatalf("login file %s is not under %s", file, home)
	}
	for p, want := range map[string]os.FileMode{file: 0o600, filepath.Dir(file): 0o700 | os.ModeDir} {
		fi, err := os.Lstat(p)
		ts.Check(err)
		if fi.Mode() != want {
			ts.Fatalf("%s: mode %v, want %v", p, fi.Mode(), want)
		}
	}
	data, err := os.ReadFile(file)
	ts.Check(err)
	m := loginFileForm.FindStringSubmatch(string(data))
	if m == nil {
		ts.Fatalf("no login form in %s:\n%s", file, data)
	}
	action, code := m[1], m[2]
	for _, f := range args {
		if strings.Contains(ts.ReadFile(f), code) {
			ts.Fatalf("%s holds the login code", f)
		}
	}

	// The browser posts the form.
	req, err := http.NewRequest(http.MethodPost, action, strings.NewReader(url.Values{"code": {code}}.Encode()))
	ts.Check(err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "null")
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Do(req)
	ts.Check(err)
	resp.Body.Close()
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if strings.HasPrefix(c.Name, "prsm_session_") && c.HttpOnly && c.SameSite == http.SameSiteStrictMode {
			cookie = c
		}
	}
	if resp.StatusCode != http.StatusOK || cookie == nil {
		ts.Fatalf("login post: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	base := strings.TrimSuffix(action, "/login")
	for _, p := range []string{"/", "/sessions"} {
		req, _ := http.NewRequest(http.MethodGet, base+p, nil)
		req.AddCookie(&http.Cookie{Name: cookie.Name, Value: cookie.Value})
		resp, err := noRedirect.Do(req)
		ts.Check(err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			ts.Fatalf("GET %s with the login cookie: %d", p, resp.StatusCode)
		}
	}
	if _, err := os.Lstat(file); !os.IsNotExist(err) {
		ts.Fatalf("login file %s still there after its use (%v)", file, err)
	}
}

// waitfile PATH waits, for up to two minutes, until PATH exists: for a
// file another process (a browser opener prsm ui started and stopped
// waiting for) writes in its own time.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: waitfile PATH")
	}
	path := ts.MkAbs(args[0])
	for deadline := time.Now().Add(2 * time.Minute); ; {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s did not appear in 2m", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
