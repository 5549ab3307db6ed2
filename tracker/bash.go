package tracker

import (
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Bash command inference. Before a Bash tool call runs, prsm stores the
// before-content of the files the command will likely touch; the watcher and
// the git diff afterwards stay the ground truth. So this only has to be a good
// guess: it reads the command with a real shell parser, follows the shell's
// structure, and names only paths it can read statically. A path whose value
// depends on the environment, a glob or a command's output is skipped rather
// than guessed.

// Limits that keep hostile or huge commands cheap: the hook must never slow
// the agent down.
const (
	bashMaxCommand = 1 << 20 // bytes of shell source parsed at all
	bashMaxDepth   = 5       // nested `sh -c` / `eval` strings
	bashMaxSteps   = 100_000 // work units (statements, words, parses) per command
	bashMaxWords   = 256     // fields one brace expansion or loop list may give
	bashMaxValue   = 4096    // bytes of a tracked variable's value
	bashMaxVars    = 64      // variables tracked at once (states are copied)
	bashMaxUnroll  = 1024    // loop iterations unrolled per outermost loop
)

// BashTargets returns the paths a shell command may create, modify or delete:
// relative paths joined to cwd (left relative when cwd is ""), cleaned, sorted
// and unique. It returns nil when the command cannot be parsed or names no
// target.
func BashTargets(command, cwd string) (paths []string) {
	// The hook must never crash the agent's tool call; a panic here would be a
	// bug, which the fuzz test hunts for on bashTargets directly.
	defer func() {
		if recover() != nil {
			paths = nil
		}
	}()
	return bashTargets(command, cwd)
}

func bashTargets(command, cwd string) []string {
	f := bashParse(command, syntax.LangBash)
	if f == nil {
		// The agent's shell may be zsh (the macOS default).
		f = bashParse(command, syntax.LangZsh)
	}
	if f == nil {
		return nil
	}
	w := &bashWalker{out: map[string]bool{}, steps: bashMaxSteps}
	w.stmts(f.Stmts, &bashState{cwd: cwd, known: true})
	if len(w.out) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(w.out))
}

func bashParse(src string, lang syntax.LangVariant) *syntax.File {
	if len(src) > bashMaxCommand {
		return nil
	}
	f, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(src), "")
	if err != nil {
		return nil
	}
	return f
}

// bashState is what one shell process knows at a point of the command.
type bashState struct {
	cwd   string
	known bool // false once cwd was changed to a directory we cannot read
	dirs  []bashDir
	vars  map[string]string // variables assigned literal values in the command
	// shared marks vars as also held by a clone: copy before writing. Cloning
	// happens for every subshell and pipeline stage, so it must not copy.
	shared bool
}

type bashDir struct {
	cwd   string
	known bool
}

// clone gives a subshell its own copy: cd and assignments inside stay inside.
func (s *bashState) clone() *bashState {
	s.dirs = slices.Clip(s.dirs) // an append by either side reallocates
	s.shared = true
	c := *s
	return &c
}

func (s *bashState) set(name, value string) {
	if len(value) > bashMaxValue {
		s.unset(name)
		return
	}
	if _, had := s.vars[name]; !had && len(s.vars) >= bashMaxVars {
		// Forgetting is always safe; the latest assignments matter most.
		s.vars, s.shared = nil, false
	}
	if s.vars == nil || s.shared {
		s.vars = maps.Clone(s.vars)
		if s.vars == nil {
			s.vars = map[string]string{}
		}
		s.shared = false
	}
	s.vars[name] = value
}

func (s *bashState) unset(name string) {
	if _, ok := s.vars[name]; !ok {
		return
	}
	if s.shared {
		s.vars = maps.Clone(s.vars)
		s.shared = false
	}
	delete(s.vars, name)
}

// chdir applies `cd dir`, dir as written.
func (s *bashState) chdir(dir bashArg) {
	switch {
	case !dir.ok || dir.s == "-":
		s.known = false
	case dir.s == "":
		// bash treats `cd ""` as a no-op.
	case filepath.IsAbs(dir.s):
		s.cwd, s.known = filepath.Clean(dir.s), true
	case s.known:
		s.cwd = filepath.Join(s.cwd, dir.s)
	}
}

type bashWalker struct {
	out    map[string]bool
	steps  int // work left; nothing more is looked at when it runs out
	unroll int // loop iterations left to unroll in the outermost loop
	loops  int // nesting of loops being walked
	depth  int // nesting of parsed strings (sh -c, eval, here-documents)
}

// bashArg is one field of a command line; ok is false when its value is not
// known statically.
type bashArg struct {
	s  string
	ok bool
}

