package tracker

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Word expansion for the Bash walker (bash.go): what a word of the command
// is, as far as the command itself says statically (its own variables,
// $PWD, braces, quotes); anything else is unknown.

// param resolves $name and ${name} for variables the command itself set, and
// $PWD.
func (w *bashWalker) param(p *syntax.ParamExp, st *bashState) (string, bool) {
	simple := p.Param != nil && p.Flags == nil &&
		!p.Excl && !p.Length && !p.Width && !p.IsSet &&
		p.Split == syntax.OptUnset && p.GlobSubst == syntax.OptUnset && p.RcExpand == syntax.OptUnset &&
		p.NestedParam == nil && p.Index == nil && len(p.Modifiers) == 0 &&
		p.Slice == nil && p.Repl == nil && p.Names == 0 && p.Exp == nil
	if !simple {
		return "", false
	}
	return st.lookup(p.Param.Value)
}

// lookup returns the value of a variable the command set, or of $PWD while
// the directory is known.
func (s *bashState) lookup(name string) (string, bool) {
	if v, ok := s.vars[name]; ok {
		return v, true
	}
	if name == "PWD" && s.known && filepath.IsAbs(s.cwd) {
		return s.cwd, true
	}
	return "", false
}

// bashHasGlob reports an unescaped *, ? or [...] in an unquoted literal.
func bashHasGlob(s string) bool {
	open := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			open = true
		case ']':
			if open {
				return true
			}
		}
	}
	return false
}

// errBashUnknown stops an expansion that would need what prsm does not know
// statically (a process substitution's path).
var errBashUnknown = errors.New("not known statically")

// bashEnv is the environment word expansion sees: the variables the command
// set to known values, and $PWD while the directory is known. Everything
// else is unset, which Config.NoUnset turns into an error.
type bashEnv struct{ st *bashState }

func (e bashEnv) Get(name string) expand.Variable {
	if v, ok := e.st.lookup(name); ok {
		return expand.Variable{Set: true, Kind: expand.String, Str: v}
	}
	return expand.Variable{}
}

func (e bashEnv) Each(fn func(name string, vr expand.Variable) bool) {
	for name := range e.st.vars {
		if !fn(name, e.Get(name)) {
			return
		}
	}
}

// bashExpandConfig expands words with the known variables only: command
// substitutions are errors (CmdSubst is nil), globbing is off (no ReadDir2)
// and an unknown variable is an error (NoUnset). Tildes never reach it (see
// known), so no home directory is ever looked up.
func bashExpandConfig(st *bashState) *expand.Config {
	return &expand.Config{
		Env:       bashEnv{st},
		NoUnset:   true,
		ProcSubst: func(*syntax.ProcSubst) (string, error) { return "", errBashUnknown },
	}
}

// fields resolves a command-line word to the fields the shell would pass:
// brace expansion, quote removal and known variables, done by
// mvdan.cc/sh/v3/expand. It fails on anything that depends on the
// environment or the file system (globs, ~, $HOME, $(...)); see known.
func (w *bashWalker) fields(word *syntax.Word, st *bashState) ([]string, bool) {
	w.steps--
	cfg := bashExpandConfig(st)
	words := []*syntax.Word{word}
	if split, ok := bashBraces(word.Parts); ok {
		words = nil
		for x, err := range expand.BracesSeq(cfg, split) {
			if err != nil || len(words) == bashMaxWords {
				return nil, false
			}
			// expand.Fields splits braces again; a word that would
			// split again (a generated "{" meeting a "," and a "}")
			// is one bash would not expand twice.
			if _, again := bashBraces(x.Parts); again {
				return nil, false
			}
			// An empty alternative leaves an empty literal behind,
			// which expand.Fields would keep as an empty field.
			x.Parts = slices.DeleteFunc(slices.Clone(x.Parts), func(p syntax.WordPart) bool {
				lit, ok := p.(*syntax.Lit)
				return ok && lit.Value == ""
			})
			words = append(words, x)
		}
		w.steps -= len(words)
	}
	var out []string
	for _, x := range words {
		if !w.known(x.Parts, st, true) {
			return nil, false
		}
		vals, err := expand.Fields(cfg, x)
		if err != nil {
			return nil, false
		}
		for _, v := range vals {
			w.steps -= len(v) / 1024
		}
		out = append(out, vals...)
	}
	return out, true
}

// bashBraces returns the word parts with their brace expansions parsed, and
// whether there is one (syntax.SplitBraces also reports a lone "{").
func bashBraces(parts []syntax.WordPart) (*syntax.Word, bool) {
	split := &syntax.Word{Parts: parts}
	if !syntax.SplitBraces(split) {
		return split, false
	}
	return split, slices.ContainsFunc(split.Parts, func(p syntax.WordPart) bool {
		_, ok := p.(*syntax.BraceExp)
		return ok
	})
}

// scalar resolves a word where the shell neither splits nor globs nor
// expands braces (assignments, here-strings): expand.Literal. Literal keeps
// the backslashes of unquoted text (it removes them in double quotes only),
// so unquoted text with one goes in single-quoted, with the backslashes
// removed as the shell removes them.
func (w *bashWalker) scalar(word *syntax.Word, st *bashState) (string, bool) {
	if !w.known(word.Parts, st, false) {
		return "", false
	}
	parts := slices.Clone(word.Parts)
	for i, p := range parts {
		if lit, ok := p.(*syntax.Lit); ok && strings.Contains(lit.Value, `\`) {
			parts[i] = &syntax.SglQuoted{Value: bashUnescape(lit.Value)}
		}
	}
	v, err := expand.Literal(bashExpandConfig(st), &syntax.Word{Parts: parts})
	return v, err == nil
}

// bashUnescape removes the backslashes that quote a character in unquoted
// text; a trailing one stays.
func bashUnescape(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// known reports whether the word parts hold only what expansion can resolve
// statically, the way prsm wants it: literals and quotes, and the simple
// parameters param knows. A leading ~ (home directories are not looked up),
// command, process and arithmetic substitutions make the word unknown; in a
// field (a command argument) so do an unquoted glob and an unquoted value
// the shell would split or glob.
func (w *bashWalker) known(parts []syntax.WordPart, st *bashState, field bool) bool {
	for i, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if i == 0 && strings.HasPrefix(p.Value, "~") {
				return false
			}
			if field && bashHasGlob(p.Value) {
				return false
			}
		case *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				switch q := q.(type) {
				case *syntax.Lit:
				case *syntax.ParamExp:
					if _, ok := w.param(q, st); !ok {
						return false
					}
				default:
					return false
				}
			}
		case *syntax.ParamExp:
			v, ok := w.param(p, st)
			// Unquoted, the value would be split and globbed.
			if !ok || (field && strings.ContainsAny(v, " \t\n*?[")) {
				return false
			}
		default:
			return false
		}
	}
	return true
}
