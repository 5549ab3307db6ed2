package tracker

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

func TestBashTargets(t *testing.T) {
	tests := []struct {
		name string
		cmd  string
		want []string // paths relative to /w are written without it
	}{
		// sed
		{"sed -i", `sed -i 's/a/b/' f.go`, []string{"f.go"}},
		{"sed -i several files", `sed -i 's/a/b/g' a.go b/c.go`, []string{"a.go", "b/c.go"}},
		{"sed -i.bak", `sed -i.bak 's/a/b/' f`, []string{"f"}},
		{"sed -i empty BSD suffix", `sed -i '' 's/a/b/' f`, []string{"f"}},
		{"sed -i .bak BSD suffix", `sed -i .bak 's/a/b/' f`, []string{"f"}},
		{"sed --in-place", `sed --in-place 's/a/b/' f`, []string{"f"}},
		{"sed --in-place=suffix", `sed --in-place=.orig -e 's/a/b/' f`, []string{"f"}},
		{"sed -e scripts", `sed -i -e 's/a/b/' -e 's/c/d/' f g`, []string{"f", "g"}},
		{"sed -e attached", `sed -i -e's/a/b/' f`, []string{"f"}},
		{"sed -ie means suffix e", `sed -ie 's/a/b/' f`, []string{"f"}},
		{"sed -ni cluster", `sed -ni '/x/p' f`, []string{"f"}},
		{"sed -E -i after file", `sed -E 's/a+/b/' f -i`, []string{"f"}},
		{"sed -f script file", `sed -i -f edits.sed f`, []string{"f"}},
		{"sed -i file named like suffix", `sed -e 's/a/b/' -i .env`, []string{".env"}},
		{"sed unknown script", `sed -i "$S" f`, []string{"f"}},
		{"sed glob files skipped", `sed -i 's/a/b/' *.go f`, []string{"f"}},
		{"gsed", `gsed -i s/a/b/ f`, []string{"f"}},
		{"sed without -i", `sed -n p file`, nil},
		{"sed to stdout", `sed 's/a/b/' f > g`, []string{"g"}},

		// perl
		{"perl -pi -e", `perl -pi -e 's/a/b/' f g`, []string{"f", "g"}},
		{"perl -i.bak", `perl -i.bak -pe 's/a/b/' f`, []string{"f"}},
		{"perl -0777 -pi", `perl -0777 -pi -e 's/a\n/b/' f`, []string{"f"}},
		{"perl -i program file", `perl -i fix.pl f`, []string{"f"}},
		{"perl without -i", `perl -ne 'print' f`, nil},

		// tee
		{"tee", `echo x | tee out.txt`, []string{"out.txt"}},
		{"tee -a", `echo x | tee -a log1 log2`, []string{"log1", "log2"}},
		{"tee stdout", `echo x | tee -`, nil},

		// redirections
		{">", `echo hi > a.txt`, []string{"a.txt"}},
		{">>", `echo hi >> a.txt`, []string{"a.txt"}},
		{">|", `echo hi >| a.txt`, []string{"a.txt"}},
		{"&>", `make &> build.log`, []string{"build.log"}},
		{"&>>", `make &>> build.log`, []string{"build.log"}},
		{"2>", `make 2> err.log`, []string{"err.log"}},
		{">&file", `make >& all.log`, []string{"all.log"}},
		{"<> opens for writing", `exec 3<> fifo`, []string{"fifo"}},
		{"redirect before command", `> empty.txt`, []string{"empty.txt"}},
		{"redirect on block", `{ echo a; echo b; } > both`, []string{"both"}},
		{"redirect on loop", `for i in 1 2; do echo $i; done > nums`, []string{"nums"}},
		{"fd dups", `make 2>&1 | cat; cmd >&2; cmd 3>&-`, nil},
		{"/dev/null", `echo hi > /dev/null 2>/dev/null; cmd &>/dev/null`, nil},
		{"input redirect", `wc -l < in.txt`, nil},
		{"absolute", `echo > /tmp/x/../y`, []string{"/tmp/y"}},
		{"heredoc", "cat > f.txt <<EOF\nhello $USER\nEOF", []string{"f.txt"}},
		{"heredoc quoted", "cat <<'EOF' > g.txt\nx > notme\nEOF", []string{"g.txt"}},
		{"heredoc with tee", "tee -a h.txt <<EOF\nline\nEOF", []string{"h.txt"}},
		{"here-string", `cat <<< hi > out`, []string{"out"}},

		// mv
		{"mv", `mv a.go b.go`, []string{"a.go", "b.go"}},
		{"mv into dir/", `mv a.go pkg/`, []string{"a.go", "pkg", "pkg/a.go"}},
		{"mv several", `mv a b dir`, []string{"a", "b", "dir", "dir/a", "dir/b"}},
		{"mv -t", `mv -t dir x/a b`, []string{"b", "dir", "dir/a", "dir/b", "x/a"}},
		{"mv --target-directory=", `mv --target-directory=dir a`, []string{"a", "dir", "dir/a"}},
		{"mv -T", `mv -T a b/`, []string{"a", "b"}},
		{"mv -f -v", `mv -fv old new`, []string{"new", "old"}},

		// cp
		{"cp", `cp a b`, []string{"b"}},
		{"cp -r into dir", `cp -r src/ dst/`, []string{"dst", "dst/src"}},
		{"cp several", `cp a b d`, []string{"d", "d/a", "d/b"}},
		{"cp -t", `cp -t d a`, []string{"d", "d/a"}},
		{"cp --parents", `cp --parents x/y.go out/`, []string{"out", "out/x/y.go"}},
		{"cp into .", `cp ../x/f .`, []string{"", "f"}},

		// rm, rmdir, touch, mkdir
		{"rm", `rm a b`, []string{"a", "b"}},
		{"rm -rf", `rm -rf build/ dist`, []string{"build", "dist"}},
		{"rm --", `rm -- -weird`, []string{"-weird"}},
		{"rm glob skipped", `rm -f *.o tmp`, []string{"tmp"}},
		{"unlink", `unlink f`, []string{"f"}},
		{"rmdir", `rmdir d`, []string{"d"}},
		{"rmdir -p", `rmdir -p a/b/c`, []string{"a", "a/b", "a/b/c"}},
		{"touch", `touch a b`, []string{"a", "b"}},
		{"touch -d", `touch -d yesterday f`, []string{"f"}},
		{"touch -r", `touch -r ref f`, []string{"f"}},
		{"mkdir -p", `mkdir -p a/b c`, []string{"a/b", "c"}},
		{"mkdir -m", `mkdir -m 755 d`, []string{"d"}},

		// chmod, chown, ln, truncate, install
		{"chmod", `chmod +x run.sh`, []string{"run.sh"}},
		{"chmod octal -R", `chmod -R 755 bin`, []string{"bin"}},
		{"chmod -x mode", `chmod -x a b`, []string{"a", "b"}},
		{"chmod --reference", `chmod --reference=ref f`, []string{"f"}},
		{"chown", `chown -R me:me dir`, []string{"dir"}},
		{"chgrp", `chgrp staff f`, []string{"f"}},
		{"ln -s", `ln -s ../target link`, []string{"link"}},
		{"ln hard", `ln a b`, []string{"b"}},
		{"ln -sf into dir", `ln -sf /opt/tool bin/`, []string{"bin", "bin/tool"}},
		{"ln one operand", `ln -s ../shared/config.yml`, []string{"config.yml"}},
		{"ln -t", `ln -s -t d ../a`, []string{"d", "d/a"}},
		{"truncate", `truncate -s 0 log`, []string{"log"}},
		{"truncate --size", `truncate --size 0 log`, []string{"log"}},
		{"install", `install -m 755 tool bin/tool`, []string{"bin/tool"}},
		{"install into dir", `install -D -m 644 a.conf etc/`, []string{"etc", "etc/a.conf"}},
		{"install -d", `install -d out/a out/b`, []string{"out/a", "out/b"}},

		// git
		{"git checkout --", `git checkout -- a.go b.go`, []string{"a.go", "b.go"}},
		{"git checkout tree -- files", `git checkout HEAD~1 -- a.go`, []string{"a.go"}},
		{"git checkout tree files", `git checkout main a.go`, []string{"a.go"}},
		{"git checkout branch", `git checkout main`, nil},
		{"git checkout -b", `git checkout -b new main`, nil},
		{"git restore", `git restore a.go b.go`, []string{"a.go", "b.go"}},
		{"git restore --source", `git restore --source HEAD~2 a.go`, []string{"a.go"}},
		{"git restore --staged", `git restore --staged a.go`, nil},
		{"git restore --staged --worktree", `git restore -SW a.go`, []string{"a.go"}},
		{"git rm", `git rm -r old`, []string{"old"}},
		{"git rm --cached", `git rm --cached f`, nil},
		{"git mv", `git mv a b`, []string{"a", "b"}},
		{"git -C", `git -C sub checkout -- f`, []string{"sub/f"}},
		{"git pathspec magic", `git checkout -- ':(glob)*.go' '*.md' f`, []string{"f"}},
		{"git status", `git status && git diff && git log -p`, nil},

		// other writers
		{"dd of=", `dd if=/dev/zero of=disk.img bs=1M count=1`, []string{"disk.img"}},
		{"sort -o", `sort -u -o sorted.txt in.txt`, []string{"sorted.txt"}},
		{"curl -o", `curl -fsSLo out.tgz https://x/y`, []string{"out.tgz"}},
		{"curl --output-dir", `curl --output-dir dl -o f https://x`, []string{"dl/f"}},
		{"wget -O", `wget -qO page.html https://x; wget -qO- https://x`, []string{"page.html"}},
		{"gofmt -w", `gofmt -s -w a.go ./pkg`, []string{"a.go", "pkg"}},
		{"gofmt -l", `gofmt -l .`, nil},
		{"goimports -w", `goimports -local github.com/x -w f.go`, []string{"f.go"}},
		{"shred", `shred -u -n 3 secret`, []string{"secret"}},
		{"GNU time -o", `command time -o t.txt make`, []string{"t.txt"}},

		// read-only commands
		{"cat", `cat a`, nil},
		{"grep", `grep -rn x file`, nil},
		{"ls", `ls -la`, nil},
		{"find", `find . -name '*.go' | xargs wc -l`, nil},
		{"echo", `echo rm -rf x`, nil},
		{"go test", `go test ./... 2>&1 | tail -20`, nil},

		// structure
		{"&&", `mkdir -p d && touch d/f`, []string{"d", "d/f"}},
		{"||", `rm a || touch b`, []string{"a", "b"}},
		{";", `touch a; rm b`, []string{"a", "b"}},
		{"pipeline", `cat a | sed 's/x/y/' | tee b`, []string{"b"}},
		{"subshell", `(touch a; rm b)`, []string{"a", "b"}},
		{"block", `{ touch a; }`, []string{"a"}},
		{"if", `if [ -f a ]; then rm a; else touch b; fi`, []string{"a", "b"}},
		{"elif", `if x; then :; elif y; then rm c; fi`, []string{"c"}},
		{"while", `while true; do touch w; break; done`, []string{"w"}},
		{"case", `case $x in a) rm a;; *) rm b;; esac`, []string{"a", "b"}},
		{"command substitution", `echo $(touch inner) "$(rm q)"`, []string{"inner", "q"}},
		{"substitution in redirect word", `echo x > "$(rm r)"`, []string{"r"}},
		{"process substitution", `diff <(sort a > sa) b`, []string{"sa"}},
		{"function body", `f() { rm x; }; f`, []string{"x"}},
		{"background", `touch bg & wait`, []string{"bg"}},
		{"negated", `! rm x`, []string{"x"}},
		{"time keyword", `time rm x`, []string{"x"}},
		{"test clause", `[[ -f $(touch t) ]]`, []string{"t"}},
		{"comments", "rm a # and b\n# rm c", []string{"a"}},
		{"line continuation", "rm a \\\n  b", []string{"a", "b"}},

		// wrappers
		{"env", `env FOO=1 BAR=2 rm x`, []string{"x"}},
		{"env -i -u", `env -i -u HOME touch y`, []string{"y"}},
		{"env -C", `env -C sub touch f; touch g`, []string{"g", "sub/f"}},
		{"prefix assignment", `LC_ALL=C sed -i s/a/b/ f`, []string{"f"}},
		{"sudo", `sudo -u root rm -rf /w/x`, []string{"x"}},
		{"sudo -E env", `sudo -E env X=1 touch f`, []string{"f"}},
		{"command", `command rm x`, []string{"x"}},
		{"command -v", `command -v rm x`, nil},
		{"nohup", `nohup touch x &`, []string{"x"}},
		{"nice", `nice -n 10 rm x`, []string{"x"}},
		{"timeout", `timeout -s KILL 10 rm x`, []string{"x"}},
		{"exec", `exec rm x`, []string{"x"}},
		{"path to binary", `/bin/rm x; \rm y`, []string{"x", "y"}},

		// nested shells
		{"bash -c", `bash -c 'rm a && touch b'`, []string{"a", "b"}},
		{"sh -c double quotes", `sh -c "echo hi > out"`, []string{"out"}},
		{"zsh -lc", `zsh -lc 'mkdir -p x && mv y x/'`, []string{"x", "x/y", "y"}},
		{"bash -ec", `bash -ec 'touch a'`, []string{"a"}},
		{"bash -o pipefail -c", `bash -o pipefail -c 'touch a'`, []string{"a"}},
		{"bash -c with args", `bash -c 'rm "$1"' _ x`, nil},
		{"bash script file", `bash run.sh -c 'rm x'`, nil},
		{"sudo sh -c", `sudo sh -c 'echo x >> /w/etc.conf'`, []string{"etc.conf"}},
		{"nested bash -c", `bash -c "sh -c 'touch deep'"`, []string{"deep"}},
		{"bash heredoc", "bash <<'EOF'\nrm gone\nEOF", []string{"gone"}},
		{"bash -s heredoc", "bash -s -- arg <<EOF\ntouch made\nEOF", []string{"made"}},
		{"bash here-string", `bash <<< 'touch hs'`, []string{"hs"}},
		{"eval", `eval "rm ev"`, []string{"ev"}},
		{"bash -c unparseable", `bash -c 'if then'; touch ok`, []string{"ok"}},

		// quoting
		{"single quotes", `touch 'a b'`, []string{"a b"}},
		{"double quotes", `touch "a b"`, []string{"a b"}},
		{"escaped space", `touch a\ b`, []string{"a b"}},
		{"escaped glob", `touch a\*b "c*d" 'e?f'`, []string{"a*b", "c*d", "e?f"}},
		{"ansi-c", `touch $'a\tb' $'c\x41\'d' $'\u00e9'`, []string{"a\tb", "cA'd", "é"}},
		{"double quote escapes", `touch "a\"b" "c\d" "e\$f"`, []string{"a\"b", `c\d`, "e$f"}},
		{"concatenated", `touch pre'mid'"end"`, []string{"premidend"}},
		{"empty string", `touch ""`, nil},
		{"brace expansion", `mkdir -p src/{api,web}/v{1..2}`, []string{"src/api/v1", "src/api/v2", "src/web/v1", "src/web/v2"}},
		{"quoted braces", `touch "{a,b}"`, []string{"{a,b}"}},
		{"huge brace expansion", `touch {1..100000}; touch f`, []string{"f"}},

		// unresolvable words
		{"parameter", `rm $TMP/file "$HOME/x" ${X}y`, nil},
		{"tilde", `rm ~/x ~`, nil},
		{"command substitution word", `rm "$(cat list)" ok`, []string{"ok"}},
		{"arithmetic", `touch $((1+2))`, nil},

		// variables set in the command
		{"variable", `F=out.txt; echo x > "$F"; rm $F.bak`, []string{"out.txt", "out.txt.bak"}},
		{"variable braces", `D=build; rm -rf "${D}/cache"`, []string{"build/cache"}},
		{"variable reassigned unknown", `F=a; F=$(x); rm "$F"`, nil},
		{"variable prefix only", `F=a rm "$F"`, nil},
		{"variable export", `export OUT=o.txt; touch $OUT`, []string{"o.txt"}},
		{"variable with space unquoted", `F='a b'; rm $F; rm "$F"`, []string{"a b"}},
		{"variable in subshell", `(F=a); rm "$F"`, nil},
		{"variable read", `F=a; read F; rm "$F"`, nil},
		{"variable unset", `F=a; unset F; rm "$F"`, nil},
		{"variable append", `F=a; F+=.txt; touch "$F"`, []string{"a.txt"}},
		{"for loop", `for f in a.go b.go; do sed -i 's/x/y/' "$f"; done`, []string{"a.go", "b.go"}},
		{"for loop brace", `for n in {1..3}; do touch "f$n"; done`, []string{"f1", "f2", "f3"}},
		{"for loop glob", `for f in *.go; do rm "$f"; touch x; done`, []string{"x"}},
		{"PWD", `touch "$PWD/p"`, []string{"p"}},
		{"bash -c does not see variables", `F=a; bash -c 'rm "$F"'`, nil},

		// cd
		{"cd &&", `cd sub && touch f`, []string{"sub/f"}},
		{"cd ;", `cd sub; rm f; cd ..; rm g`, []string{"g", "sub/f"}},
		{"cd absolute", `cd /other && touch f`, []string{"/other/f"}},
		{"cd in subshell", `(cd sub && touch f); touch g`, []string{"g", "sub/f"}},
		{"cd in pipeline", `cd sub | cat; touch g`, []string{"g"}},
		{"cd in block persists", `{ cd sub; }; touch g`, []string{"sub/g"}},
		{"cd unknown", `cd "$DIR" && touch f && touch /abs/g`, []string{"/abs/g"}},
		{"cd back to known", `cd $X; cd /a; touch f`, []string{"/a/f"}},
		{"cd home", `cd && touch f`, nil},
		{"cd -", `cd - && touch f`, nil},
		{"cd in bash -c", `bash -c 'cd sub && touch f'; touch g`, []string{"g", "sub/f"}},
		{"cd before bash -c", `cd sub && bash -c 'touch f'`, []string{"sub/f"}},
		{"cd in $( )", `echo $(cd sub); touch g`, []string{"g"}},
		{"cd chains redirect", `cd sub && echo x > f`, []string{"sub/f"}},
		{"cd -P", `cd -P sub && touch f`, []string{"sub/f"}},
		{"pushd popd", `pushd sub && touch f && popd && touch g`, []string{"g", "sub/f"}},
		{"cd then if", `cd a; if true; then touch f; fi`, []string{"a/f"}},

		// unparseable
		{"unparseable", `echo 'unterminated`, nil},
		{"unbalanced", `(rm x`, nil},
		{"empty", ``, nil},
		{"zsh only syntax", `touch z; print -l ${(f)"$(cat x)"}`, []string{"z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []string
			for _, p := range tt.want {
				if !strings.HasPrefix(p, "/") {
					p = strings.TrimSuffix("/w/"+p, "/")
				}
				want = append(want, p)
			}
			got := BashTargets(tt.cmd, "/w")
			if !slices.Equal(got, want) {
				t.Errorf("BashTargets(%q)\n got %q\nwant %q", tt.cmd, got, want)
			}
		})
	}
}

