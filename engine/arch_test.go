package engine_test

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The engine's shape, read from its source: the one writer of the
// workspace, and doc.go's map of the files. (The limits on a type's
// methods and a file's lines hold for the whole repository: the root's
// arch_test.go.)

// engineDirs are the engine's package and its subpackages, relative to
// this one.
func engineDirs(t *testing.T) []string {
	t.Helper()
	dirs := []string{"."}
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "." {
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if gos, _ := filepath.Glob(filepath.Join(p, "*.go")); len(gos) > 0 {
				dirs = append(dirs, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// parseDir parses the non-test .go files of dir.
func parseDir(t *testing.T, fset *token.FileSet, dir string) map[string]*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*ast.File{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = f
	}
	return out
}

// TestDocMapsEveryFile: doc.go names every non-test .go file of the
// package in its map of who owns what.
func TestDocMapsEveryFile(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		for _, w := range strings.FieldsFunc(sc.Text(), func(r rune) bool {
			return r == ' ' || r == ',' || r == ':' || r == ';' || r == '(' || r == ')' || r == '\t'
		}) {
			if strings.HasSuffix(w, ".go") {
				named[w] = true
			}
		}
	}
	names, _ := filepath.Glob("*.go")
	var missing []string
	for _, name := range names {
		if !strings.HasSuffix(name, "_test.go") && name != "doc.go" && !named[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("doc.go does not say what these files own: %s", strings.Join(missing, ", "))
	}
	for w := range named {
		if _, err := os.Stat(w); err != nil && !strings.Contains(w, "/") {
			t.Errorf("doc.go names %s, which is not a file of the package", w)
		}
	}
}

// workspacePkg is the one package that writes the user's workspace.
var workspacePkg = filepath.Join(".", "workspace")

// TestOneWorkspaceWriter: the engine writes the user's workspace in one
// package, workspace, so its guards are read in one place. Every other
// call in engine (and its other subpackages) of a function of prsm's
// sync that creates, changes or removes a file names a session's
// worktree as its root (s.WorktreePath), never the workspace. No os call
// that writes takes a path built from the workspace's root.
func TestOneWorkspaceWriter(t *testing.T) {
	writers := map[string]bool{"Prepare": true, "Apply": true, "ApplyUnsynced": true, "Write": true,
		"WriteUnsynced": true, "WriteFileAtomic": true, "WriteSymlinkAtomic": true, "RemoveFile": true,
		"CleanTemp": true, "RemoveAll": true, "StageAll": true, "SyncFS": true}
	osWriters := map[string]bool{"WriteFile": true, "Remove": true, "RemoveAll": true, "Chmod": true, "Chtimes": true,
		"Symlink": true, "Link": true, "Rename": true, "Create": true, "OpenFile": true, "Mkdir": true, "MkdirAll": true, "Truncate": true}
	fset := token.NewFileSet()
	inWriter := 0
	for _, dir := range engineDirs(t) {
		for name, f := range parseDir(t, fset, dir) {
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
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				pkg, ok := sel.X.(*ast.Ident)
				if !ok {
					return true
				}
				if pkg.Name == "os" && osWriters[sel.Sel.Name] && namesWorkspace(call) {
					t.Errorf("%s: os.%s on a workspace path, outside package workspace", fset.Position(call.Pos()), sel.Sel.Name)
					return true
				}
				if prsmSync == "" || pkg.Name != prsmSync || !writers[sel.Sel.Name] {
					return true
				}
				if dir == workspacePkg {
					inWriter++
					return true
				}
				if root, ok := call.Args[0].(*ast.SelectorExpr); ok && root.Sel.Name == "WorktreePath" {
					return true
				}
				t.Errorf("%s (%s): sync.%s outside package workspace on a root that is not a worktree", fset.Position(call.Pos()), name, sel.Sel.Name)
				return true
			})
		}
	}
	if inWriter == 0 {
		t.Error("package workspace calls no writer of prsm's sync: the check above checks nothing")
	}
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
