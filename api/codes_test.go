package api

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// codeConsts parses codes.go: the value of each Code constant, by name.
func codeConsts(t *testing.T) map[string]Code {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "codes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]Code{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
				continue
			}
			for i, name := range vs.Names {
				consts[name.Name] = Code(stringLit(vs.Values[i]))
			}
		}
	}
	return consts
}

// stringLit is the value of a string literal, "" for another expression.
func stringLit(e ast.Expr) string {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return ""
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return ""
	}
	return s
}

// TestCodesTable checks the table itself: each code once, sorted, with a
// status and a one-sentence meaning, and every constant in it.
func TestCodesTable(t *testing.T) {
	seen := map[Code]bool{}
	for i, c := range Codes {
		if seen[c.Code] {
			t.Errorf("code %s is in Codes twice", c.Code)
		}
		seen[c.Code] = true
		if i > 0 && Codes[i-1].Code >= c.Code {
			t.Errorf("Codes is not sorted at %s", c.Code)
		}
		if http.StatusText(c.Status) == "" || c.Status < 400 {
			t.Errorf("code %s has status %d", c.Code, c.Status)
		}
		if m := c.Meaning; m == "" || !strings.HasSuffix(m, ".") || strings.Contains(strings.TrimSuffix(m, "."), ". ") || strings.Contains(m, "|") {
			t.Errorf("code %s: its meaning is one sentence, without |: %q", c.Code, m)
		}
	}
	consts := codeConsts(t)
	for name, v := range consts {
		if !seen[v] {
			t.Errorf("constant %s (%q) is not in Codes", name, v)
		}
	}
	if len(consts) != len(Codes) {
		t.Errorf("%d Code constants, %d rows in Codes: each code is one constant and one row", len(consts), len(Codes))
	}
}

// sentinelStatus is the status the server gives a prsm.Error by its
// sentinel (server.statusOf).
var sentinelStatus = map[string]int{
	"ErrNotFound":  http.StatusNotFound,
	"ErrAmbiguous": http.StatusBadRequest,
	"ErrInvalid":   http.StatusBadRequest,
	"ErrConflict":  http.StatusConflict,
}

// sentinelExceptions are the codes a prsm.Error carries with a sentinel
// whose status is not the table's, each with that status; the code's
// meaning says so.
var sentinelExceptions = map[Code]int{
	CodeTooLarge: http.StatusNotFound, // a record's side kept without its content
}

// TestEveryCodeDeclared reads every Go file of the module but tests and
// fails on an error code that Codes does not declare: the code of a
// prsm.Errorf, of a server's apiError, of a Code: field, or one a client
// compares an error's Code with. A prsm.Errorf's sentinel must give the
// table's status, but for sentinelExceptions.
func TestEveryCodeDeclared(t *testing.T) {
	consts := codeConsts(t)
	// code is the code e names: a literal, a Code constant, string() of
	// one, or "prefix"+x (then prefix, and true).
	var code func(e ast.Expr) (c Code, prefix, ok bool)
	code = func(e ast.Expr) (c Code, prefix, ok bool) {
		switch e := e.(type) {
		case *ast.BasicLit:
			return Code(stringLit(e)), false, e.Kind == token.STRING
		case *ast.SelectorExpr:
			if x, isID := e.X.(*ast.Ident); isID && x.Name == "api" {
				c, ok := consts[e.Sel.Name]
				return c, false, ok
			}
		case *ast.CallExpr:
			if fn, isID := e.Fun.(*ast.Ident); isID && len(e.Args) == 1 && (fn.Name == "string" || fn.Name == "Code") {
				c, p, ok := code(e.Args[0])
				return c, p, ok
			}
		case *ast.BinaryExpr:
			if s := stringLit(e.X); e.Op == token.ADD && s != "" {
				return Code(s), true, true
			}
		}
		return "", false, false
	}
	found := 0
	check := func(pos token.Position, e ast.Expr, sentinel string) {
		c, prefix, ok := code(e)
		if !ok || c == "" {
			return
		}
		found++
		where := pos.String()
		if prefix {
			n := 0
			for _, info := range Codes {
				if strings.HasPrefix(string(info.Code), string(c)) {
					n++
				}
			}
			if n == 0 {
				t.Errorf("%s: no code of Codes starts with %q", where, c)
			}
			return
		}
		info, ok := Lookup(c)
		if !ok {
			t.Errorf("%s: error code %q is not declared in api.Codes (api/codes.go)", where, c)
			return
		}
		if want, ok := sentinelStatus[sentinel]; ok && want != info.Status && sentinelExceptions[c] != want {
			t.Errorf("%s: code %s with prsm.%s answers %d, the table says %d: fix one, or list it in sentinelExceptions",
				where, c, sentinel, want, info.Status)
		}
	}
	eachGoFile(t, func(_ string, f *ast.File, fset *token.FileSet) {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				switch name := calleeName(n.Fun); {
				case name == "Errorf" && len(n.Args) > 1 && isPrsmErrorf(n.Fun, f.Name.Name):
					sentinel := ""
					if sel, ok := n.Args[0].(*ast.SelectorExpr); ok {
						sentinel = sel.Sel.Name
					} else if id, ok := n.Args[0].(*ast.Ident); ok {
						sentinel = id.Name
					}
					check(fset.Position(n.Pos()), n.Args[1], sentinel)
				case name == "apiError" && len(n.Args) > 0:
					check(fset.Position(n.Pos()), n.Args[0], "")
				}
			case *ast.KeyValueExpr:
				if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Code" {
					check(fset.Position(n.Pos()), n.Value, "")
				}
			case *ast.BinaryExpr:
				if n.Op != token.EQL && n.Op != token.NEQ {
					return true
				}
				for _, pair := range [][2]ast.Expr{{n.X, n.Y}, {n.Y, n.X}} {
					if sel, ok := pair[0].(*ast.SelectorExpr); ok && sel.Sel.Name == "Code" {
						check(fset.Position(n.Pos()), pair[1], "")
					}
				}
			}
			return true
		})
	})
	if found < 50 {
		t.Errorf("found %d error codes in the module: the scan misses them", found)
	}
}

// eachGoFile calls fn with every Go file of the module but tests (and
// testdata, node_modules and other modules), parsed, and its path from
// the module's root.
func eachGoFile(t *testing.T, fn func(rel string, f *ast.File, fset *token.FileSet)) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", ".git":
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, filepath.ToSlash(rel), src, 0)
		if err != nil {
			return err
		}
		fn(filepath.ToSlash(rel), f, fset)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// calleeName is the name a call calls: f of f(...) and of x.f(...).
func calleeName(fun ast.Expr) string {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

// isPrsmErrorf says whether fun is prsm.Errorf (or Errorf in package
// prsm), not fmt.Errorf or t.Errorf.
func isPrsmErrorf(fun ast.Expr, pkg string) bool {
	switch f := fun.(type) {
	case *ast.Ident:
		return pkg == "prsm"
	case *ast.SelectorExpr:
		x, ok := f.X.(*ast.Ident)
		return ok && x.Name == "prsm"
	}
	return false
}

// TestCodeNames checks each constant's name is its code's, in Go's case.
func TestCodeNames(t *testing.T) {
	var bad []string
	for name, v := range codeConsts(t) {
		want := "Code"
		for _, w := range strings.Split(string(v), "_") {
			switch w {
			case "id", "json", "csrf":
				want += strings.ToUpper(w)
			default:
				want += strings.ToUpper(w[:1]) + w[1:]
			}
		}
		if name != want {
			bad = append(bad, name+" should be "+want)
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}
