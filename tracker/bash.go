package tracker

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"

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
