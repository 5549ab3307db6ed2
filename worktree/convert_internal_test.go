package worktree

import "testing"

func TestConvertsOn(t *testing.T) {
	for attrs, want := range map[string]bool{
		"":                                     false,
		"* text=auto\n":                        false,
		"*.png binary\n*.go -text\n":           false,
		"*.sh text eol=lf\n":                   true,
		"*.bat text eol=crlf\n":                true,
		"*.bin filter=lfs diff=lfs\n":          false, // prsm runs no filter driver
		"*.c ident\n":                          true,
		"*.txt working-tree-encoding=UTF-16\n": true,
		"*.x crlf\n":                           true,
		"*.x -crlf !eol -filter\n":             false,
		"# *.bat eol=crlf\n":                   false,
		"*.md linguist-documentation diff=markdown merge=union export-ignore\n": false,
		"[attr]dos text eol=crlf\n": true,
	} {
		if got := convertsOn([]byte(attrs)); got != want {
			t.Errorf("convertsOn(%q) = %v, want %v", attrs, got, want)
		}
	}
}
