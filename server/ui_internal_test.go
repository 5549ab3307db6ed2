package server

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// TestUIAuthExpiry: codes and logins expire, and neither store grows
// without bound.
func TestUIAuthExpiry(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	u := newUIAuth("1234", "")
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

// TestUILoginFileGoes: a login file goes when its code is used, when it
// expires, when it is evicted, and when the server starts or stops (a login
// file from an earlier server holds a code nobody knows any more).
func TestUILoginFileGoes(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	dir := filepath.Join(t.TempDir(), "ui")
	u := newUIAuth("1234", dir)
	u.now = func() time.Time { return now }
	const action = "http://127.0.0.1:1234/login"
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }

	code, file, exp, err := u.mintFileCode(action)
	if err != nil {
		t.Fatal(err)
	}
	if !exp.Equal(now.Add(CodeTTL)) || filepath.Dir(file) != dir {
		t.Errorf("file %s expires %v", file, exp)
	}
	data, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(data), `value="`+code+`"`) || !strings.Contains(string(data), `action="`+action+`"`) {
		t.Fatalf("login file: %v\n%s", err, data)
	}
	if !u.useCode(code) || exists(file) {
		t.Errorf("used code: file still there %v", exists(file))
	}

	// Expired: the sweep (run by a timer, and on every mint) removes it.
	code, file, _, _ = u.mintFileCode(action)
	now = now.Add(CodeTTL - time.Second)
	u.sweep()
	if !exists(file) {
		t.Fatal("the file went before its code expired")
	}
	now = now.Add(time.Second)
	u.sweep()
	if exists(file) {
		t.Error("an expired code's file is still there")
	}
	if u.useCode(code) {
		t.Error("an expired code worked")
	}

	// A wrong code spends nothing and removes nothing.
	code, file, _, _ = u.mintFileCode(action)
	if u.useCode(strings.Repeat("0", 32)) || !exists(file) {
		t.Error("a wrong code removed a file")
	}

	// Evicted codes take their files along.
	for i := 0; i < maxCodes+5; i++ {
		now = now.Add(time.Millisecond)
		if _, _, _, err := u.mintFileCode(action); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) > maxCodes || len(entries) < maxCodes-1 {
		t.Errorf("%d files for %d codes", len(entries), len(u.codes))
	}
	if exists(file) {
		t.Error("the oldest code was evicted, its file was not")
	}

	// Start and stop clear the directory of login files, and of them only.
	other := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(other, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	u.clearLoginFiles()
	entries, _ = os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "notes.txt" {
		t.Errorf("after clearing: %v", entries)
	}

	// A directory that others may enter is made private again; a symlink
	// in its place is refused.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := u.mintFileCode(action); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("login directory mode %v", fi.Mode())
	}
	elsewhere := t.TempDir()
	link := filepath.Join(t.TempDir(), "ui")
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := newUIAuth("1", link).mintFileCode(action); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("login directory through a symlink: %v", err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("wrote through the symlink: %v", entries)
	}

	// Without a project directory there is no login file.
	if _, _, _, err := newUIAuth("1", "").mintFileCode(action); err == nil {
		t.Error("a login file without a directory")
	}
}
