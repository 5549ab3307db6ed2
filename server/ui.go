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
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/safepath"
	"github.com/prsm-dev/prsm/tracker"
	"github.com/prsm-dev/prsm/web"
)

// The review page logs in without ever showing the bearer token to the
// browser: `prsm ui` (which holds the token) mints a one-time code, the
// browser swaps it for an HttpOnly, SameSite=Strict session cookie, and from
// then on the page calls the same API with that cookie. A cookie-authenticated
// request that changes state must also carry the login's CSRF token in
// CSRFHeader. Codes and logins live in memory: a restarted server forgets
// them, and `prsm ui` logs in again.
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
	mu     sync.Mutex
	codes  map[string]time.Time // hash of code -> expiry
	logins map[string]*uiLogin  // hash of cookie value -> login
	now    func() time.Time
	// cookie is the cookie's name. Browsers share cookies between all ports
	// of a host, so the name carries the port: two prsm servers for two
	// workspaces keep their logins apart.
	cookie string
	files  map[string]*asset
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

func newUIAuth(port string) *uiAuth {
	u := &uiAuth{
		codes:  map[string]time.Time{},
		logins: map[string]*uiLogin{},
		now:    time.Now,
		cookie: "prsm_session_" + port,
		files:  map[string]*asset{},
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
	now := u.now()
	for h, exp := range u.codes {
		if !now.Before(exp) {
			delete(u.codes, h)
		}
	}
	for len(u.codes) >= maxCodes {
		oldest, first := "", time.Time{}
		for h, exp := range u.codes {
			if oldest == "" || exp.Before(first) {
				oldest, first = h, exp
			}
		}
		delete(u.codes, oldest)
	}
	code := randomHex(16)
	exp := now.Add(CodeTTL)
	u.codes[hashOf(code)] = exp
	return code, exp
}

// useCode spends a code: true once for a code that is known and unexpired.
func (u *uiAuth) useCode(code string) bool {
	if code == "" {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	h := hashOf(code)
	exp, ok := u.codes[h]
	delete(u.codes, h)
	return ok && u.now().Before(exp)
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
	case "/login":
		return true
	case "/":
		return c.QueryParam("code") != ""
	case "/assets/:name":
		return c.Param("name") == "login.css"
	}
	return false
}

// isPageRequest is a browser asking for the page itself (not the API): a
// refusal is then a readable HTML page rather than JSON.
func isPageRequest(c echo.Context) bool {
	p := c.Path()
	return c.Request().Method == http.MethodGet && (p == "/" || p == "/login" || strings.HasPrefix(p, "/assets/"))
}

// cookieAuth authenticates a request that carries no token by the review
// page's login cookie. POST, PUT, DELETE and PATCH must also carry the
// login's CSRF token, and, when the browser names an Origin, our own.
func (s *Server) cookieAuth(c echo.Context, next echo.HandlerFunc) error {
	l := s.ui.login(c)
	if l == nil {
		if isPageRequest(c) {
			return s.loginHint(c, http.StatusUnauthorized, "Log in to prsm",
				"This page needs a login. Run this in your workspace; it opens the page, logged in:")
		}
		return apiError(http.StatusUnauthorized, "unauthorized", "missing or wrong token")
	}
	switch c.Request().Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		got := c.Request().Header.Get(CSRFHeader)
		if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(l.csrf)) != 1 {
			return &httpError{Status: http.StatusForbidden, Code: "csrf",
				Msg: "missing or wrong " + CSRFHeader + " header", Hint: "reload the page"}
		}
		if o := c.Request().Header.Get("Origin"); o != "" && !s.ownOrigin(o) {
			return apiError(http.StatusForbidden, "forbidden_origin", "origin %q is not allowed", o)
		}
	}
	c.Set(authKey, authCookie)
	return next(c)
}

func (s *Server) ownOrigin(origin string) bool {
	switch strings.ToLower(origin) {
	case "http://127.0.0.1:" + s.port, "http://localhost:" + s.port, "http://[::1]:" + s.port:
		return true
	}
	return false
}

// uiRoutes registers the review page, its login and its helper API.
func (s *Server) uiRoutes(e *echo.Echo) {
	e.GET("/", s.uiIndex)
	e.GET("/login", s.uiLoginRoute)
	e.GET("/assets/:name", s.uiAsset)
	e.POST("/ui/codes", s.uiMintCode)
	e.POST("/ui/logout", s.uiLogout)
	e.GET("/ui/api/sessions/:id/file-changes/:tc/workspace", s.uiWorkspaceFile)
}

// LoginCode is the answer of POST /ui/codes.
type LoginCode struct {
	Code      string    `json:"code"`
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
}

