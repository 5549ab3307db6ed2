package codex

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// codexTrustBlock is what Codex 0.169.0's config/batchWrite adds to
// config.toml when it trusts prsm's four hooks in hooksPath (as seen on
// the real binary): blank-line separated tables after the file's text.
func codexTrustBlock(hooksPath string, stopGroup string) string {
	var b strings.Builder
	b.WriteString("[hooks.state]\n")
	for _, e := range []string{"post_tool_use:0", "pre_tool_use:0", "stop:" + stopGroup, "user_prompt_submit:0"} {
		b.WriteString("\n[hooks.state.\"" + hooksPath + ":" + e + ":0\"]\ntrusted_hash = \"sha256:00ff\"\n")
	}
	return b.String()
}

// TestUninstallRestoresCodexFiles: uninstall puts hooks.json and
// config.toml back byte for byte as the install found them (or removes
// them when it made them), the trust Codex wrote into config.toml
// included, while other trust entries stay.
func TestUninstallRestoresCodexFiles(t *testing.T) {
	for _, tc := range []struct {
		name          string
		hooks, config *string
	}{
		{name: "no files"},
		{name: "user content", hooks: ptr("{\"hooks\":{\"Stop\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"echo mine\"}]}]}}"),
			config: ptr("model = \"x\"\n# mine\n[tui]\nnotifications = true\n\n[hooks.state.\"/elsewhere/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:11\"\n")},
		{name: "config only", config: ptr("model = \"x\"\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("CODEX_HOME", home)
			t.Setenv("PRSM_HOME", t.TempDir())
			t.Setenv("PATH", t.TempDir()) // no codex: the trust is written below, as Codex writes it
			hooks, config := filepath.Join(home, "hooks.json"), filepath.Join(home, "config.toml")
			for path, text := range map[string]*string{hooks: tc.hooks, config: tc.config} {
				if text != nil {
					if err := os.WriteFile(path, []byte(*text), 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := installCodexHooks(io.Discard, hooks, []string{"/bin/prsm-hook", "codex"}, false); err != nil {
				t.Fatal(err)
			}
			stop := "0" // prsm's Stop group comes after the user's
			if tc.hooks != nil {
				stop = "1"
			}
			trusted := codexTrustBlock(hooks, stop)
			if tc.config != nil {
				trusted = *tc.config + "\n" + trusted
			}
			if err := os.WriteFile(config, []byte(trusted), 0o600); err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			if err := uninstallCodexHooks(&out, hooks); err != nil {
				t.Fatal(err)
			}
			for path, want := range map[string]*string{hooks: tc.hooks, config: tc.config} {
				b, err := os.ReadFile(path)
				switch {
				case want == nil && !os.IsNotExist(err):
					t.Errorf("%s left after the uninstall (%v):\n%s", filepath.Base(path), err, b)
				case want != nil && string(b) != *want:
					t.Errorf("%s after the uninstall (%v):\n%q\nwant:\n%q", filepath.Base(path), err, b, *want)
				}
			}
			if !strings.Contains(out.String(), "removed the trust of prsm's 4 Codex hooks") {
				t.Errorf("uninstall said:\n%s", out.String())
			}
		})
	}
}

func ptr(s string) *string { return &s }
