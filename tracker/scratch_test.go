package tracker

import "testing"

func TestIsScratch(t *testing.T) {
	tests := map[string]bool{
		"main.go":               false,
		"src/app/main.go":       false,
		"README.md":             false,
		".gitignore":            false,
		".github/workflows":     false,
		"tmp/x":                 false,
		"a.tmp":                 false,
		"notes.txt":             false,
		"grep_x.txt":            false,
		".grep_x.log":           false,
		"original.go":           false,
		"x.orig.go":             false,
		"file_index.txt":        false,
		"a/.file_index.txt.bak": false,

		".tmp":                 true,
		".tmpXYZ":              true,
		".tmp/a.go":            true,
		"src/.tmp-build/out.o": true,
		"src/.tmpfile":         true,
		".file_index.txt":      true,
		"sub/.file_index.txt":  true,
		".grep_results.txt":    true,
		"a/b/.grep_1.txt":      true,
		".pytest_out.txt":      true,
		".diff_123.txt":        true,
		".compile_errors.txt":  true,
		"main.go.rej":          true,
		"src/main.go.orig":     true,
		".git":                 true,
		".git/config":          true,
		"sub/.git/HEAD":        true,
		".GIT/config":          true,
		".prsm-tmp-123":        true,
		"dir/.prsm-tmp-abc.go": true,
		".prsm-tmp-dir/x":      true,
	}
	for in, want := range tests {
		if got := IsScratch(in); got != want {
			t.Errorf("IsScratch(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestGitSegment(t *testing.T) {
	for in, want := range map[string]string{
		"main.go":             "",
		".gitignore":          "",
		"a/.github/x":         "",
		"x.git/y":             "",
		".git":                ".git",
		".git/config":         ".git",
		"sub/.git":            "sub/.git",
		"sub/.git/config":     "sub/.git",
		"a/b/.GIT/objects/xx": "a/b/.GIT",
		"a/.git/b/.git/c":     "a/.git",
	} {
		if got := GitSegment(in); got != want {
			t.Errorf("GitSegment(%q) = %q, want %q", in, got, want)
		}
	}
}