// uiMintCode mints a one-time login code. Only the bearer token may: a
// browser login cannot extend itself.
func (s *Server) uiMintCode(c echo.Context) error {
	if c.Get(authKey) == authCookie {
		return apiError(http.StatusForbidden, "token_required", "login codes are minted with the server's token (prsm ui)")
	}
	code, exp := s.ui.mintCode()
	return c.JSON(http.StatusCreated, LoginCode{
		Code: code, URL: "http://" + s.Addr() + "/login?code=" + code, ExpiresAt: exp.UTC(),
	})
}

// uiLoginRoute swaps a one-time code for a login cookie and redirects to
// the page's clean address; without a code it explains how to log in.
func (s *Server) uiLoginRoute(c echo.Context) error {
	if c.QueryParam("code") != "" {
		return s.swapCode(c)
	}
	if s.ui.login(c) != nil {
		return c.Redirect(http.StatusSeeOther, "/")
	}
	return s.loginHint(c, http.StatusUnauthorized, "Log in to prsm",
		"This page needs a login. Run this in your workspace; it opens the page, logged in:")
}

func (s *Server) swapCode(c echo.Context) error {
	noStore(c)
	if !s.ui.useCode(c.QueryParam("code")) {
		return s.loginHint(c, http.StatusForbidden, "This login link has expired",
			"Each link from prsm ui works once, for a few minutes. Get a new one:")
	}
	value, _ := s.ui.newLogin()
	c.SetCookie(&http.Cookie{
		Name: s.ui.cookie, Value: value, Path: "/",
		MaxAge: int(LoginTTL / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode,
	})
	return c.Redirect(http.StatusSeeOther, "/")
}

func (s *Server) uiLogout(c echo.Context) error {
	s.ui.logout(c)
	c.SetCookie(&http.Cookie{Name: s.ui.cookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return c.JSON(http.StatusOK, map[string]any{"ok": true})
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
func (s *Server) uiIndex(c echo.Context) error {
	if c.QueryParam("code") != "" {
		return s.swapCode(c)
	}
	a := s.ui.files["index.html"]
	if a == nil {
		return apiError(http.StatusNotFound, "no_page", "this prsm was built without the review page")
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
func (s *Server) uiAsset(c echo.Context) error {
	a := s.ui.files[c.Param("name")]
	if a == nil || c.Param("name") == "index.html" {
		return apiError(http.StatusNotFound, "not_found", "no asset %q", c.Param("name"))
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

// WorkspaceFile is the answer of GET /ui/api/sessions/{id}/file-changes/{tc}/workspace:
// the user's current version of a record's file, which a conflict shows
// beside the agent's.
type WorkspaceFile struct {
	RelPath string  `json:"rel_path"`
	Present bool    `json:"present"`
	Binary  bool    `json:"binary"`
	Symlink bool    `json:"symlink"`
	Size    int64   `json:"size"`
	Content *string `json:"content"` // nil when absent, binary or over engine.InlineLimit
}

func (s *Server) uiWorkspaceFile(c echo.Context) error {
	recs, err := s.eng.RecordsOf(c.Request().Context(), c.Param("id"), c.Param("tc"))
	if err != nil {
		return err
	}
	if len(recs) != 1 {
		return apiError(http.StatusBadRequest, "one_record", "%s names %d records; name one record id", c.Param("tc"), len(recs))
	}
	rel := recs[0].RelPath
	p, err := safepath.Join(s.eng.Repo.Root, rel)
	if err != nil {
		return prsm.Errorf(prsm.ErrInvalid, "bad_path", "", "record path %q: %v", rel, err)
	}
	out := WorkspaceFile{RelPath: rel}
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return c.JSON(http.StatusOK, out)
	}
	if err != nil {
		return fmt.Errorf("stat %s: %w", rel, err)
	}
	out.Present, out.Size = true, fi.Size()
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		out.Symlink = true
		if target, err := os.Readlink(p); err == nil {
			out.Content = &target
		}
	case !fi.Mode().IsRegular():
		return apiError(http.StatusConflict, "not_a_file", "%s is not a regular file in the workspace", rel)
	case fi.Size() <= engine.InlineLimit:
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("read %s: %w", rel, err)
		}
		out.Size = int64(len(b))
		if tracker.IsBinary(b) {
			out.Binary = true
		} else {
			text := string(b)
			out.Content = &text
		}
	}
	return c.JSON(http.StatusOK, out)
}

// loginHint is the page shown instead of the review page when the browser
// is not logged in: what happened, and the command that fixes it.
func (s *Server) loginHint(c echo.Context, status int, title, text string) error {
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