func TestBashTargetsCwd(t *testing.T) {
	tests := []struct {
		cmd, cwd string
		want     []string
	}{
		{`touch a ../b`, "", []string{"../b", "a"}},
		{`cd sub && rm ./x`, "", []string{"sub/x"}},
		{`touch a`, "rel/dir", []string{"rel/dir/a"}},
		{`touch /abs`, "", []string{"/abs"}},
		{`touch a`, "/w/./x/../", []string{"/w/a"}},
		// Without a cwd, $PWD stays unknown.
		{`touch "$PWD/a"`, "", nil},
	}
	for _, tt := range tests {
		if got := BashTargets(tt.cmd, tt.cwd); !slices.Equal(got, tt.want) {
			t.Errorf("BashTargets(%q, %q) = %q, want %q", tt.cmd, tt.cwd, got, tt.want)
		}
	}
}

// TestBashTargetsDepth checks that nested shell strings are followed up to
// bashMaxDepth levels and no further.
func TestBashTargetsDepth(t *testing.T) {
	cmd := "touch f"
	for level := 1; level <= bashMaxDepth+1; level++ {
		q, err := syntax.Quote(cmd, syntax.LangBash)
		if err != nil {
			t.Fatal(err)
		}
		cmd = "bash -c " + q
		got := BashTargets(cmd, "/w")
		if level <= bashMaxDepth && !slices.Equal(got, []string{"/w/f"}) {
			t.Errorf("level %d: got %q, want [/w/f]", level, got)
		}
		if level > bashMaxDepth && got != nil {
			t.Errorf("level %d: got %q, want nothing", level, got)
		}
	}
}

