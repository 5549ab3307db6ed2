package prsm_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The limits that keep the code a path a newcomer can walk (issue 43):
// no Go file (tests included) over maxFileLines lines, and no type with
// more than maxMethods methods: a central type is a thin facade over parts
// that own their state, never a home for everything.
const (
	maxFileLines = 700
	maxMethods   = 60
)

// overLimit are the files and types still over a limit, each with the
// work that brings it under: the list only shrinks. An entry that is no
// longer over fails too, so that it is taken out.
var overLimit = map[string]string{}

// goFiles are the repository's Go files (less node_modules and testdata),
// relative to its root.
func goFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && p != ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestArchitectureLimits(t *testing.T) {
	over := map[string]string{}
	methods := map[string]int{} // "dir.Type": count
	fset := token.NewFileSet()
	for _, p := range goFiles(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "\n"); n > maxFileLines {
			over[p] = "file of " + itoa(n) + " lines"
		}
		f, err := parser.ParseFile(fset, p, b, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) == 0 {
				continue
			}
			typ := fn.Recv.List[0].Type
			if st, ok := typ.(*ast.StarExpr); ok {
				typ = st.X
			}
			if ix, ok := typ.(*ast.IndexExpr); ok {
				typ = ix.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				methods[filepath.Dir(p)+"."+id.Name]++
			}
		}
	}
	for typ, n := range methods {
		if n > maxMethods {
			over[typ] = "type with " + itoa(n) + " methods"
		}
	}
	var names []string
	for k := range over {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if why, ok := overLimit[k]; ok {
			t.Logf("%s: %s, still over (%s)", k, over[k], why)
			continue
		}
		t.Errorf("%s: %s; the limits are %d lines a file and %d methods a type", k, over[k], maxFileLines, maxMethods)
	}
	for k := range overLimit {
		if _, ok := over[k]; !ok {
			t.Errorf("%s is within the limits now: take it out of overLimit", k)
		}
	}
}

func itoa(n int) string {
	s := ""
	for ; n >= 10; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return string(rune('0'+n)) + s
}
