package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

func root(t *testing.T) string {
	t.Helper()
	r, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The checked-in generated files (the TypeScript, and docs/reference.md's
// table of error codes) are what the generator writes now: a change to a
// Go type, a route or an error code of the API without `go generate ./api`
// fails here.
func TestGeneratedFilesCurrent(t *testing.T) {
	r := root(t)
	files, err := GenerateAll(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(r, f.path))
		if err != nil {
			t.Fatalf("%v: run go generate ./api", err)
		}
		if !bytes.Equal(got, f.content) {
			t.Errorf("%s is stale: run go generate ./api", f.path)
		}
	}
}

// One TypeScript file, imported by both clients: no copy of it anywhere
// else in the module.
func TestOneGeneratedFile(t *testing.T) {
	r := root(t)
	for _, dir := range []string{"web/src", "extension/src"} {
		matches, err := filepath.Glob(filepath.Join(r, dir, "*.gen.ts"))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range matches {
			if rel, _ := filepath.Rel(r, m); filepath.ToSlash(rel) != output {
				t.Errorf("%s: the generated TypeScript is %s alone; import it from there", rel, output)
			}
		}
	}
}

// tsField is one field of a TypeScript interface of the generated file.
type tsField struct {
	optional bool
	typ      string
}

var (
	ifaceRE = regexp.MustCompile(`(?m)^export interface (\w+) \{\n((?:.*\n)*?)\}\n`)
	fieldRE = regexp.MustCompile(`(?m)^  (\w+)(\??): (.+);$`)
)

// parseTS reads the interfaces of a generated file, independently of the
// generator's own model.
func parseTS(t *testing.T, src string) map[string]map[string]tsField {
	t.Helper()
	out := map[string]map[string]tsField{}
	for _, m := range ifaceRE.FindAllStringSubmatch(src, -1) {
		fields := map[string]tsField{}
		for _, f := range fieldRE.FindAllStringSubmatch(m[2], -1) {
			fields[f[1]] = tsField{optional: f[2] == "?", typ: f[3]}
		}
		out[m[1]] = fields
	}
	return out
}

// fill sets every field of v to a value that is not its zero value (one
// element in a slice or map, a pointer to a filled value), so that its JSON
// has every field the type can send.
func fill(v reflect.Value, depth int) {
	if depth > 8 {
		return
	}
	switch v.Type() {
	case timeType:
		v.Set(reflect.ValueOf(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)))
		return
	case rawType:
		v.Set(reflect.ValueOf(json.RawMessage(`{"k":1}`)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}

func keysOf(t *testing.T, v any) map[string]json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%T: %v", v, err)
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// The generated TypeScript says what the server really sends: each
// interface names exactly the fields of its Go type's JSON (a value with
// every field set), marks optional exactly the fields its zero value leaves
// out, and lets be null exactly the fields its zero value writes as null.
// It reads the checked-in file, not the generator's model.
func TestTypeScriptMatchesJSON(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root(t), output))
	if err != nil {
		t.Fatal(err)
	}
	ifaces := parseTS(t, string(src))
	for _, w := range types {
		typ := reflect.TypeOf(w.v)
		name := w.name
		if name == "" {
			name = typ.Name()
		}
		ts, ok := ifaces[name]
		if !ok {
			t.Errorf("%s: no interface %s in %s", typ, name, output)
			continue
		}
		full := reflect.New(typ)
		fill(full.Elem(), 0)
		sent := keysOf(t, full.Interface())
		if got, want := sortedKeys(ts), sortedKeys(sent); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: TypeScript fields %v, JSON fields %v", name, got, want)
		}
		zero := keysOf(t, reflect.New(typ).Interface())
		for _, k := range sortedKeys(ts) {
			f := ts[k]
			raw, present := zero[k]
			if f.optional == present {
				t.Errorf("%s.%s: optional %v in TypeScript, but the zero value's JSON has it: %v", name, k, f.optional, present)
			}
			null := present && string(raw) == "null"
			canNull := strings.HasSuffix(f.typ, " | null") || f.typ == "unknown"
			if null && !canNull {
				t.Errorf("%s.%s: the zero value's JSON has null, TypeScript says %s", name, k, f.typ)
			}
			if !null && strings.HasSuffix(f.typ, " | null") {
				t.Errorf("%s.%s: TypeScript says %s, but the zero value's JSON has %s", name, k, f.typ, raw)
			}
		}
	}
}

// Every exported struct type of package api is generated, and every one of
// package prsm is generated or said to be off the wire: a new answer type
// cannot be forgotten.
func TestEveryWireTypeGenerated(t *testing.T) {
	r := root(t)
	have := map[string]bool{}
	for _, w := range types {
		typ := reflect.TypeOf(w.v)
		pkg := typ.PkgPath()
		have[pkg[strings.LastIndex(pkg, "/")+1:]+"."+typ.Name()] = true
	}
	for _, dir := range []string{r, filepath.Join(r, "api")} {
		names, err := structTypes(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(names) == 0 {
			t.Fatalf("no struct types in %s", dir)
		}
		for _, n := range names {
			if !have[n] && notOnWire[n] == "" {
				t.Errorf("%s is not in tsgen's types (or notOnWire)", n)
			}
		}
	}
}

// clients are the TypeScript modules that talk to the server.
var clients = []string{"extension/src", "web/src"}

// handPath is a string that starts with a path of the API, in quotes or
// backquotes.
var handPath = regexp.MustCompile("['\"`]/(sessions|file-changes|jobs|hooks|healthz|status|events|gc|shutdown|ui|login|assets)\\b")

// The clients build every path with the generated paths: none writes one
// by hand.
func TestClientsUseGeneratedPaths(t *testing.T) {
	r := root(t)
	for _, dir := range clients {
		files, err := filepath.Glob(filepath.Join(r, dir, "*.ts*"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if rel, _ := filepath.Rel(r, f); filepath.ToSlash(rel) == output {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(b), "\n") {
				if m := handPath.FindString(line); m != "" {
					t.Errorf("%s:%d: %s... written by hand: use paths (api.gen.ts)", f, i+1, m)
				}
			}
		}
	}
}
