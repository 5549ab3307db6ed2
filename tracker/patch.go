package tracker

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Codex's patches. apply_patch carries a patch whose header lines name
// every file it adds, updates, deletes or moves to; the same patch sent
// through the shell (`apply_patch <<'EOF' ... EOF`) is applied by Codex
// itself, outside the shell.

// patchHeaders are the lines of a patch in Codex's apply_patch format
// that name a file: the file added, updated or deleted, and the new name
// of a moved one.
var patchHeaders = []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "}

// PatchFiles are the paths a patch in Codex's apply_patch format names in
// its header lines, as written; none when it is not such a patch.
func PatchFiles(patch string) []string {
	if !strings.HasPrefix(strings.TrimSpace(patch), "*** Begin Patch") {
		return nil
	}
	var out []string
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimRight(line, "\r")
		for _, h := range patchHeaders {
			if p, ok := strings.CutPrefix(line, h); ok && strings.TrimSpace(p) != "" {
				out = append(out, strings.TrimSpace(p))
			}
		}
	}
	return out
}

// ShellPatch reads a shell command that is, as a whole, a patch Codex
// applies itself: `apply_patch <<'EOF' ... EOF` (or applypatch, a
// here-document or the patch as its one argument), alone or after one
// `cd DIR &&`. ok is false for any other command. files are the paths
// the patch names, joined to cwd (and DIR) as BashTargets joins them.
func ShellPatch(command, cwd string) (files []string, ok bool) {
	defer func() {
		if recover() != nil {
			files, ok = nil, false
		}
	}()
	if len(command) > bashMaxCommand || !strings.Contains(command, "apply") {
		return nil, false
	}
	f := bashParse(command, syntax.LangBash)
	if f == nil || len(f.Stmts) != 1 {
		return nil, false
	}
	dir := cwd
	s := f.Stmts[0]
	if b, isBin := s.Cmd.(*syntax.BinaryCmd); isBin {
		// cd DIR && apply_patch ...
		cd, isCall := b.X.Cmd.(*syntax.CallExpr)
		if b.Op != syntax.AndStmt || !isCall || len(b.X.Redirs) > 0 || len(cd.Assigns) > 0 || len(cd.Args) != 2 || cd.Args[0].Lit() != "cd" {
			return nil, false
		}
		d, known := shellWord(cd.Args[1])
		if !known {
			return nil, false
		}
		if filepath.IsAbs(d) || cwd == "" {
			dir = d
		} else {
			dir = filepath.Join(cwd, d)
		}
		s = b.Y
	}
	call, isCall := s.Cmd.(*syntax.CallExpr)
	if !isCall || s.Background || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return nil, false
	}
	if name := call.Args[0].Lit(); name != "apply_patch" && name != "applypatch" {
		return nil, false
	}
	var patch string
	switch {
	case len(call.Args) == 2 && len(s.Redirs) == 0:
		p, known := shellWord(call.Args[1])
		if !known {
			return nil, false
		}
		patch = p
	case len(call.Args) == 1 && len(s.Redirs) == 1 && s.Redirs[0].Hdoc != nil &&
		(s.Redirs[0].Op == syntax.Hdoc || s.Redirs[0].Op == syntax.DashHdoc):
		h := s.Redirs[0].Hdoc
		patch = command[h.Pos().Offset():h.End().Offset()]
	default:
		return nil, false
	}
	for _, p := range PatchFiles(patch) {
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		files = append(files, filepath.Clean(p))
	}
	return files, true
}

// shellWord is a word's value when it is plain text, quoted or not.
func shellWord(w *syntax.Word) (string, bool) {
	var sb strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			sb.WriteString(p.Value)
		case *syntax.SglQuoted:
			sb.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, isLit := q.(*syntax.Lit)
				if !isLit {
					return "", false
				}
				sb.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return sb.String(), true
}