func (w *bashWalker) add(st *bashState, a bashArg) {
	p := a.s
	if !a.ok || p == "" || strings.IndexByte(p, 0) >= 0 {
		return
	}
	if filepath.IsAbs(p) {
		p = filepath.Clean(p)
	} else {
		if !st.known {
			return
		}
		p = filepath.Join(st.cwd, p)
	}
	// Devices (/dev/null above all) are never worktree files.
	if p == "/dev" || strings.HasPrefix(p, "/dev/") {
		return
	}
	w.out[p] = true
}

func (w *bashWalker) addAll(st *bashState, args []bashArg) {
	for _, a := range args {
		if a.s != "-" { // stdin/stdout for most tools
			w.add(st, a)
		}
	}
}

func (w *bashWalker) stmts(list []*syntax.Stmt, st *bashState) {
	for _, s := range list {
		w.stmt(s, st)
	}
}

func (w *bashWalker) stmt(s *syntax.Stmt, st *bashState) {
	if s == nil || w.steps <= 0 {
		return
	}
	w.steps--
	if s.Background || s.Coprocess || s.Disown {
		st = st.clone()
	}
	for _, r := range s.Redirs {
		w.redirect(r, st)
	}
	switch c := s.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		w.call(c, s, st)
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			// Each part of a pipeline runs in its own subshell.
			w.stmt(c.X, st.clone())
			w.stmt(c.Y, st.clone())
		} else {
			w.stmt(c.X, st)
			w.stmt(c.Y, st)
		}
	case *syntax.Subshell:
		w.stmts(c.Stmts, st.clone())
	case *syntax.Block:
		w.stmts(c.Stmts, st)
	case *syntax.IfClause:
		w.ifClause(c, st)
	case *syntax.WhileClause:
		w.stmts(c.Cond, st)
		w.stmts(c.Do, st)
	case *syntax.ForClause:
		w.forClause(c, st)
	case *syntax.CaseClause:
		w.substs(c.Word, st)
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				w.substs(p, st)
			}
			w.stmts(it.Stmts, st.clone())
		}
	case *syntax.FuncDecl:
		// A function is declared to be called; its body counts, but its cd
		// does not apply here.
		w.stmt(c.Body, st.clone())
	case *syntax.TimeClause:
		w.stmt(c.Stmt, st)
	case *syntax.CoprocClause:
		w.stmt(c.Stmt, st.clone())
	case *syntax.DeclClause:
		for _, a := range c.Args {
			w.substs(a, st)
			w.assign(a, st)
		}
	default:
		// [[ ]], (( )), let: only their command substitutions run anything.
		w.substs(c, st)
	}
}

func (w *bashWalker) ifClause(c *syntax.IfClause, st *bashState) {
	w.stmts(c.Cond, st)
	alt := st.clone()
	w.stmts(c.Then, st)
	if c.Else != nil {
		w.ifClause(c.Else, alt)
	}
}

// forClause unrolls loops over literal lists, so `for f in a b; do rm "$f";
// done` names a and b. Each outermost loop may walk bodies bashMaxUnroll
// times, then stops, so that nested loops cannot eat the step budget that
// later commands need.
func (w *bashWalker) forClause(c *syntax.ForClause, st *bashState) {
	if w.loops == 0 {
		w.unroll = bashMaxUnroll
	}
	w.loops++
	defer func() { w.loops-- }()
	switch l := c.Loop.(type) {
	case *syntax.WordIter:
		var items []string
		ok := l.InPos.IsValid()
		for _, it := range l.Items {
			w.substs(it, st)
			vals, good := w.fields(it, st)
			ok = ok && good
			items = append(items, vals...)
		}
		if ok && len(items) > 0 && len(items) <= bashMaxWords && w.unroll > 0 {
			for _, v := range items {
				if w.unroll <= 0 {
					break
				}
				w.unroll--
				st.set(l.Name.Value, v)
				w.stmts(c.Do, st)
			}
			return
		}
		st.unset(l.Name.Value)
		w.stmts(c.Do, st)
	default:
		w.substs(c.Loop, st)
		w.stmts(c.Do, st)
	}
}

// substs walks the command and process substitutions inside a node: they run
// even when the word around them cannot be resolved.
func (w *bashWalker) substs(n syntax.Node, st *bashState) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			w.stmts(n.Stmts, st.clone())
			return false
		case *syntax.ProcSubst:
			w.stmts(n.Stmts, st.clone())
			return false
		}
		return true
	})
}

// assign records `name=value` when the value is literal, and forgets the
// variable otherwise so that a stale value is never used.
func (w *bashWalker) assign(a *syntax.Assign, st *bashState) {
	if a.Name == nil {
		return
	}
	name := a.Name.Value
	if a.Naked || a.Value == nil || a.Array != nil || a.Index != nil {
		st.unset(name)
		return
	}
	v, ok := w.scalar(a.Value, st)
	if !ok {
		st.unset(name)
		return
	}
	if a.Append {
		old, known := st.vars[name]
		if !known {
			st.unset(name)
			return
		}
		v = old + v
	}
	st.set(name, v)
}