func TestBashTargetsLimits(t *testing.T) {
	if got := BashTargets("touch a; "+strings.Repeat("#", bashMaxCommand), "/w"); got != nil {
		t.Errorf("over-long command: got %q", got)
	}
	// Loops and variables cannot blow up: doubling a variable stops at
	// bashMaxValue and nested loops at the step budget.
	var sb strings.Builder
	sb.WriteString("X=aaaaaaaaaaaaaaaa; ")
	for range 64 {
		sb.WriteString(`X="$X$X"; `)
	}
	sb.WriteString(`touch "$X"; touch ok`)
	if got := BashTargets(sb.String(), "/w"); !slices.Equal(got, []string{"/w/ok"}) {
		t.Errorf("doubling variable: got %q", got)
	}
	nested := strings.Repeat("for a in {1..200}; do ", 6) + "touch x; " + strings.Repeat("done; ", 6)
	if got := BashTargets(nested, "/w"); !slices.Equal(got, []string{"/w/x"}) {
		t.Errorf("nested loops: got %q", got)
	}

	// Many variables and many subshells: copying the state per subshell once
	// made this take 27 s.
	sb.Reset()
	for i := range 3000 {
		fmt.Fprintf(&sb, "v%d=x; ", i)
	}
	sb.WriteString(strings.Repeat("for a in {1..200}; do ", 3) + "(:) | (:); " + strings.Repeat("done; ", 3))
	sb.WriteString(`for f in a b; do bash -c "for g in {1..200}; do eval 'touch $f'; done"; done`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if got := BashTargets(sb.String(), "/w"); !slices.Equal(got, []string{"/w/a", "/w/b"}) {
		t.Errorf("many variables: got %q", got)
	}
	runtime.ReadMemStats(&after)
	// About 155,000 allocations; a copy of the 3,000 variables per
	// subshell (some 1,200 of them) makes millions. Counted, not timed.
	if n := after.Mallocs - before.Mallocs; n > 1_000_000 {
		t.Errorf("many variables: %d allocations, want under 1,000,000", n)
	}
}
