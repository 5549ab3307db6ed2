package worktree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// safe is safeConfig as the argv tests expect it, spelled out: a change
// to the list must be a change to this test too.
const safe = "-c core.fsmonitor=false -c core.hooksPath=/dev/null -c core.sshCommand=false -c protocol.allow=never -c commit.gpgSign=false"

// The argument list the runner emits: what config could run switched off
// first, then where git runs (a session worktree's git directory and work
// tree named, never found), then the command, with the diff family's
// external programs switched off.
func TestRunnerArgv(t *testing.T) {
	r := &Runner{}
	l := Linked{WorkTree: "/home/u/.prsm/projects/p/worktrees/abc", GitDir: "/src/app/.git/worktrees/abc"}
	for _, tc := range []struct {
		c    *Cmd
		want string
	}{
		{NewCmd("status", "--porcelain").Dir("/src/app"), safe + " -C /src/app status --porcelain"},
		{NewCmd("status", "--porcelain").In(l), safe + " -C " + l.WorkTree + " --git-dir=" + l.GitDir + " --work-tree=" + l.WorkTree + " status --porcelain"},
		{NewCmd("check-ignore", "-z", "--stdin").In(l), safe + " -C " + l.WorkTree + " --git-dir=" + l.GitDir + " --work-tree=" + l.WorkTree + " check-ignore -z --stdin"},
		{NewCmd("diff", "--name-only").Rev("a", "b").In(l), safe + " -C " + l.WorkTree + " --git-dir=" + l.GitDir + " --work-tree=" + l.WorkTree + " diff --no-ext-diff --no-textconv --name-only --end-of-options a b"},
		{NewCmd("-c", "core.untrackedCache=true", "log", "-1").Dir("/src/app"), safe + " -C /src/app -c core.untrackedCache=true log --no-ext-diff --no-textconv -1"},
		{NewCmd("show").Dir("/src/app"), safe + " -C /src/app show --no-ext-diff --no-textconv"},
		{NewCmd("cat-file", "--filters").Rev("c:x").In(l), safe + " -C " + l.WorkTree + " --git-dir=" + l.GitDir + " --work-tree=" + l.WorkTree + " cat-file --filters --end-of-options c:x"},
	} {
		got, err := r.argv(tc.c)
		if err != nil {
			t.Errorf("%q: %v", tc.c.Args(), err)
			continue
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("argv of %q:\n got %s\nwant %s", tc.c.Args(), strings.Join(got, " "), tc.want)
		}
	}
}

