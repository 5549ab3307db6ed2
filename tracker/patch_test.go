package tracker

import (
	"strings"
	"testing"
)

// TestShellPatch: a command that is, as a whole, a patch Codex applies
// itself names the patch's files; any other command is no patch.
func TestShellPatch(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: a.txt\n+a\n*** Update File: b.txt\n*** Move to: sub/c.txt\n@@\n-x\n+y\n*** Delete File: /abs/d.txt\n*** End Patch\n"
	for _, tc := range []struct{ cmd, want string }{
		{"apply_patch <<'EOF'\n" + patch + "EOF\n", "/wt/a.txt /wt/b.txt /wt/sub/c.txt /abs/d.txt"},
		{"applypatch <<EOF\n" + patch + "EOF", "/wt/a.txt /wt/b.txt /wt/sub/c.txt /abs/d.txt"},
		{"cd sub && apply_patch <<'PATCH'\n" + patch + "PATCH\n", "/wt/sub/a.txt /wt/sub/b.txt /wt/sub/sub/c.txt /abs/d.txt"},
		{"apply_patch '" + patch + "'", "/wt/a.txt /wt/b.txt /wt/sub/c.txt /abs/d.txt"},
		{"apply_patch <<'EOF'\n*** Begin Patch\nnonsense\nEOF\n", ""},
	} {
		files, ok := ShellPatch(tc.cmd, "/wt")
		if got := strings.Join(files, " "); !ok || got != tc.want {
			t.Errorf("ShellPatch(%q) = %q %v, want %q", tc.cmd, got, ok, tc.want)
		}
	}
	for _, cmd := range []string{
		"echo made > out.txt",
		"apply_patch <<'EOF'\n" + patch + "EOF\nnpm test",
		"apply_patch <<'EOF' && rm -rf x\n" + patch + "EOF\n",
		"cd $HOME && apply_patch <<'EOF'\n" + patch + "EOF\n",
		"cat <<'EOF' | apply_patch\n" + patch + "EOF\n",
		"apply_patch <<'EOF' &\n" + patch + "EOF\n",
	} {
		if files, ok := ShellPatch(cmd, "/wt"); ok {
			t.Errorf("ShellPatch(%q) = %q, want no patch", cmd, files)
		}
	}
}
