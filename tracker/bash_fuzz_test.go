package tracker

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzBashTargets calls bashTargets, not BashTargets, so that a panic is
// reported instead of being recovered into nil. It checks two things:
//
//   - any command, with any cwd: the result is nil or sorted, unique, clean
//     paths, absolute when cwd is, the same on a second call;
//   - soundness on known writes: the command string is also used as a file
//     name, single-quoted into commands that certainly write that file
//     (a redirect, rm, touch, a for loop, sh -c, a cd first); the file must
//     be among the targets, or prsm would miss the change.
func FuzzBashTargets(f *testing.F) {
	for _, s := range []struct{ cmd, cwd string }{
		{`sed -i 's/a/b/' f.go`, "/w"},
		{`echo hi > a.txt 2>&1 | tee -a log`, "/w"},
		{`cd sub && mv a.go pkg/ && rm -rf build`, "/w"},
		{`for f in a b c; do touch "$f.txt"; done`, "/w"},
		{`X=out; echo > "$X/file"; unset X; echo > "$X"`, "/w"},
		{`bash -c 'echo > inner' && eval "rm gone"`, "/w"},
		{"cat > f.txt <<EOF\n$(rm x)\nEOF", "rel"},
		{`git checkout -- a.go && git mv old new`, "/w"},
		{`perl -pi -e 's/x/y/' *.go lib/*.pm`, ""},
		{`cp -t dest a b; ln -s ../x; install -d d1 d2`, "/w"},
		{`echo {a,b}{1..3} > {x,y}.txt`, "/w"},
		{`pushd /tmp; > z; popd; > z`, "/w"},
		{`dd if=/dev/zero of=blob bs=1 count=1; sort -o sorted in`, "/w"},
		{`a'b "c d'`, "/w"},
		{`-`, "/w"},
		{`../../etc/passwd`, "/w/repo"},
		{`*.go`, "/w"},
		{`$HOME/x`, "/w"},
		{"new\nline", "/w"},
	} {
		f.Add(s.cmd, s.cwd)
	}
	f.Fuzz(func(t *testing.T, command, cwd string) {
		got := bashTargets(command, cwd)
		checkTargets(t, got, cwd)
		if !slices.Equal(got, BashTargets(command, cwd)) {
			t.Errorf("BashTargets differs from bashTargets")
		}
		if again := bashTargets(command, cwd); !slices.Equal(got, again) {
			t.Errorf("not deterministic: %q then %q", got, again)
		}

		name := command
		if !plainName(name) || !plainName(cwd) {
			return
		}
		q := shellQuote(name)
		want := filepath.Join(cwd, name)
		wantSub := filepath.Join(cwd, "sub", name)
		if filepath.IsAbs(name) {
			want = filepath.Clean(name)
			wantSub = want
		}
		for _, c := range []struct{ cmd, want string }{
			{"echo x > " + q, want},
			{"printf x >> " + q + " 2>/dev/null", want},
			{"rm -f -- " + q, want},
			{"touch -- " + q, want},
			{"for f in " + q + `; do rm -- "$f"; done`, want},
			{"sh -c " + shellQuote("echo x > "+q), want},
			{"cd sub && echo x > " + q, wantSub},
		} {
			got := bashTargets(c.cmd, cwd)
			checkTargets(t, got, cwd)
			if !isDev(c.want) && !slices.Contains(got, c.want) {
				t.Errorf("%q in %q: targets %q miss %q", c.cmd, cwd, got, c.want)
			}
		}
	})
}

func checkTargets(t *testing.T, got []string, cwd string) {
	t.Helper()
	if got != nil && len(got) == 0 {
		t.Fatalf("empty non-nil result")
	}
	for i, p := range got {
		if p == "" {
			t.Fatalf("empty path in %q", got)
		}
		if filepath.Clean(p) != p {
			t.Errorf("path %q is not clean", p)
		}
		if filepath.IsAbs(cwd) && !filepath.IsAbs(p) {
			t.Errorf("path %q is relative with cwd %q", p, cwd)
		}
		if i > 0 && got[i-1] >= p {
			t.Fatalf("not sorted and unique: %q", got)
		}
	}
}

// plainName: a name a file can have and a shell can quote, that is not a
// special case of the commands above ("-" is stdin, "" is no name, a long
// name is cut by the parser's limits). "\r\n" is left out: mvdan.cc/sh
// reads every CR LF as LF, even inside quotes, so such a name is missed by
// inference (the worktree scan still records the file).
func plainName(s string) bool {
	return s != "" && s != "-" && len(s) <= 200 && strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) &&
		!strings.Contains(s, "\r\n")
}

// isDev: devices (/dev/null) are never worktree files, so never targets.
func isDev(p string) bool {
	return p == "/dev" || strings.HasPrefix(p, "/dev/")
}

// shellQuote single-quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
