package gemini

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// prsm run's home for Gemini CLI: the user's settings with prsm's hooks
// added, links to the user's other ~/.gemini entries (the login) and
// ~/.env, the user's trusted folders file named; the user's files
// untouched; a link to an entry the user no longer has goes.
func TestGeminiRunHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("GEMINI_CLI_HOME", "")
	t.Setenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH", "")
	prsmHome := filepath.Join(t.TempDir(), "prsm")
	t.Setenv("PRSM_HOME", prsmHome)
	gdir := filepath.Join(home, ".gemini")
	settings := "{\n  // mine\n  \"security\": {\"auth\": {\"selectedType\": \"oauth-personal\"}}\n}\n"
	for name, data := range map[string]string{"settings.json": settings, "oauth_creds.json": "{}", "old.json": "x"} {
		if err := os.MkdirAll(gdir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(gdir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(home, ".env"), []byte("A=1\n"), 0o600)

	env, err := geminiRunHome("/bin/prsm")
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(prsmHome, "agents", "gemini", "home")
	want := []string{"GEMINI_CLI_HOME=" + run, "GEMINI_CLI_TRUSTED_FOLDERS_PATH=" + filepath.Join(gdir, "trustedFolders.json")}
	if !slices.Equal(env, want) {
		t.Fatalf("env %q, want %q", env, want)
	}
	s, _, err := readGeminiSettings(filepath.Join(run, ".gemini", "settings.json"))
	if err != nil || s["security"] == nil {
		t.Fatalf("run settings %v (%v): want the user's auth", s, err)
	}
	if removed, _ := removeGeminiHooks(s); len(removed) != len(geminiHookEvents) {
		t.Errorf("run settings hold prsm's hooks for %v, want every event", removed)
	}
	for link, target := range map[string]string{
		filepath.Join(run, ".gemini", "oauth_creds.json"): filepath.Join(gdir, "oauth_creds.json"),
		filepath.Join(run, ".gemini", "old.json"):         filepath.Join(gdir, "old.json"),
		filepath.Join(run, ".env"):                        filepath.Join(home, ".env"),
	} {
		if got, err := os.Readlink(link); err != nil || got != target {
			t.Errorf("%s -> %q (%v), want %s", link, got, err, target)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(gdir, "settings.json")); string(b) != settings {
		t.Errorf("user settings changed:\n%s", b)
	}
	if strings.Contains(strings.Join(env, " "), "SYSTEM_SETTINGS") {
		t.Errorf("env %q", env)
	}

	os.Remove(filepath.Join(gdir, "old.json"))
	if _, err := geminiRunHome("/bin/prsm"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(run, ".gemini", "old.json")); !os.IsNotExist(err) {
		t.Errorf("link to a removed entry left: %v", err)
	}
}