// A runner confined to prsm's worktrees directory refuses a plain Dir in
// it, at any depth and through a symlink, and for a directory that does
// not exist yet; it runs a Dir outside it, a sibling whose name merely
// starts the same included, and a session worktree named by In.
func TestRunnerRefusesDirInWorktrees(t *testing.T) {
	root := t.TempDir()
	area := filepath.Join(root, "worktrees")
	for _, d := range []string{filepath.Join(area, "abc", "src"), filepath.Join(root, "worktrees-evil")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(filepath.Join(area, "abc"), link); err != nil {
		t.Fatal(err)
	}
	// The runner is given the area through a symlink of its own too.
	areaLink := filepath.Join(root, "area-link")
	if err := os.Symlink(area, areaLink); err != nil {
		t.Fatal(err)
	}
	for _, confined := range []string{area, areaLink} {
		r := &Runner{Confined: confined}
		for _, dir := range []string{area, filepath.Join(area, "abc"), filepath.Join(area, "abc", "src"), link,
			filepath.Join(link, "src"), filepath.Join(area, "abc", "..", "abc"), filepath.Join(area, "new", "deeper")} {
			if _, err := r.argv(NewCmd("status").Dir(dir)); err == nil || !strings.Contains(err.Error(), "refusing") {
				t.Errorf("confined to %s: Dir(%s) = %v, want a refusal", confined, dir, err)
			}
		}
		for _, dir := range []string{root, filepath.Join(root, "worktrees-evil"), "/"} {
			if _, err := r.argv(NewCmd("status").Dir(dir)); err != nil {
				t.Errorf("confined to %s: Dir(%s) refused: %v", confined, dir, err)
			}
		}
		l := Linked{WorkTree: filepath.Join(area, "abc"), GitDir: filepath.Join(root, "repo", ".git", "worktrees", "abc")}
		if _, err := r.argv(NewCmd("status").In(l)); err != nil {
			t.Errorf("In refused: %v", err)
		}
	}
	// Nowhere to run, both ways at once, or half a worktree: refused.
	r := &Runner{}
	for _, c := range []*Cmd{
		NewCmd("status"),
		NewCmd("status").Dir(root).In(Linked{WorkTree: area, GitDir: root}),
		NewCmd("status").In(Linked{WorkTree: area}),
		NewCmd("status").In(Linked{WorkTree: "rel", GitDir: root}),
	} {
		if _, err := r.argv(c); err == nil {
			t.Errorf("%q ran", c.Args())
		}
	}
}

// Call sites cannot point git elsewhere or bring config in through the
// environment.
func TestCmdEnvRefusesRedirects(t *testing.T) {
	for _, kv := range []string{"GIT_DIR=/x", "GIT_WORK_TREE=/x", "GIT_COMMON_DIR=/x", "GIT_CONFIG_GLOBAL=/x",
		"GIT_CONFIG_PARAMETERS='core.fsmonitor'='x'", "GIT_CONFIG_COUNT=1", "GIT_CONFIG=/x", "GIT_EXTERNAL_DIFF=x", "GIT_SSH_COMMAND=x"} {
		if _, err := (&Runner{}).argv(NewCmd("status").Dir("/").Env(kv)); err == nil || !strings.Contains(err.Error(), "refusing") {
			t.Errorf("Env(%s) = %v, want a refusal", kv, err)
		}
	}
	if _, err := (&Runner{}).argv(NewCmd("status").Dir("/").Env("GIT_INDEX_FILE=/x", "GIT_OPTIONAL_LOCKS=0", "GIT_LITERAL_PATHSPECS=0")); err != nil {
		t.Errorf("ordinary variables refused: %v", err)
	}
	// Variables inherited from prsm's own environment are scrubbed.
	t.Setenv("GIT_EXTERNAL_DIFF", "/bin/evil")
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
	t.Setenv("GIT_CONFIG_VALUE_0", "/bin/evil")
	for _, kv := range Environ() {
		if strings.Contains(kv, "/bin/evil") || strings.HasPrefix(kv, "GIT_CONFIG_COUNT=") {
			t.Errorf("environment keeps %s", kv)
		}
	}
}

// mayFilter: the calls that can read or write a working-tree file's
// content ask for the filter drivers to switch off, and those that
// cannot (plumbing on refs and trees, a diff of two trees) do not pay
// for the question.
func TestMayFilter(t *testing.T) {
	for _, tc := range []struct {
		c    *Cmd
		want bool
	}{
		{NewCmd("add", "-A"), true},
		{NewCmd("status", "--porcelain"), true},
		{NewCmd("-c", "core.untrackedCache=true", "status"), true},
		{NewCmd("write-tree"), true}, // writes an index: may check a racily clean file
		{NewCmd("read-tree", "-m", "-u").Rev("a", "b"), true},
		{NewCmd("-c", "checkout.workers=0", "worktree", "add"), true},
		{NewCmd("cat-file", "--filters").Rev("c:x"), true},
		{NewCmd("hash-object", "--stdin-paths"), true},
		{NewCmd("diff", "--name-only"), true},
		{NewCmd("diff", "--name-only").Rev("a"), true},
		{NewCmd("diff", "--name-only").Rev("a", "b"), false},
		{NewCmd("hash-object", "-w", "--no-filters", "--stdin-paths"), false},
		{NewCmd("cat-file", "--batch"), false},
		{NewCmd("rev-parse", "HEAD"), false},
		{NewCmd("commit-tree", "-m", "x"), false},
		{NewCmd("check-ignore", "-z", "--stdin"), false},
		{NewCmd("update-ref").Rev("refs/x", "a"), false},
	} {
		if got := mayFilter(tc.c); got != tc.want {
			t.Errorf("mayFilter(%q) = %v, want %v", tc.c.Args(), got, tc.want)
		}
	}
}
