package sync

import (
	"strconv"
	"testing"
)

// TestQuotePath: names that would break a line or steer a terminal are
// C-quoted as git quotes them, and strconv.Unquote (which reads what
// git's unquote_c_style reads) gives the name back byte for byte.
func TestQuotePath(t *testing.T) {
	tests := map[string]string{
		"a/x.go":              "a/x.go",
		"a/my file":           "a/my file",
		"a/é.txt":             "a/é.txt",
		"a/\u202eexe.txt":     `"a/\342\200\256exe.txt"`,
		"a/c1\u009b31m":       `"a/c1\302\23331m"`,
		"a/bad\xff":           `"a/bad\377"`,
		"a/new\nline":         `"a/new\nline"`,
		"bell\a\x1b[31mred":   `"bell\a\033[31mred"`,
		"cr\rdel\x7f":         `"cr\rdel\177"`,
		"q\"uote\\":           `"q\"uote\\"`,
		"a/\ufffdreplacement": "a/\ufffdreplacement",
	}
	for in, want := range tests {
		got := QuotePath(in)
		if got != want {
			t.Errorf("QuotePath(%q) = %s, want %s", in, got, want)
			continue
		}
		if got != in {
			back, err := strconv.Unquote(got)
			if err != nil || back != in {
				t.Errorf("Unquote(%s) = %q, %v; want %q", got, back, err, in)
			}
		}
	}
}
