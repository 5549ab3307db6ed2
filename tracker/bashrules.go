package tracker

import (
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// The per-command rules of the Bash walker (bash.go): what each command
// prsm knows by name (cp, mv, sed -i, git, …) writes, from its
// options and operands.

// run handles one command by name; args exclude the name.
func (w *bashWalker) run(name string, args []bashArg, s *syntax.Stmt, st *bashState) {
	switch name {
	case "cd", "pushd", "popd":
		w.cd(name, args, st)
	case "read":
		opts, ops := bashOpts{short: "adinNptu"}.parse(args)
		if len(ops) == 0 {
			ops = []bashArg{{"REPLY", true}}
		}
		if a, ok := bashVal(opts, "a"); ok {
			ops = append(ops, a)
		}
		for _, a := range ops {
			st.unset(a.s)
		}
	case "unset":
		_, ops := bashOpts{}.parse(args)
		for _, a := range ops {
			st.unset(a.s)
		}
	case "eval":
		var parts []string
		for _, a := range args {
			if !a.ok {
				return
			}
			parts = append(parts, a.s)
		}
		w.script(strings.Join(parts, " "), syntax.LangBash, st, true)
	case "bash", "sh", "zsh", "dash", "ksh", "ash", "mksh":
		w.shell(name, args, s, st)
	case "sed", "gsed":
		w.sed(args, st)
	case "perl":
		w.perl(args, st)
	case "tee":
		_, ops := bashOpts{}.parse(args)
		w.addAll(st, ops)
	case "mv":
		opts, ops := bashOpts{short: "tS", long: []string{"--target-directory", "--suffix"}}.parse(args)
		w.copyLike(st, opts, ops, true, false)
	case "cp":
		opts, ops := bashOpts{short: "tS", long: []string{"--target-directory", "--suffix", "--no-preserve"}}.parse(args)
		w.copyLike(st, opts, ops, false, bashHas(opts, "--parents"))
	case "ln":
		opts, ops := bashOpts{short: "tS", long: []string{"--target-directory", "--suffix"}}.parse(args)
		if len(ops) == 1 && !bashHas(opts, "t", "--target-directory") {
			// `ln -s ../x` makes ./x.
			if ops[0].ok {
				w.add(st, bashArg{filepath.Base(ops[0].s), true})
			}
			return
		}
		w.copyLike(st, opts, ops, false, false)
	case "install":
		opts, ops := bashOpts{short: "gmoSt", long: []string{"--group", "--mode", "--owner", "--suffix", "--target-directory", "--strip-program"}}.parse(args)
		if bashHas(opts, "d", "--directory") {
			w.addAll(st, ops)
			return
		}
		w.copyLike(st, opts, ops, false, false)
	case "rm", "unlink":
		_, ops := bashOpts{}.parse(args)
		w.addAll(st, ops)
	case "shred":
		_, ops := bashOpts{short: "ns", long: []string{"--iterations", "--size"}}.parse(args)
		w.addAll(st, ops)
	case "rmdir":
		opts, ops := bashOpts{}.parse(args)
		parents := bashHas(opts, "p", "--parents")
		for _, a := range ops {
			w.add(st, a)
			for p := filepath.Clean(a.s); a.ok && parents; {
				p = filepath.Dir(p)
				if p == "." || p == "/" {
					break
				}
				w.add(st, bashArg{p, true})
			}
		}
	case "touch":
		_, ops := bashOpts{short: "drt", long: []string{"--date", "--reference", "--time"}}.parse(args)
		w.addAll(st, ops)
	case "mkdir":
		_, ops := bashOpts{short: "m", long: []string{"--mode"}}.parse(args)
		w.addAll(st, ops)
	case "truncate":
		_, ops := bashOpts{short: "sr", long: []string{"--size", "--reference"}}.parse(args)
		w.addAll(st, ops)
	case "chmod":
		w.chmod(args, st)
	case "chown", "chgrp":
		opts, ops := bashOpts{long: []string{"--from", "--reference"}}.parse(args)
		if !bashHas(opts, "--reference") && len(ops) > 0 {
			ops = ops[1:] // owner or group
		}
		w.addAll(st, ops)
	case "dd":
		for _, a := range args {
			if out, ok := strings.CutPrefix(a.s, "of="); ok && a.ok {
				w.add(st, bashArg{out, true})
			}
		}
	case "sort":
		opts, _ := bashOpts{short: "kotST", long: []string{"--key", "--output", "--buffer-size", "--field-separator", "--temporary-directory", "--parallel", "--batch-size", "--files0-from", "--compress-program", "--random-source", "--sort"}}.parse(args)
		w.addVals(st, opts, "", "o", "--output")
	case "curl":
		opts, _ := bashOpts{short: "AbcCdDeEFHKmoPQrtTuUwxXyYz", long: []string{"--output", "--output-dir", "--dump-header", "--cookie-jar"}}.parse(args)
		dir, _ := bashVal(opts, "--output-dir")
		w.addVals(st, opts, dir.s, "o", "--output")
		w.addVals(st, opts, "", "D", "--dump-header", "c", "--cookie-jar")
	case "wget":
		opts, _ := bashOpts{short: "eoaiBtOTwQPUlARDIX", long: []string{"--output-document", "--output-file", "--append-output"}}.parse(args)
		w.addVals(st, opts, "", "O", "--output-document", "o", "--output-file", "a", "--append-output")
	case "git":
		w.git(args, st)
	case "gofmt", "goimports":
		w.gofmt(args, st)
	}
}

// addVals adds the values of the named options, joined to dir when relative.
func (w *bashWalker) addVals(st *bashState, opts []bashOpt, dir string, names ...string) {
	for _, o := range opts {
		if !slices.Contains(names, o.name) || !o.val.ok || o.val.s == "-" {
			continue
		}
		v := o.val
		if dir != "" && !filepath.IsAbs(v.s) {
			v.s = filepath.Join(dir, v.s)
		}
		w.add(st, v)
	}
}

func (w *bashWalker) cd(name string, args []bashArg, st *bashState) {
	_, ops := bashOpts{posix: true}.parse(args)
	switch name {
	case "popd":
		if len(ops) > 0 || len(st.dirs) == 0 {
			st.known = false
			return
		}
		top := st.dirs[len(st.dirs)-1]
		st.dirs = st.dirs[:len(st.dirs)-1]
		st.cwd, st.known = top.cwd, top.known
		return
	case "pushd":
		if len(ops) == 0 || strings.HasPrefix(ops[0].s, "+") {
			st.known = false
			return
		}
		st.dirs = append(st.dirs, bashDir{st.cwd, st.known})
	}
	if len(ops) == 0 {
		st.known = false // $HOME
		return
	}
	st.chdir(ops[0])
}

// shell handles `bash -c 'script'` and `bash <<EOF ... EOF`: the script is
// parsed and walked like the outer command.
func (w *bashWalker) shell(name string, args []bashArg, s *syntax.Stmt, st *bashState) {
	cflag, stdin := false, false
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.ok {
			break
		}
		if a.s == "--" || a.s == "-" {
			i++
			break
		}
		if strings.HasPrefix(a.s, "--") {
			if a.s == "--rcfile" || a.s == "--init-file" {
				i++
			}
			continue
		}
		if len(a.s) < 2 || (a.s[0] != '-' && a.s[0] != '+') {
			break
		}
		for _, c := range a.s[1:] {
			switch c {
			case 'c':
				cflag = true
			case 's':
				stdin = true
			case 'o', 'O':
				i++ // -o pipefail
			}
		}
	}
	lang := syntax.LangBash
	if name == "zsh" {
		lang = syntax.LangZsh
	}
	if cflag {
		if i < len(args) && args[i].ok {
			w.script(args[i].s, lang, st, false)
		}
		return
	}
	if i < len(args) && !stdin {
		return // runs a script file
	}
	for _, r := range s.Redirs {
		if body, ok := w.stdinText(r, st); ok {
			w.script(body, lang, st, false)
		}
	}
}

