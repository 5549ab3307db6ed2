package engine_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneWorkspaceWriter: the engine writes the user's workspace in one
// place, wswrite.go's wsWriter, so its guards are read in one place. Every
// other call of a function of prsm's sync that creates, changes or removes a
// file names a session's worktree as its root (s.WorktreePath), never the
// workspace; and in wswrite.go only wsWriter's methods call them. No os
// call that writes takes a path built from the workspace's root.
func TestOneWorkspaceWriter(t *testing.T) {
	writers := map[string]bool{"Prepare": true, "Apply": true, "ApplyUnsynced": true, "Write": true,
		"WriteUnsynced": true, "WriteFileAtomic": true, "WriteSymlinkAtomic": true, "RemoveFile": true, "CleanTemp": true}
	osWriters := map[string]bool{"WriteFile": true, "Remove": true, "RemoveAll": true, "Chmod": true, "Chtimes": true,
		"Symlink": true, "Link": true, "Rename": true, "Create": true, "OpenFile": true, "Mkdir": true, "MkdirAll": true, "Truncate": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	inWriter := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		// The name prsm's sync goes by in this file ("" when not imported).
		prsmSync := ""
		for _, im := range f.Imports {
			if im.Path.Value == `"github.com/prsm-dev/prsm/sync"` {
				prsmSync = "sync"
				if im.Name != nil {
					prsmSync = im.Name.Name
				}
			}
		}
		for _, d := range f.Decls {
			fd, _ := d.(*ast.FuncDecl)
			ast.Inspect(d, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "os" && osWriters[sel.Sel.Name] && namesWorkspace(call) {
					t.Errorf("%s: os.%s on a workspace path, outside wsWriter", fset.Position(call.Pos()), sel.Sel.Name)
					return true
				}
				if pkg, ok := sel.X.(*ast.Ident); !ok || prsmSync == "" || pkg.Name != prsmSync || !writers[sel.Sel.Name] {
					return true
				}
				pos := fset.Position(call.Pos())
				if name == "wswrite.go" && fd != nil && fd.Recv != nil && recvName(fd) == "wsWriter" {
					inWriter++
					return true
				}
				if root, ok := call.Args[0].(*ast.SelectorExpr); ok && root.Sel.Name == "WorktreePath" {
					return true
				}
				t.Errorf("%s: sync.%s outside wsWriter on a root that is not a worktree", pos, sel.Sel.Name)
				return true
			})
		}
	}
	if inWriter == 0 {
		t.Error("wsWriter calls no writer of prsm's sync: the check above checks nothing")
	}
}

func recvName(fd *ast.FuncDecl) string {
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// namesWorkspace reports whether an argument of call uses the workspace's
// root (Repo.Root).
func namesWorkspace(call *ast.CallExpr) bool {
	found := false
	for _, a := range call.Args {
		ast.Inspect(a, func(n ast.Node) bool {
			if s, ok := n.(*ast.SelectorExpr); ok && s.Sel.Name == "Root" {
				if x, ok := s.X.(*ast.SelectorExpr); ok && x.Sel.Name == "Repo" {
					found = true
				}
			}
			return !found
		})
	}
	return found
}
