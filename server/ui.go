package server

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	stdsync "sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/web"
)

// The review page logs in without ever showing the bearer token to the
// browser: `prsm ui` (which holds the token) mints a one-time code, the
// browser swaps it for an HttpOnly, SameSite=Strict session cookie, and from
// then on the page calls the same API with that cookie. A cookie-authenticated
// request that changes state must also carry the login's CSRF token in
// CSRFHeader. Codes and logins live in memory: a restarted server forgets
// them, and `prsm ui` logs in again.
//
// The code never travels in an address that `prsm ui` hands to a browser:
// the opener's command line is readable by every local user (/proc), and
// whoever spends the code first gets the login. Instead the server writes
// the code into a login file, a small form only the user can read (0600 in
// a 0700 directory under the project's directory), and the browser opens
// that file: the form posts the code to /login. The file goes once the code
// is used or has expired. A GET /login?code= address remains for
// `prsm ui --print-url`, which prints it for the user to paste.
const (
	// CSRFHeader carries the CSRF token of a cookie login on POST, PUT and
	// DELETE requests.
	CSRFHeader = "X-PRSM-CSRF"
	// CodeTTL is how long a one-time login code may wait for its first use.
	CodeTTL = 5 * time.Minute
	// LoginTTL is how long a cookie login lasts.
	LoginTTL = 24 * time.Hour

	maxCodes  = 64  // unused codes kept at once; the oldest go first
	maxLogins = 256 // cookie logins kept at once; the oldest go first

	authKey    = "prsm.auth" // echo context key: "token" or "cookie"
	authCookie = "cookie"
)

// uiAuth holds the one-time codes and the cookie logins. Both are kept as
// SHA-256 hashes, so a memory dump shows neither, and looking one up does
// not compare secrets byte by byte.
type uiAuth struct {
	mu     stdsync.Mutex
	codes  map[string]time.Time // hash of code -> expiry
	logins map[string]*uiLogin  // hash of cookie value -> login
	now    func() time.Time
	// cookie is the cookie's name. Browsers share cookies between all ports
	// of a host, so the name carries the port: two prsm servers for two
	// workspaces keep their logins apart.
	cookie string
	files  map[string]*asset
	// dir holds the login files: "ui" in the project's directory; empty
	// when the server has no project directory, and then there are none.
	dir string
	// loginFiles maps the hash of a code to the login file that holds it.
	loginFiles map[string]string
}

type uiLogin struct {
	csrf    string
	expires time.Time
}

// asset is one embedded file of the page.
type asset struct {
	body  []byte
	ctype string
	etag  string
}

