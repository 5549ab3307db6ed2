package tracker

import (
	"slices"
	"testing"
)

// TestBashTargetsExpansion pins the cases where word expansion through
// mvdan.cc/sh/v3/expand answers differently from prsm's former own
// expansion, each the way bash expands the word, and the quirks of the
// library that prsm works around.
func TestBashTargetsExpansion(t *testing.T) {
	tests := []struct {
		name string
		cmd  string
		want []string
	}{
		// A value the command itself set splits at its own IFS, as in
		// bash (formerly one field "a:b").
		{"own IFS splits", `IFS=:; f=a:b; touch $f`, []string{"/w/a", "/w/b"}},
		// Quoted, it does not.
		{"own IFS, quoted", `IFS=:; f=a:b; touch "$f"`, []string{"/w/a:b"}},
		// A bracket expression is a glob even where a brace sits inside
		// it (formerly read as the literal file "[{}}1]").
		{"glob around a brace", `touch '[x]' [{}}1] ok`, []string{"/w/[x]", "/w/ok"}},
		// A shell string cannot hold a NUL byte: $'\0' ends it, as in
		// bash (formerly no target: the name held a NUL).
		{"nul in ansi-c", `v=$'a\0b'; touch "$v"`, []string{"/w/a"}},
		// Quirks of the library that must not show, and what prsm
		// keeps refusing to guess.
		{"escaped space in assignment", `f=my\ file; touch "$f"`, []string{"/w/my file"}},
		{"escaped dollar in assignment", `f=\$x; touch "$f"`, []string{"/w/$x"}},
		{"braces in assignment stay", `f={a,b}; touch "$f"`, []string{"/w/{a,b}"}},
		{"empty brace alternative", `touch x{,} {,}`, []string{"/w/x"}},
		{"no ~user lookup", `touch ~root/x ~nobody a`, []string{"/w/a"}},
		{"no HOME", `touch ~/x {~,b}/y c`, []string{"/w/c"}},
		{"no arithmetic", `touch $((1+2)) a`, []string{"/w/a"}},
		{"no parameter operators", `x=a; touch ${x:-b} ${#x} ${x/a/c} d`, []string{"/w/d"}},
		{"no positional parameters", `touch "$@" $1 $# e`, []string{"/w/e"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BashTargets(tt.cmd, "/w"); !slices.Equal(got, tt.want) {
				t.Errorf("BashTargets(%q)\n got %q\nwant %q", tt.cmd, got, tt.want)
			}
		})
	}
}
