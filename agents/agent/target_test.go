package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/prsm-dev/prsm/internal/safepath"
)

func TestSessionOfPath(t *testing.T) {
	home := t.TempDir()
	wt := filepath.Join(home, "projects", "repo-1234abcd", "worktrees", "0123456789ab")
	for _, d := range []string{filepath.Join(wt, "sub"), filepath.Join(home, "projects", "repo-1234abcd", "worktrees-evil", "0123456789ab"),
		filepath.Join(home, "projects-evil", "repo-1234abcd", "worktrees", "0123456789ab")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(filepath.Join(wt, "sub"), link); err != nil {
		t.Fatal(err)
	}
	homeLink := filepath.Join(t.TempDir(), "home")
	if err := os.Symlink(home, homeLink); err != nil {
		t.Fatal(err)
	}
	projectDir := filepath.Join(safepath.Real(home), "projects", "repo-1234abcd")
	for _, tc := range []struct {
		home, dir string
		want      bool
	}{
		{home, wt, true},
		{home, filepath.Join(wt, "sub"), true},
		{home, filepath.Join(wt, "not", "made", "yet"), true},
		{home, link, true},
		{homeLink, filepath.Join(wt, "sub"), true},
		{home, filepath.Join(home, "projects", "repo-1234abcd", "worktrees"), false},
		{home, filepath.Join(home, "projects", "repo-1234abcd", "worktrees-evil", "0123456789ab"), false},
		{home, filepath.Join(home, "projects-evil", "repo-1234abcd", "worktrees", "0123456789ab"), false},
		{home, filepath.Join(wt, "..", "..", "..", ".."), false},
		{home, t.TempDir(), false},
	} {
		got := SessionOfPath(tc.home, tc.dir)
		if !tc.want {
			if got != nil {
				t.Errorf("%s: session %+v, want none", tc.dir, got)
			}
			continue
		}
		if got == nil || got.SessionID != "0123456789ab" || safepath.Real(got.ProjectDir) != projectDir {
			t.Errorf("%s: %+v, want session 0123456789ab of %s", tc.dir, got, projectDir)
		}
	}
}

// SessionIn finds the session of a path under the server's own project
// dir, symlinks resolved, and nothing elsewhere.
func TestSessionIn(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "project")
	wt := filepath.Join(project, "worktrees", "0123456789ab")
	if err := os.MkdirAll(filepath.Join(wt, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(project, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ project, dir, want string }{
		{project, wt, "0123456789ab"},
		{project, filepath.Join(wt, "sub"), "0123456789ab"},
		{link, filepath.Join(wt, "sub"), "0123456789ab"},
		{project, filepath.Join(link, "worktrees", "0123456789ab"), "0123456789ab"},
		{project, filepath.Join(project, "worktrees"), ""},
		{project, project, ""},
		{project, root, ""},
		{project, "", ""},
		{filepath.Join(root, "other"), wt, ""},
	} {
		got := ""
		if tg := SessionIn(tc.project, tc.dir); tg != nil {
			got = tg.SessionID
		}
		if got != tc.want {
			t.Errorf("SessionIn(%s, %s) = %q, want %q", tc.project, tc.dir, got, tc.want)
		}
	}
}
