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

	if got := copilotRunArgs([]string{"claude", "-p", "x"}, wt, "/bin/prsm", &errb); !slices.Equal(got, []string{"claude", "-p", "x"}) {
		t.Errorf("another command: %q", got)
	}
	got := copilotRunArgs([]string{"/opt/bin/copilot", "-p", "go", "--allow-all-tools"}, wt, "/bin/prsm", &errb)
	dir := filepath.Join(prsmHome, "agents", "copilot", "plugin")
	if want := []string{"/opt/bin/copilot", "--plugin-dir", dir, "-p", "go", "--allow-all-tools"}; !slices.Equal(got, want) {
		t.Fatalf("copilot: %q, want %q", got, want)
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

	// Installed for the user: nothing added.
	if err := installCopilotHooks(&errb, filepath.Join(home, ".copilot", "hooks", "prsm.json"), []string{"/bin/prsm", "hook", "copilot"}, false); err != nil {
		t.Fatal(err)
	}
	if got := copilotRunArgs([]string{"copilot", "-p", "go"}, wt, "/bin/prsm", &errb); !slices.Equal(got, []string{"copilot", "-p", "go"}) {
		t.Errorf("installed: %q", got)
	}
}