// stdinText resolves a here-document or here-string fed to a shell.
func (w *bashWalker) stdinText(r *syntax.Redirect, st *bashState) (string, bool) {
	if r.N != nil && r.N.Value != "0" {
		return "", false
	}
	switch r.Op {
	case syntax.WordHdoc:
		return w.scalar(r.Word, st)
	case syntax.Hdoc, syntax.DashHdoc:
	default:
		return "", false
	}
	if r.Hdoc == nil {
		return "", true
	}
	// Every part must be known; the plain text is the body of a quoted
	// delimiter, expand.Document the body of an unquoted one.
	var sb strings.Builder
	for _, p := range r.Hdoc.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			sb.WriteString(p.Value)
		case *syntax.ParamExp:
			v, ok := w.param(p, st)
			if !ok {
				return "", false
			}
			sb.WriteString(v)
		default:
			return "", false
		}
	}
	// A quoted delimiter (<<'EOF') makes the body literal.
	if slices.ContainsFunc(r.Word.Parts, func(p syntax.WordPart) bool {
		lit, ok := p.(*syntax.Lit)
		return !ok || strings.Contains(lit.Value, `\`)
	}) {
		return sb.String(), true
	}
	v, err := expand.Document(bashExpandConfig(st), r.Hdoc)
	return v, err == nil
}

// script walks shell source found inside the command. A new shell (sh -c)
// sees none of the outer, unexported variables; eval shares the state.
func (w *bashWalker) script(src string, lang syntax.LangVariant, st *bashState, shared bool) {
	if w.depth >= bashMaxDepth {
		return
	}
	w.steps -= 20 + len(src)/64 // parsing costs more than walking
	f := bashParse(src, lang)
	if f == nil || w.steps <= 0 {
		return
	}
	if !shared {
		st = st.clone()
		st.vars = nil
		st.dirs = nil
	}
	w.depth++
	w.stmts(f.Stmts, st)
	w.depth--
}

// sed: the files after the script, when editing in place (-i, -i.bak,
// --in-place, and BSD's -i with an empty or .bak suffix argument).
func (w *bashWalker) sed(args []bashArg, st *bashState) {
	spec := bashOpts{short: "efl", optional: "i", long: []string{"--expression", "--file", "--line-length"}}
	opts, ops := spec.parse(args)
	if k := slices.Index(args, bashArg{"-i", true}); k >= 0 && k+1 < len(args) && args[k+1].ok {
		next := args[k+1].s
		bsd := slices.Concat(args[:k+1], args[k+2:])
		switch {
		case next == "":
			opts, ops = spec.parse(bsd)
		case bashLooksLikeSuffix(next):
			// GNU would read the suffix as the script; BSD's reading is the
			// likely one when a script and a file still follow.
			o2, ops2 := spec.parse(bsd)
			if !bashHas(o2, "e", "f", "--expression", "--file") && len(ops2) >= 2 {
				opts, ops = o2, ops2
			}
		}
	}
	if !bashHas(opts, "i", "--in-place") {
		return
	}
	if !bashHas(opts, "e", "f", "--expression", "--file") && len(ops) > 0 {
		ops = ops[1:] // the script
	}
	w.addAll(st, ops)
}

func bashLooksLikeSuffix(s string) bool {
	if len(s) < 2 || s[0] != '.' {
		return false
	}
	return !strings.ContainsAny(s, "/ \t\n;")
}

// perl: the files after the program, with -i.
func (w *bashWalker) perl(args []bashArg, st *bashState) {
	inplace, program := false, false
	i := 0
	for i < len(args) {
		a := args[i]
		if !a.ok || a.s == "-" || !strings.HasPrefix(a.s, "-") {
			break
		}
		i++
		if a.s == "--" {
			break
		}
		if strings.HasPrefix(a.s, "--") {
			continue
		}
		s := a.s[1:]
		for j := 0; j < len(s); j++ {
			switch s[j] {
			case 'i':
				inplace = true
				j = len(s) // the rest is the backup suffix
			case 'e', 'E':
				program = true
				if j+1 == len(s) {
					i++ // -e CODE
				}
				j = len(s)
			case 'I', 'M', 'm':
				if j+1 == len(s) {
					i++
				}
				j = len(s)
			case 'x', 'd', 'D', 'V', 'F', 'C':
				j = len(s)
			case '0', 'l':
				for j+1 < len(s) && strings.IndexByte("0123456789abcdefABCDEFx", s[j+1]) >= 0 {
					j++
				}
			}
		}
	}
	if !inplace {
		return
	}
	ops := args[min(i, len(args)):]
	if !program && len(ops) > 0 {
		ops = ops[1:] // the program file
	}
	w.addAll(st, ops)
}

// copyLike covers mv, cp, ln and install: the destination is the last
// operand or -t DIR; a destination that is a directory (by -t, several
// sources, or a trailing slash) also receives dest/base(src). Whether a plain
// `cp a b` copies into directory b is unknown statically; the git diff finds
// b/a in that case.
func (w *bashWalker) copyLike(st *bashState, opts []bashOpt, ops []bashArg, sources, parents bool) {
	var srcs []bashArg
	dest, intoDir := bashArg{}, false
	if dir, ok := bashVal(opts, "t", "--target-directory"); ok {
		srcs, dest, intoDir = ops, dir, true
	} else if len(ops) >= 2 {
		srcs, dest = ops[:len(ops)-1], ops[len(ops)-1]
		intoDir = len(srcs) > 1 || bashDirLike(dest.s)
	} else {
		return
	}
	if bashHas(opts, "T", "--no-target-directory") {
		intoDir = false
	}
	if sources {
		w.addAll(st, srcs)
	}
	if !dest.ok {
		return
	}
	w.add(st, dest)
	if !intoDir {
		return
	}
	for _, src := range srcs {
		if !src.ok || src.s == "" {
			continue
		}
		name := filepath.Base(src.s)
		if parents {
			name = src.s
		}
		w.add(st, bashArg{filepath.Join(dest.s, name), true})
	}
}

func bashDirLike(s string) bool {
	return s == "." || s == ".." || strings.HasSuffix(s, "/") ||
		strings.HasSuffix(s, "/.") || strings.HasSuffix(s, "/..")
}

// chmod needs its own option scan: -x, -w or -rwx are modes, not options.
func (w *bashWalker) chmod(args []bashArg, st *bashState) {
	var ops []bashArg
	ref, end := false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case end || !a.ok || len(a.s) < 2 || a.s[0] != '-':
			ops = append(ops, a)
		case a.s == "--":
			end = true
		case a.s == "--reference":
			ref = true
			i++
		case strings.HasPrefix(a.s, "--reference="):
			ref = true
		case strings.HasPrefix(a.s, "--"):
		case strings.Trim(a.s[1:], "rwxXstugoa+-=,01234567") == "":
			ops = append(ops, a) // a mode like -x
		}
	}
	if !ref && len(ops) > 0 {
		ops = ops[1:]
	}
	w.addAll(st, ops)
}

// git: the work-tree files of checkout, restore, rm and mv. Commands whose
// files are not on the command line (reset, stash, merge) are left to the
// diff.
func (w *bashWalker) git(args []bashArg, st *bashState) {
	i := 0
	for i < len(args) {
		a := args[i]
		if !a.ok {
			return
		}
		switch {
		case a.s == "-C":
			if i+1 >= len(args) {
				return
			}
			st = st.clone()
			st.chdir(args[i+1])
			i += 2
			continue
		case a.s == "-c" || a.s == "--git-dir" || a.s == "--work-tree" || a.s == "--namespace" || a.s == "--config-env":
			i += 2
			continue
		case strings.HasPrefix(a.s, "-"):
			i++
			continue
		}
		break
	}
	if i >= len(args) {
		return
	}
	sub, rest := args[i].s, args[i+1:]
	var paths []bashArg
	switch sub {
	case "checkout":
		opts, ops := bashOpts{short: "bB", long: []string{"--orphan"}}.parse(rest)
		if bashHas(opts, "b", "B", "--orphan", "--detach") {
			return
		}
		if dd := bashDashDash(rest); dd >= 0 {
			paths = rest[dd+1:]
		} else if len(ops) >= 2 {
			paths = ops[1:] // git checkout TREE-ISH PATH...
		}
	case "restore":
		opts, ops := bashOpts{short: "s", long: []string{"--source"}}.parse(rest)
		if bashHas(opts, "S", "--staged") && !bashHas(opts, "W", "--worktree") {
			return
		}
		paths = ops
	case "rm":
		opts, ops := bashOpts{}.parse(rest)
		if bashHas(opts, "--cached", "n", "--dry-run") {
			return
		}
		paths = ops
	case "mv":
		opts, ops := bashOpts{}.parse(rest)
		if bashHas(opts, "n", "--dry-run") {
			return
		}
		w.copyLike(st, opts, ops, true, false)
		return
	}
	for _, p := range paths {
		// Pathspec magic and patterns are not file names.
		if p.ok && !strings.HasPrefix(p.s, ":") && !strings.ContainsAny(p.s, "*?[") {
			w.add(st, p)
		}
	}
}

func bashDashDash(args []bashArg) int {
	return slices.Index(args, bashArg{"--", true})
}

// gofmt -w and goimports -w rewrite the files and directories they are given.
func (w *bashWalker) gofmt(args []bashArg, st *bashState) {
	write := false
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.ok || len(a.s) < 2 || a.s[0] != '-' {
			break
		}
		if a.s == "--" {
			i++
			break
		}
		name, val, eq := strings.Cut(strings.TrimLeft(a.s, "-"), "=")
		switch name {
		case "w":
			write = !eq || val == "true" || val == "1" || val == "t"
		case "r", "cpuprofile", "memprofile", "memrate", "trace", "local", "srcdir":
			if !eq {
				i++
			}
		}
	}
	if write && i < len(args) {
		w.addAll(st, args[i:])
	}
}

// bashOpts describes a command's options for parse.
type bashOpts struct {
	short    string   // short options that take a value: -oV or -o V
	optional string   // short options whose value, if any, is attached: -i.bak
	long     []string // long options that take a value: --opt=V or --opt V
	posix    bool     // options end at the first operand (else GNU permutation)
}

type bashOpt struct {
	name string // "x" for -x, "--xyz" for --xyz
	val  bashArg
}

func (o bashOpts) parse(args []bashArg) (opts []bashOpt, ops []bashArg) {
	end := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case end || !a.ok || len(a.s) < 2 || a.s[0] != '-':
			ops = append(ops, a)
			end = end || o.posix
		case a.s == "--":
			end = true
		case strings.HasPrefix(a.s, "--"):
			name, val, eq := strings.Cut(a.s, "=")
			opt := bashOpt{name: name}
			if eq {
				opt.val = bashArg{val, true}
			} else if slices.Contains(o.long, name) && i+1 < len(args) {
				i++
				opt.val = args[i]
			}
			opts = append(opts, opt)
		default:
			for j := 1; j < len(a.s); j++ {
				opt := bashOpt{name: a.s[j : j+1]}
				rest := a.s[j+1:]
				switch {
				case strings.IndexByte(o.optional, a.s[j]) >= 0:
					opt.val = bashArg{rest, true}
					j = len(a.s)
				case strings.IndexByte(o.short, a.s[j]) >= 0:
					if rest != "" {
						opt.val = bashArg{rest, true}
					} else if i+1 < len(args) {
						i++
						opt.val = args[i]
					}
					j = len(a.s)
				}
				opts = append(opts, opt)
			}
		}
	}
	return opts, ops
}

func bashHas(opts []bashOpt, names ...string) bool {
	return slices.ContainsFunc(opts, func(o bashOpt) bool { return slices.Contains(names, o.name) })
}

// bashVal returns the value of the last of the named options given.
func bashVal(opts []bashOpt, names ...string) (bashArg, bool) {
	for i := len(opts) - 1; i >= 0; i-- {
		if slices.Contains(names, opts[i].name) {
			return opts[i].val, true
		}
	}
	return bashArg{}, false
}