func (w *bashWalker) redirect(r *syntax.Redirect, st *bashState) {
	if r.Word != nil {
		w.substs(r.Word, st)
	}
	if r.Hdoc != nil {
		w.substs(r.Hdoc, st)
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob,
		syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob,
		syntax.RdrInOut:
	case syntax.DplOut:
		// `>&file` is `&>file`; `>&2`, `2>&1` and `>&-` only copy descriptors.
		if r.N != nil {
			return
		}
	default:
		return
	}
	if r.Word == nil {
		return
	}
	vals, ok := w.fields(r.Word, st)
	if !ok || len(vals) != 1 {
		return
	}
	if r.Op == syntax.DplOut && bashIsFD(vals[0]) {
		return
	}
	w.add(st, bashArg{vals[0], true})
}

func bashIsFD(s string) bool {
	s = strings.TrimSuffix(s, "-")
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (w *bashWalker) call(c *syntax.CallExpr, s *syntax.Stmt, st *bashState) {
	for _, a := range c.Assigns {
		w.substs(a, st)
	}
	for _, a := range c.Args {
		w.substs(a, st)
	}
	if len(c.Args) == 0 {
		for _, a := range c.Assigns {
			w.assign(a, st)
		}
		return
	}
	// Prefix assignments (X=1 cmd) only reach cmd's environment; $X in the
	// arguments still has the old value, so they are not recorded.
	var args []bashArg
	for _, word := range c.Args {
		vals, ok := w.fields(word, st)
		if !ok {
			// One unknown field keeps the others in their positions.
			args = append(args, bashArg{})
			continue
		}
		for _, v := range vals {
			args = append(args, bashArg{v, true})
		}
	}
	w.command(args, s, st)
}

// command peels wrappers (sudo, env, nohup, ...) and runs the command they
// wrap.
func (w *bashWalker) command(args []bashArg, s *syntax.Stmt, st *bashState) {
	for len(args) > 0 && w.steps > 0 {
		if !args[0].ok {
			return
		}
		name := filepath.Base(args[0].s)
		rest := args[1:]
		switch name {
		case "env":
			opts, ops := bashOpts{short: "uCS", long: []string{"--unset", "--chdir", "--split-string"}, posix: true}.parse(rest)
			if bashHas(opts, "S", "--split-string") {
				return
			}
			if dir, ok := bashVal(opts, "C", "--chdir"); ok {
				st = st.clone()
				st.chdir(dir)
			}
			if len(ops) > 0 && ops[0] == (bashArg{"-", true}) {
				ops = ops[1:] // like -i
			}
			args = bashSkipAssigns(ops)
		case "sudo":
			opts, ops := bashOpts{short: "ugCDprtTU", long: []string{"--user", "--group", "--close-from", "--chdir", "--host", "--prompt", "--chroot", "--role", "--type", "--command-timeout", "--other-user"}, posix: true}.parse(rest)
			if bashHas(opts, "e", "--edit") { // sudoedit
				w.addAll(st, ops)
				return
			}
			if bashHas(opts, "l", "--list", "v", "--validate", "V", "--version", "K", "--remove-timestamp") {
				return
			}
			if dir, ok := bashVal(opts, "D", "--chdir"); ok {
				st = st.clone()
				st.chdir(dir)
			}
			args = bashSkipAssigns(ops)
		case "doas":
			_, args = bashOpts{short: "Cu", posix: true}.parse(rest)
		case "command":
			opts, ops := bashOpts{posix: true}.parse(rest)
			if bashHas(opts, "v", "V") {
				return
			}
			args = ops
		case "nohup", "builtin", "noglob", "nocorrect":
			args = rest
		case "exec":
			_, args = bashOpts{short: "a", posix: true}.parse(rest)
		case "nice":
			_, args = bashOpts{short: "n", long: []string{"--adjustment"}, posix: true}.parse(rest)
		case "stdbuf":
			_, args = bashOpts{short: "ioe", long: []string{"--input", "--output", "--error"}, posix: true}.parse(rest)
		case "timeout":
			_, ops := bashOpts{short: "sk", long: []string{"--signal", "--kill-after"}, posix: true}.parse(rest)
			if len(ops) == 0 {
				return
			}
			args = ops[1:] // the duration
		case "time":
			// GNU time; the bash keyword is a TimeClause.
			opts, ops := bashOpts{short: "of", long: []string{"--output", "--format"}, posix: true}.parse(rest)
			if out, ok := bashVal(opts, "o", "--output"); ok {
				w.add(st, out)
			}
			args = ops
		default:
			w.run(name, rest, s, st)
			return
		}
	}
}

// bashSkipAssigns drops the NAME=value operands env and sudo accept before
// the command.
func bashSkipAssigns(ops []bashArg) []bashArg {
	for len(ops) > 0 && ops[0].ok && strings.Contains(ops[0].s, "=") {
		ops = ops[1:]
	}
	return ops
}

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