func newUIAuth(port, dir string) *uiAuth {
	u := &uiAuth{
		codes:      map[string]time.Time{},
		logins:     map[string]*uiLogin{},
		now:        time.Now,
		cookie:     "prsm_session_" + port,
		files:      map[string]*asset{},
		dir:        dir,
		loginFiles: map[string]string{},
	}
	fs.WalkDir(web.Dist(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(web.Dist(), p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		u.files[p] = &asset{body: b, ctype: contentType(p), etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	return u
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".txt":
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return hex.EncodeToString(b)
}

func hashOf(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// mintCode returns a new one-time code and its expiry.
func (u *uiAuth) mintCode() (string, time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.mintLocked()
}

func (u *uiAuth) mintLocked() (string, time.Time) {
	u.sweepLocked()
	for len(u.codes) >= maxCodes {
		oldest, first := "", time.Time{}
		for h, exp := range u.codes {
			if oldest == "" || exp.Before(first) {
				oldest, first = h, exp
			}
		}
		u.dropLocked(oldest)
	}
	code := randomHex(16)
	exp := u.now().Add(CodeTTL)
	u.codes[hashOf(code)] = exp
	return code, exp
}

// mintFileCode returns a new one-time code and the login file that holds
// it: an HTML form that posts the code to action as soon as a browser opens
// it. The file is 0600 in a 0700 directory, so only the user can read it,
// and its name is random, not the code. It is removed when the code is
// used, expires or is evicted.
func (u *uiAuth) mintFileCode(action string) (code, file string, exp time.Time, err error) {
	if u.dir == "" {
		return "", "", time.Time{}, errors.New("no project directory for login files")
	}
	if err := privateDir(u.dir); err != nil {
		return "", "", time.Time{}, err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	code, exp = u.mintLocked()
	file = filepath.Join(u.dir, "login-"+randomHex(16)+".html")
	page := fmt.Sprintf(loginFileHTML, html.EscapeString(action), html.EscapeString(code))
	// O_EXCL: never write through a name that already exists (a symlink
	// planted there included).
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, err = f.WriteString(page)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(file)
		}
	}
	if err != nil {
		delete(u.codes, hashOf(code))
		return "", "", time.Time{}, fmt.Errorf("write login file: %w", err)
	}
	u.loginFiles[hashOf(code)] = file
	// Nothing else may come by to sweep an unused code's file in time.
	time.AfterFunc(exp.Sub(u.now())+time.Second, u.sweep)
	return code, file, exp, nil
}

// privateDir makes dir, a directory only the user can enter, or makes sure
// that it is one.
func privateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("make login directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("make login directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("login directory %s is not a directory", dir)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("make login directory private: %w", err)
		}
	}
	return nil
}

// useCode spends a code: true once for a code that is known and unexpired.
// Its login file goes either way.
func (u *uiAuth) useCode(code string) bool {
	if code == "" {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	h := hashOf(code)
	exp, ok := u.codes[h]
	u.dropLocked(h)
	return ok && u.now().Before(exp)
}

// sweep forgets expired codes and removes their login files.
func (u *uiAuth) sweep() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.sweepLocked()
}

func (u *uiAuth) sweepLocked() {
	now := u.now()
	for h, exp := range u.codes {
		if !now.Before(exp) {
			u.dropLocked(h)
		}
	}
}

// dropLocked forgets the code of hash h and removes its login file.
func (u *uiAuth) dropLocked(h string) {
	delete(u.codes, h)
	if f, ok := u.loginFiles[h]; ok {
		os.Remove(f)
		delete(u.loginFiles, h)
	}
}

var loginFileName = regexp.MustCompile(`^login-[0-9a-f]{32}\.html$`)

// clearLoginFiles removes every login file in the directory: at start, those
// of an earlier server, whose codes nobody knows any more; at stop, ours.
func (u *uiAuth) clearLoginFiles() {
	if u.dir == "" {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	entries, _ := os.ReadDir(u.dir)
	for _, e := range entries {
		if loginFileName.MatchString(e.Name()) {
			os.Remove(filepath.Join(u.dir, e.Name()))
		}
	}
	clear(u.loginFiles)
}

// newLogin starts a cookie login and returns the cookie value and its CSRF
// token.
func (u *uiAuth) newLogin() (cookie, csrf string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := u.now()
	for h, l := range u.logins {
		if !now.Before(l.expires) {
			delete(u.logins, h)
		}
	}
	for len(u.logins) >= maxLogins {
		oldest := ""
		for h, l := range u.logins {
			if oldest == "" || l.expires.Before(u.logins[oldest].expires) {
				oldest = h
			}
		}
		delete(u.logins, oldest)
	}
	cookie, csrf = randomHex(32), randomHex(32)
	u.logins[hashOf(cookie)] = &uiLogin{csrf: csrf, expires: now.Add(LoginTTL)}
	return cookie, csrf
}

// login returns the unexpired login of the request's cookie, or nil.
func (u *uiAuth) login(c echo.Context) *uiLogin {
	ck, err := c.Cookie(u.cookie)
	if err != nil || ck.Value == "" {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	h := hashOf(ck.Value)
	l, ok := u.logins[h]
	if !ok {
		return nil
	}
	if !u.now().Before(l.expires) {
		delete(u.logins, h)
		return nil
	}
	return l
}

// logout ends the request's cookie login.
func (u *uiAuth) logout(c echo.Context) {
	if ck, err := c.Cookie(u.cookie); err == nil {
		u.mu.Lock()
		delete(u.logins, hashOf(ck.Value))
		u.mu.Unlock()
	}
}

// isPublicUI says whether a request may pass without any credentials: the
// login route itself, the page's address carrying a one-time code, and the
// login hint's style sheet.
func isPublicUI(c echo.Context) bool {
	switch c.Path() {
	case api.RouteUILogin.Pattern():
		return true
	case api.RouteUIIndex.Pattern():
		return c.QueryParam("code") != ""
	case api.RouteUIAsset.Pattern():
		return c.Param("name") == "login.css"
	}
	return false
}

// assetsPrefix starts the path of every asset of the page.
var assetsPrefix = strings.TrimSuffix(api.RouteUIAsset.Pattern(), ":name")

// isPageRequest is a browser asking for the page itself (not the API): a
// refusal is then a readable HTML page rather than JSON.
func isPageRequest(c echo.Context) bool {
	p := c.Path()
	return c.Request().Method == http.MethodGet && (p == api.RouteUIIndex.Path() || p == api.RouteUILogin.Path() || strings.HasPrefix(p, assetsPrefix))
}

// cookieAuth authenticates a request that carries no token by the review
// page's login cookie. POST, PUT, DELETE and PATCH must also carry the
// login's CSRF token, and, when the browser names an Origin, our own.
func (s *Server) cookieAuth(c echo.Context, next echo.HandlerFunc) error {
	l := s.ui.login(c)
	if l == nil {
		if isPageRequest(c) {
			return page{s}.loginHint(c, http.StatusUnauthorized, "Log in to prsm",
				"This page needs a login. Run this in your workspace; it opens the page, logged in:")
		}
		return apiError(api.CodeUnauthorized, "missing or wrong token")
	}
	switch c.Request().Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		got := c.Request().Header.Get(CSRFHeader)
		if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(l.csrf)) != 1 {
			return &httpError{Status: http.StatusForbidden, Code: api.CodeCSRF,
				Msg: "missing or wrong " + CSRFHeader + " header", Hint: "reload the page"}
		}
		if o := c.Request().Header.Get("Origin"); o != "" && !s.ownOrigin(o) {
			return apiError(api.CodeForbiddenOrigin, "origin %q is not allowed", o)
		}
	}
	c.Set(authKey, authCookie)
	markTrusted(c)
	return next(c)
}

func (s *Server) ownOrigin(origin string) bool {
	switch strings.ToLower(origin) {
	case "http://127.0.0.1:" + s.port, "http://localhost:" + s.port, "http://[::1]:" + s.port:
		return true
	}
	return false
}

// uiMintCode mints a one-time login code, and with it a login file when
// asked. Only the bearer token may: a browser login cannot extend itself.
func (s *Server) uiMintCode(c echo.Context) error {
	if c.Get(authKey) == authCookie {
		return apiError(api.CodeTokenRequired, "login codes are minted with the server's token (prsm ui)")
	}
	var req api.LoginCodeRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	var (
		code, file string
		exp        time.Time
	)
	if req.LoginFile {
		var err error
		if code, file, exp, err = s.ui.mintFileCode("http://" + s.Addr() + api.RouteUILogin.Path()); err != nil {
			return err
		}
	} else {
		code, exp = s.ui.mintCode()
	}
	return c.JSON(http.StatusCreated, api.LoginCode{
		Code: code, URL: "http://" + s.Addr() + api.RouteUILogin.Path() + "?code=" + code, ExpiresAt: exp.UTC(), LoginFile: file,
	})
}

// uiLoginRoute swaps a one-time code for a login cookie and redirects to
// the page's clean address; without a code it explains how to log in.
// page is the server seen from the review page's routes: its login and
// its files (the handlers of the page, apart from the API's).
type page struct{ *Server }

func (s page) uiLoginRoute(c echo.Context) error {
	if c.QueryParam("code") != "" {
		return s.swapCode(c)
	}
	if s.ui.login(c) != nil {
		return c.Redirect(http.StatusSeeOther, "/")
	}
	return s.loginHint(c, http.StatusUnauthorized, "Log in to prsm",
		"This page needs a login. Run this in your workspace; it opens the page, logged in:")
}

func (s page) swapCode(c echo.Context) error {
	noStore(c)
	if !s.ui.useCode(c.QueryParam("code")) {
		return s.expiredCode(c)
	}
	s.setLoginCookie(c)
	return c.Redirect(http.StatusSeeOther, "/")
}

// uiLoginPost swaps a code posted as a form (the login file's) for a login
// cookie. The form is on a file:// page, so the browser sends "Origin: null";
// a post from any other origin but our own is refused before the code is
// looked at, so a foreign page cannot spend it. The code is read from the
// body only, never from the query.
//
// The answer is a page of our own origin that goes on to "/", not a
// redirect: the browser does not send a SameSite=Strict cookie on a redirect
// that a cross-site post started, and the page would find itself logged out.
// A navigation that our own page starts does send it.
func (s page) uiLoginPost(c echo.Context) error {
	if o := c.Request().Header.Get("Origin"); o != "" && o != "null" && !s.ownOrigin(o) {
		return apiError(api.CodeForbiddenOrigin, "origin %q is not allowed", o)
	}
	noStore(c)
	if !s.ui.useCode(c.Request().PostFormValue("code")) {
		return s.expiredCode(c)
	}
	s.setLoginCookie(c)
	return c.HTMLBlob(http.StatusOK, []byte(loginDoneHTML))
}

func (s page) expiredCode(c echo.Context) error {
	return s.loginHint(c, http.StatusForbidden, "This login link has expired",
		"Each link from prsm ui works once, for a few minutes. Get a new one:")
}

// setLoginCookie starts a cookie login for the browser.
func (s page) setLoginCookie(c echo.Context) {
	value, _ := s.ui.newLogin()
	c.SetCookie(&http.Cookie{
		Name: s.ui.cookie, Value: value, Path: "/",
		MaxAge: int(LoginTTL / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode,
	})
}

func (s page) uiLogout(c echo.Context) error {
	s.ui.logout(c)
	c.SetCookie(&http.Cookie{Name: s.ui.cookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return c.JSON(http.StatusOK, api.OK{OK: true})
}

// pageHeaders are the headers of every page response: nothing from other
// origins, no framing, no sniffing, no referrer.
func pageHeaders(c echo.Context) {
	h := c.Response().Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "+
		"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
}

func noStore(c echo.Context) {
	pageHeaders(c)
	c.Response().Header().Set("Cache-Control", "no-store")
}

// uiIndex serves the page, with the login's CSRF token in a meta tag.
func (s page) uiIndex(c echo.Context) error {
	if c.QueryParam("code") != "" {
		return s.swapCode(c)
	}
	a := s.ui.files["index.html"]
	if a == nil {
		return apiError(api.CodeNoPage, "this prsm was built without the review page")
	}
	csrf := ""
	if l := s.ui.login(c); l != nil {
		csrf = l.csrf
	}
	noStore(c)
	body := bytes.Replace(a.body, []byte("__PRSM_CSRF__"), []byte(html.EscapeString(csrf)), 1)
	return c.HTMLBlob(http.StatusOK, body)
}

// uiAsset serves one built file of the page.
func (s page) uiAsset(c echo.Context) error {
	a := s.ui.files[c.Param("name")]
	if a == nil || c.Param("name") == "index.html" {
		return apiError(api.CodeNotFound, "no asset %q", c.Param("name"))
	}
	pageHeaders(c)
	h := c.Response().Header()
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", a.etag)
	if c.Request().Header.Get("If-None-Match") == a.etag {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, a.ctype, a.body)
}

func (s page) uiWorkspaceFile(c echo.Context) error {
	recs, err := s.eng.RecordsOf(c.Request().Context(), c.Param("id"), c.Param("record"))
	if err != nil {
		return err
	}
	if len(recs) != 1 {
		return apiError(api.CodeOneRecord, "%s names %d records; name one record id", c.Param("record"), len(recs))
	}
	rel := recs[0].RelPath
	f, err := s.eng.ReadWorkspaceFile(rel, engine.InlineLimit)
	if err != nil {
		return err
	}
	out := api.WorkspaceFile{RelPath: rel, Present: f.Present, Size: f.Size}
	switch {
	case !f.Present:
	case f.Symlink:
		out.Symlink = true
		if f.Read {
			target := string(f.Content)
			out.Content = &target
		}
	case !f.Regular:
		return apiError(api.CodeNotAFile, "%s is not a regular file in the workspace", rel)
	case f.Read:
		if sync.IsBinary(f.Content) {
			out.Binary = true
		} else {
			text := string(f.Content)
			out.Content = &text
		}
	}
	return c.JSON(http.StatusOK, out)
}

// loginHint is the page shown instead of the review page when the browser
// is not logged in: what happened, and the command that fixes it.
func (s page) loginHint(c echo.Context, status int, title, text string) error {
	noStore(c)
	page := fmt.Sprintf(loginHintHTML, html.EscapeString(title), html.EscapeString(title), html.EscapeString(text))
	return c.HTMLBlob(status, []byte(page))
}

const loginHintHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><title>%s · prsm</title>
<link rel="stylesheet" href="/assets/login.css"></head>
<body><main><h1>%s</h1><p>%s</p><pre><code>prsm ui</code></pre>
<p>or, to copy the address yourself: <code>prsm ui --print-url</code></p>
<p class="small">The link it prints works once; it sets a login cookie for this browser and this server only.</p>
</main></body></html>
`

// loginFileHTML is a login file: a form that posts the code as soon as it
// is opened (a file:// page runs its inline script), or when the button is
// pressed. Arguments: the form's action and the code.
const loginFileHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light dark"><title>Logging in to prsm</title></head>
<body><form id="login" method="post" action="%s">
<input type="hidden" name="code" value="%s">
<p>Opening the prsm review page&hellip; <button type="submit">Log in</button></p>
</form>
<script>document.getElementById("login").submit();</script>
</body></html>
`

// loginDoneHTML answers a posted login: the cookie is set; this page, of our
// own origin, goes on to the review page (a meta refresh: the page's CSP
// allows no inline script).
const loginDoneHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=/">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><title>Logged in · prsm</title>
<link rel="stylesheet" href="/assets/login.css"></head>
<body><main><h1>Logged in</h1><p><a href="/">Open the review page</a></p></main></body></html>
`
