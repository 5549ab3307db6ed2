package copilot

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// prsm run hands copilot prsm's hooks as a plugin under PRSM_HOME
// (--plugin-dir, right after the command's name); a copilot whose hooks
// are installed, and any other command, come back as they are.
func TestCopilotRunArgs(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("COPILOT_HOME", "")
	prsmHome := filepath.Join(t.TempDir(), "prsm")
	t.Setenv("PRSM_HOME", prsmHome)
	wt := t.TempDir()
	var errb bytes.Buffer

	if got, env := copilotRunArgs([]string{"claude", "-p", "x"}, wt, "", "", "/bin/prsm", &errb); !slices.Equal(got, []string{"claude", "-p", "x"}) || env != nil {
		t.Errorf("another command: %q %q", got, env)
	}
	// Without a server address: command hooks, in a plugin under PRSM_HOME.
	got, env := copilotRunArgs([]string{"/opt/bin/copilot", "-p", "go", "--allow-all-tools"}, wt, "", "", "/bin/prsm", &errb)
	dir := filepath.Join(prsmHome, "agents", "copilot", "plugin")
	if want := []string{"/opt/bin/copilot", "--plugin-dir", dir, "-p", "go", "--allow-all-tools"}; !slices.Equal(got, want) {
		t.Fatalf("copilot: %q, want %q", got, want)
	}
	if env != nil {
		t.Errorf("command hooks: env %q", env)
	}
	var m struct{ Name string }
	if b, err := os.ReadFile(filepath.Join(dir, ".plugin", "plugin.json")); err != nil || json.Unmarshal(b, &m) != nil || m.Name != "prsm" {
		t.Errorf("plugin manifest: %s %v", b, err)
	}
	hooks, err := os.ReadFile(filepath.Join(dir, "hooks", "hooks.json"))
	if err != nil || !bytes.Equal(hooks, copilotHooksFile("/bin/prsm hook copilot")) {
		t.Errorf("plugin hooks:\n%s (%v)\nwant prsm's hooks file", hooks, err)
	}
	if errb.Len() != 0 {
		t.Errorf("prsm run said: %s", errb.String())
	}

	// With the server's address: http hooks to /hooks/copilot?event=...,
	// the token from the environment, in the workspace's plugin, and
	// Copilot allowed to post to a local http:// address.
	projectDir := filepath.Join(prsmHome, "projects", "p1")
	got, env = copilotRunArgs([]string{"copilot", "-p", "go"}, wt, projectDir, "http://127.0.0.1:4321", "/bin/prsm", &errb)
	pdir := filepath.Join(projectDir, "copilot-plugin")
	if want := []string{"copilot", "--plugin-dir", pdir, "-p", "go"}; !slices.Equal(got, want) {
		t.Fatalf("copilot (http): %q, want %q", got, want)
	}
	if !slices.Equal(env, []string{"COPILOT_HOOK_ALLOW_LOCALHOST=1"}) {
		t.Errorf("copilot (http): env %q", env)
	}
	var f struct {
		Version int
		Hooks   map[string][]struct {
			Type, URL, Bash string
			Headers         map[string]string
			AllowedEnvVars  []string
		}
	}
	b, err := os.ReadFile(filepath.Join(pdir, "hooks", "hooks.json"))
	if err != nil || json.Unmarshal(b, &f) != nil || f.Version != 1 || len(f.Hooks) != len(copilotHookEvents) {
		t.Fatalf("http plugin hooks:\n%s (%v)", b, err)
	}
	for _, e := range copilotHookEvents {
		hs := f.Hooks[e]
		if len(hs) != 1 || hs[0].Type != "http" || hs[0].Bash != "" ||
			hs[0].URL != "http://127.0.0.1:4321/hooks/copilot?event="+e ||
			hs[0].Headers["Authorization"] != "Bearer ${PRSM_HOOK_TOKEN}" ||
			!slices.Equal(hs[0].AllowedEnvVars, []string{"PRSM_HOOK_TOKEN"}) {
			t.Errorf("http plugin's %s hooks: %+v", e, hs)
		}
	}
	// The next server start has another address: the plugin follows.
	copilotRunArgs([]string{"copilot"}, wt, projectDir, "http://127.0.0.1:5555", "/bin/prsm", &errb)
	if b, _ := os.ReadFile(filepath.Join(pdir, "hooks", "hooks.json")); !bytes.Contains(b, []byte("127.0.0.1:5555/hooks/copilot?event=agentStop")) || bytes.Contains(b, []byte("4321")) {
		t.Errorf("plugin not rewritten for the new address:\n%s", b)
	}
	if errb.Len() != 0 {
		t.Errorf("prsm run said: %s", errb.String())
	}

	// Installed for the user: nothing added.
	if err := installCopilotHooks(&errb, filepath.Join(home, ".copilot", "hooks", "prsm.json"), []string{"/bin/prsm", "hook", "copilot"}, false); err != nil {
		t.Fatal(err)
	}
	for _, base := range []string{"", "http://127.0.0.1:4321"} {
		if got, env := copilotRunArgs([]string{"copilot", "-p", "go"}, wt, projectDir, base, "/bin/prsm", &errb); !slices.Equal(got, []string{"copilot", "-p", "go"}) || env != nil {
			t.Errorf("installed (%q): %q %q", base, got, env)
		}
	}
}
