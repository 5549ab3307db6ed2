package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// TestUIAuthExpiry: codes and logins expire, and neither store grows
// without bound.
func TestUIAuthExpiry(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	u := newUIAuth("1234")
	u.now = func() time.Time { return now }

	code, exp := u.mintCode()
	if got, want := exp, now.Add(CodeTTL); !got.Equal(want) {
		t.Errorf("expiry %v, want %v", got, want)
	}
	now = now.Add(CodeTTL)
	if u.useCode(code) {
		t.Error("an expired code worked")
	}
	code, _ = u.mintCode()
	now = now.Add(CodeTTL - time.Second)
	if !u.useCode(code) {
		t.Error("a fresh code failed")
	}
	if u.useCode(code) {
		t.Error("a code worked twice")
	}
	if u.useCode("") {
		t.Error("the empty code worked")
	}

	// A login lasts LoginTTL.
	value, csrf := u.newLogin()
	ctx := func() echo.Context {
		req := httptest.NewRequest("GET", "/", nil)
		req.AddCookie(&http.Cookie{Name: u.cookie, Value: value})
		return echo.New().NewContext(req, httptest.NewRecorder())
	}
	if l := u.login(ctx()); l == nil || l.csrf != csrf {
		t.Fatalf("fresh login = %+v", l)
	}
	now = now.Add(LoginTTL)
	if l := u.login(ctx()); l != nil {
		t.Error("an expired login worked")
	}

	for i := 0; i < 3*maxCodes; i++ {
		u.mintCode()
	}
	if n := len(u.codes); n > maxCodes {
		t.Errorf("%d codes kept", n)
	}
	for i := 0; i < 2*maxLogins; i++ {
		u.newLogin()
	}
	if n := len(u.logins); n > maxLogins {
		t.Errorf("%d logins kept", n)
	}
	if u.cookie != "prsm_session_1234" {
		t.Errorf("cookie name %q", u.cookie)
	}
}
