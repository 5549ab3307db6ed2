package tracker

import (
	"path"
	"strings"
)

// scratchBasePatterns are path.Match patterns for base names of files that
// agents and their tools leave behind while they work (SPEC.md rule 8): index
// and grep dumps, test and compiler output, and the leftovers of a failed
// `patch` run. Recording them would bury the real changes.
var scratchBasePatterns = []string{
	".file_index.txt",
	".grep_*.txt",
	".pytest_*.txt",
	".diff_*.txt",
	".compile_*.txt",
	"*.rej",
	"*.orig",
}

// scratchSegmentPrefixes are prefixes that make any path segment, directory or
// file, scratch: agents' temp files and directories (.tmp*) and prsm's own
// temp files (.prsm-tmp-*, written next to their target for atomic renames).
var scratchSegmentPrefixes = []string{
	".tmp",
	".prsm-tmp-",
}

// GitSegment returns the start of rel (slash separated) up to its first
// segment named .git, in any letter case ("sub/.git" for
// "sub/.git/config"), or "" when it has none. Nothing there is ever
// recorded (IsScratch): git takes such a directory or file for a
// repository of its own, and one synced into the workspace would be the
// agent's git directory in the user's.
func GitSegment(rel string) string {
	for i := 0; i < len(rel); {
		j := strings.IndexByte(rel[i:], '/')
		if j < 0 {
			j = len(rel) - i
		}
		if strings.EqualFold(rel[i:i+j], ".git") {
			return rel[:i+j]
		}
		i += j + 1
	}
	return ""
}

// IsScratch reports whether rel, a slash-separated path relative to the
// worktree root, is a scratch file that is never recorded (SPEC.md rule 8), or
// lies under .git (in any letter case: git itself refuses such paths, since
// case-insensitive file systems take them for .git). Git-ignored files are scratch too, but that needs git and is
// decided elsewhere; this is the pure, name-only part.
func IsScratch(rel string) bool {
	segs := strings.Split(rel, "/")
	for _, seg := range segs {
		if strings.EqualFold(seg, ".git") {
			return true
		}
		for _, p := range scratchSegmentPrefixes {
			if strings.HasPrefix(seg, p) {
				return true
			}
		}
	}
	base := segs[len(segs)-1]
	for _, p := range scratchBasePatterns {
		if ok, _ := path.Match(p, base); ok {
			return true
		}
	}
	return false
}
