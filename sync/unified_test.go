package sync

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/internal/testgit"
)

func TestIsBinary(t *testing.T) {
	// A 3-byte rune that straddles the 8000-byte mark.
	long := strings.Repeat("a", binaryCheckLen-1) + "€"
	euro := "€"
	tests := []struct {
		name string
		b    string
		want bool
	}{
		{"empty", "", false},
		{"ascii", "hello\nworld\n", false},
		{"utf8", "héllo wörld 日本語 🎉\n", false},
		{"tabs and cr", "a\tb\r\n", false},
		{"nul", "a\x00b", true},
		{"nul at 7999", strings.Repeat("a", 7999) + "\x00", true},
		{"nul after 8000 is judged by utf8 only", strings.Repeat("a", 8000) + "\x00", false},
		{"invalid utf8", "a\xffb", true},
		{"latin1", "caf\xe9\n", true},
		{"truncated rune at end", "abc\xe2\x82", true},
		{"invalid utf8 far away", strings.Repeat("a", 100000) + "\xc3", true},
		{"rune across check boundary", long, false},
		{"rune across check boundary, repeated", strings.Repeat(euro, 5000), false},
		{"png header", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", true},
		{"utf16", "\xff\xfeh\x00i\x00", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsBinary([]byte(tt.b)); got != tt.want {
				t.Fatalf("IsBinary = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestUnifiedDiffText(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		context  int
		want     string
	}{
		{"equal", "a\n", "a\n", 3, ""},
		{"both empty", "", "", 3, ""},
		{"replace", "a\nb\nc\n", "a\nB\nc\n", 3,
			"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"replace no context", "a\nb\nc\n", "a\nB\nc\n", 0,
			"--- a/f\n+++ b/f\n@@ -2 +2 @@\n-b\n+B\n"},
		{"insert no context", "a\nb\n", "a\nX\nb\n", 0,
			"--- a/f\n+++ b/f\n@@ -1,0 +2 @@\n+X\n"},
		{"delete no context", "a\nX\nb\n", "a\nb\n", 0,
			"--- a/f\n+++ b/f\n@@ -2 +1,0 @@\n-X\n"},
		{"create", "", "x\ny\n", 3,
			"--- a/f\n+++ b/f\n@@ -0,0 +1,2 @@\n+x\n+y\n"},
		{"add final newline", "a\nb", "a\nb\n", 3,
			"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"},
		{"drop final newline", "a\nb\n", "a\nb", 1,
			"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n"},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\nX\n3\n4\n5\n6\n7\nY\n9\n", 1,
			"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n 1\n-2\n+X\n 3\n@@ -7,3 +7,3 @@\n 7\n-8\n+Y\n 9\n"},
		{"merged hunks", "1\n2\n3\n4\n5\n", "1\nX\n3\nY\n5\n", 1,
			"--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n 1\n-2\n+X\n 3\n-4\n+Y\n 5\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := UnifiedDiff("a/f", "b/f", []byte(tt.old), []byte(tt.new), tt.context); got != tt.want {
				t.Fatalf("UnifiedDiff =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestDiffName(t *testing.T) {
	tests := map[string]string{
		"a/x.go":      "a/x.go",
		"a/my file":   "a/my file\t",
		"a/é.txt":     "a/é.txt",
		"a/q\"uote":   `"a/q\"uote"`,
		"a/back\\sl":  `"a/back\\sl"`,
		"a/new\nline": `"a/new\nline"`,
		"a/bell\x01":  `"a/bell\001"`,
		"/dev/null":   "/dev/null",
	}
	for in, want := range tests {
		if got := diffName(in); got != want {
			t.Errorf("diffName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestUnifiedDiffGitApply applies UnifiedDiff's output with the real git apply
// (and patch, where installed) and compares the result byte for byte.
func TestUnifiedDiffGitApply(t *testing.T) {
	testgit.Env(t)
	r := rand.New(rand.NewPCG(9, 10))
	type tcase struct {
		name     string
		file     string // name inside the repo
		old, new string
		context  int
		create   bool // old side is /dev/null
		delete   bool // new side is /dev/null
	}
	cases := []tcase{
		{name: "modify", file: "f.txt", old: "a\nb\nc\nd\ne\n", new: "a\nB\nc\nd\ne\nf\n", context: 3},
		{name: "far apart hunks", file: "f.txt", old: numbered(1, 40), new: strings.Replace(strings.Replace(numbered(1, 40), "5\n", "five\n", 1), "35\n", "", 1), context: 3},
		{name: "context 1", file: "f.txt", old: numbered(1, 20), new: strings.Replace(numbered(1, 20), "10\n", "ten\nTEN\n", 1), context: 1},
		{name: "context 0", file: "f.txt", old: numbered(1, 20), new: strings.Replace(numbered(1, 20), "10\n", "", 1), context: 0},
		{name: "add final newline", file: "f.txt", old: "a\nb", new: "a\nb\n", context: 3},
		{name: "drop final newline", file: "f.txt", old: "a\nb\n", new: "a\nb", context: 3},
		{name: "change unterminated last line", file: "f.txt", old: "a\nb", new: "a\nc", context: 3},
		{name: "create", file: "new.txt", new: "x\ny", context: 3, create: true},
		{name: "delete", file: "f.txt", old: "x\ny\n", context: 3, delete: true},
		{name: "space in name", file: "my file.txt", old: "a\n", new: "b\n", context: 3},
		{name: "quote in name", file: "q\"x.txt", old: "a\n", new: "b\n", context: 3},
		{name: "non-ascii name", file: "日本.txt", old: "a\nb\n", new: "a\nc\n", context: 3},
		{name: "crlf", file: "f.txt", old: "a\r\nb\r\nc\r\n", new: "a\r\nB\r\nc\r\n", context: 3},
	}
	for i := 0; i < 8; i++ {
		a := randomFile(r, 30+r.IntN(50), 6)
		b := randomEdit(r, a, 6, 2+r.IntN(8))
		cases = append(cases, tcase{name: fmt.Sprintf("random %d", i), file: "r.txt",
			old: strings.Join(a, ""), new: strings.Join(b, ""), context: r.IntN(4)})
	}
	_, havePatch := exec.LookPath("patch")

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			oldName, newName := "a/"+tc.file, "b/"+tc.file
			if tc.create {
				oldName = "/dev/null"
			}
			if tc.delete {
				newName = "/dev/null"
			}
			patch := UnifiedDiff(oldName, newName, []byte(tc.old), []byte(tc.new), tc.context)
			if tc.old == tc.new {
				if patch != "" {
					t.Fatalf("equal contents gave a patch:\n%s", patch)
				}
				return
			}
			appliers := [][]string{{"git", "apply", "--unidiff-zero"}}
			if havePatch == nil {
				appliers = append(appliers, []string{"patch", "-p1", "--quiet", "--batch", "--no-backup-if-mismatch"})
			}
			for _, cmdline := range appliers {
				dir := testgit.Init(t, "repo")
				p := filepath.Join(dir, tc.file)
				if !tc.create {
					if err := os.WriteFile(p, []byte(tc.old), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				cmd := exec.Command(cmdline[0], cmdline[1:]...)
				cmd.Dir = dir
				cmd.Stdin = strings.NewReader(patch)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s\npatch:\n%s", strings.Join(cmdline, " "), err, out, patch)
				}
				got, err := os.ReadFile(p)
				if tc.delete {
					if !os.IsNotExist(err) {
						t.Fatalf("%s: file still exists after a deletion patch (err %v)", cmdline[0], err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, []byte(tc.new)) {
					t.Fatalf("%s gave %q, want %q\npatch:\n%s", cmdline[0], got, tc.new, patch)
				}
			}
		})
	}
}

// numbered returns the lines "from\n" ... "to\n".
func numbered(from, to int) string {
	var sb strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&sb, "%d\n", i)
	}
	return sb.String()
}
