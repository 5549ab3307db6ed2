// Command tsgen writes the TypeScript of prsm's HTTP API, from the Go that
// the server runs: the types of package api and the domain types of
// package prsm, the routes (api.Routes) as path builders, and the error
// codes (api.Codes) as the union ErrorCode. The VS Code extension and the
// review page import the one generated file, extension/src/api.gen.ts
// (the page from outside its folder: esbuild bundles it), so neither
// declares a shape or a path of the API by hand. It also writes the table
// of error codes in docs/reference.md, between its markers. `go generate
// ./api` runs it; a test fails when a generated file is stale.
//
// A field's TypeScript type follows encoding/json: the json tag's name,
// json:"-" and unexported fields left out, []byte a (base64) string,
// time.Time a string, json.RawMessage unknown, a map Record<string, T>.
// Whether a field may be missing or null is read off the JSON of the type's
// zero value, the one value where each is the case: a field it leaves out
// (omitempty) is optional (`name?: T`), a field it writes as null (a pointer,
// slice or map without omitempty) is `T | null`. A type whose own
// MarshalJSON writes an empty list as [] therefore has `T[]`, as its JSON has.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// output is the generated TypeScript file, relative to the module's root.
const output = "extension/src/api.gen.ts"

// wireType is one Go type written as a TypeScript interface.
type wireType struct {
	v    any    // a value of the type
	name string // its TypeScript name; "" means its Go name
}

// types are the types of the API, in the order they are written. Names
// change where the Go name would clash in TypeScript (Record<K, V>, the
// DOM's Range) or where SPEC.md names the type (FileChangeRecord).
var types = []wireType{
	// The domain types of package prsm on the wire.
	{v: prsm.Session{}},
	{v: prsm.Range{}, name: "LineRange"},
	{v: prsm.Hunk{}},
	{v: prsm.Record{}, name: "FileChangeRecord"},
	{v: prsm.Checkpoint{}},
	{v: prsm.Feedback{}},
	// Package api.
	{v: api.Info{}, name: "ServerInfo"},
	{v: api.Health{}},
	{v: api.OK{}},
	{v: api.ErrorBody{}},
	{v: api.StatusResponse{}},
	{v: api.HookHealth{}},
	{v: api.ConflictRef{}},
	{v: api.WatchLimit{}},
	{v: api.StartRequest{}},
	{v: api.ToolCallRequest{}},
	{v: api.ToolCallAnswer{}},
	{v: api.CompleteRequest{}},
	{v: api.Records{}},
	{v: api.AcceptRequest{}},
	{v: api.HunkRef{}},
	{v: api.HunksRequest{}},
	{v: api.ResolveRequest{}},
	{v: api.StatusEvent{}},
	{v: api.TurnRequest{}},
	{v: api.CheckpointRequest{}},
	{v: api.AnnotateRequest{}},
	{v: api.RewindRequest{}},
	{v: api.FileDiff{}},
	{v: api.CheckpointDiff{}},
	{v: api.Operation{}},
	{v: api.Conflict{}},
	{v: api.PlanDecision{}},
	{v: api.Plan{}},
	{v: api.RollbackRequest{}},
	{v: api.GCRequest{}},
	{v: api.GCReport{}},
	{v: api.LoginCodeRequest{}},
	{v: api.LoginCode{}},
	{v: api.HookToken{}},
	{v: api.WorkspaceFile{}},
	{v: api.Job{}},
	{v: api.RejectRequest{}},
	{v: api.CommentRequest{}},
	{v: api.TakeFeedbackRequest{}},
	{v: api.Delivery{}},
	{v: api.ConfirmFeedbackRequest{}},
	{v: api.Blame{}},
	{v: api.BlameLine{}},
	{v: api.BlameOrigin{}},
	{v: api.CommitRequest{}},
	{v: api.CommitReport{}},
	{v: api.PlannedCommit{}},
	{v: api.LeftOut{}},
	{v: api.Traces{}},
}

// notOnWire are the exported struct types of packages prsm and api that no
// request or answer carries, with the reason; every other one must be in
// types (TestEveryWireTypeGenerated).
var notOnWire = map[string]string{
	"prsm.ToolCall": "the server keeps tool calls; the API takes ToolCallRequest and answers ToolCallAnswer",
	"prsm.Error":    "a Go error; its JSON form is api.ErrorBody",
	"api.CodeInfo":  "the table of error codes; the TypeScript has its codes as the union ErrorCode",
	"api.Route":     "the table of routes; the TypeScript has it as ROUTES and paths",
}

// enum is a string field whose values are fixed: a TypeScript union type.
type enum struct {
	name   string
	values []string
	fields []string // Type.Field (Go names) of the fields that hold it
}

// enums are the string fields with fixed values, from the constants of
// package prsm where it has them.
var enums = []enum{
	{"ChangeType", []string{prsm.ChangeCreate, prsm.ChangeModify, prsm.ChangeDelete}, []string{"Record.ChangeType"}},
	{"RecordStatus", []string{prsm.StatusPending, prsm.StatusAccepted, prsm.StatusRejected, prsm.StatusPartial, prsm.StatusRewound},
		[]string{"Record.Status", "StatusEvent.Status", "PlanDecision.From", "PlanDecision.To"}},
	{"SyncState", []string{prsm.SyncSynced, prsm.SyncConflict, prsm.SyncPendingReview},
		[]string{"Record.SyncState", "StatusEvent.SyncState"}},
	{"SessionMode", []string{prsm.ModeAuto, prsm.ModeReview}, []string{"Session.Mode"}},
	{"SessionStatus", []string{prsm.SessionActive, prsm.SessionEnded}, []string{"Session.Status"}},
	{"CheckpointKind", []string{prsm.CheckpointAuto, prsm.CheckpointManual}, []string{"Checkpoint.Kind"}},
	{"OperationType", []string{"restore", "delete", "create"}, []string{"Operation.Type"}},
	{"ResolveHow", []string{"mine", "agent", "markers"}, []string{"ResolveRequest.How"}},
	{"JobKind", []string{api.JobRejectAll, api.JobAcceptAll, api.JobReject, api.JobDiscard, api.JobRecord}, []string{"Job.Kind"}},
	{"JobState", []string{api.JobRunning, api.JobDone, api.JobFailed}, []string{"Job.State"}},
	{"FeedbackKind", []string{prsm.FeedbackNote, prsm.FeedbackComment, prsm.FeedbackNotice}, []string{"Feedback.Kind"}},
	{"FeedbackState", []string{prsm.FeedbackQueued, prsm.FeedbackDelivering, prsm.FeedbackDelivered, prsm.FeedbackUndeliverable},
		[]string{"Feedback.State"}},
}

// events are the events of GET /events with the type of their data.
var events = []struct {
	name string
	data any
}{
	{api.EventSessionUpdated, prsm.Session{}},
	{api.EventFileChanged, prsm.Record{}},
	{api.EventFileChangeStatus, api.StatusEvent{}},
	{api.EventCheckpoint, prsm.Checkpoint{}},
	{api.EventJobProgress, api.Job{}},
}

func main() {
	check := flag.Bool("check", false, "only check that the generated files are current")
	flag.Parse()
	if err := run(*check); err != nil {
		fmt.Fprintln(os.Stderr, "tsgen:", err)
		os.Exit(1)
	}
}

func run(check bool) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	files, err := GenerateAll(root)
	if err != nil {
		return err
	}
	for _, f := range files {
		p := filepath.Join(root, f.path)
		if check {
			old, err := os.ReadFile(p)
			if err != nil || !bytes.Equal(old, f.content) {
				return fmt.Errorf("%s is stale: run go generate ./api", f.path)
			}
			continue
		}
		if err := os.WriteFile(p, f.content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// file is one generated file: its path from the module's root and its
// content.
type file struct {
	path    string
	content []byte
}

// GenerateAll returns every file tsgen writes: the TypeScript and
// docs/reference.md with its table of error codes.
func GenerateAll(root string) ([]file, error) {
	ts, err := Generate(root)
	if err != nil {
		return nil, err
	}
	ref, err := os.ReadFile(filepath.Join(root, referenceDoc))
	if err != nil {
		return nil, err
	}
	doc, err := withCodeTable(ref)
	if err != nil {
		return nil, err
	}
	return []file{{output, ts}, {referenceDoc, doc}}, nil
}

// moduleRoot is the directory of go.mod, found from the working directory
// up (go generate runs in api/, go test in internal/tsgen/).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Generate returns the TypeScript file; root is the module's root, where
// the Go sources give the doc comments.
func Generate(root string) ([]byte, error) {
	docs, err := readDocs(filepath.Join(root, "prsm.go"), filepath.Join(root, "api"))
	if err != nil {
		return nil, err
	}
	g := &gen{docs: docs, names: map[reflect.Type]string{}, enumOf: map[string]string{}}
	for _, w := range types {
		t := reflect.TypeOf(w.v)
		name := w.name
		if name == "" {
			name = t.Name()
		}
		g.names[t] = name
	}
	for _, e := range enums {
		for _, f := range e.fields {
			g.enumOf[f] = e.name
		}
	}
	g.enumOf["ErrorBody.Code"] = "ErrorCode"
	var b bytes.Buffer
	b.WriteString("// Code generated by internal/tsgen from package api and prsm's domain types; DO NOT EDIT.\n")
	b.WriteString("// Run `go generate ./api` after changing a JSON field, a route or an error code in Go.\n")
	writeCodes(&b)
	for _, e := range enums {
		quoted := make([]string, len(e.values))
		for i, v := range e.values {
			quoted[i] = "'" + v + "'"
		}
		fmt.Fprintf(&b, "\nexport type %s = %s;\n", e.name, strings.Join(quoted, " | "))
	}
	for _, w := range types {
		if err := g.writeInterface(&b, reflect.TypeOf(w.v)); err != nil {
			return nil, err
		}
	}
	b.WriteString("\n/** The events of GET /events, by type. */\nexport type PrsmEvent =\n")
	for _, ev := range events {
		fmt.Fprintf(&b, "  | { type: '%s'; data: %s }\n", ev.name, g.names[reflect.TypeOf(ev.data)])
	}
	b.Truncate(b.Len() - 1)
	b.WriteString(";\n\nexport const EVENT_TYPES: ReadonlyArray<PrsmEvent['type']> = [\n")
	for _, ev := range events {
		fmt.Fprintf(&b, "  '%s',\n", ev.name)
	}
	b.WriteString("];\n")
	writeRoutes(&b)
	return b.Bytes(), nil
}

type gen struct {
	docs   map[string]string       // Type and Type.Field (Go names) to their doc comment
	names  map[reflect.Type]string // the types written, to their TypeScript name
	enumOf map[string]string       // Type.Field to the union type it holds
}

// field is one JSON field of a struct.
type field struct {
	goName, json string
	t            reflect.Type
}

// jsonFields are t's fields as encoding/json writes them: exported, not
// json:"-", named by the tag. Embedded structs are not used on the wire and
// are refused rather than half-handled.
func jsonFields(t reflect.Type) ([]field, error) {
	var out []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Anonymous {
			return nil, fmt.Errorf("%s: embedded field %s is not supported", t, f.Name)
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		if strings.Contains(","+opts+",", ",string,") {
			return nil, fmt.Errorf("%s.%s: the ,string option is not supported", t.Name(), f.Name)
		}
		out = append(out, field{goName: f.Name, json: name, t: f.Type})
	}
	return out, nil
}

func (g *gen) writeInterface(b *bytes.Buffer, t reflect.Type) error {
	fields, err := jsonFields(t)
	if err != nil {
		return err
	}
	// What the zero value's JSON leaves out or writes as null.
	zero, err := json.Marshal(reflect.New(t).Elem().Interface())
	if err != nil {
		return fmt.Errorf("marshal zero %s: %w", t, err)
	}
	var present map[string]json.RawMessage
	if err := json.Unmarshal(zero, &present); err != nil {
		return fmt.Errorf("%s does not marshal to an object: %w", t, err)
	}
	b.WriteString("\n")
	writeDoc(b, "", g.docs[t.Name()])
	fmt.Fprintf(b, "export interface %s {\n", g.names[t])
	for _, f := range fields {
		ts, err := g.tsType(f.t)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", t.Name(), f.goName, err)
		}
		if e, ok := g.enumOf[t.Name()+"."+f.goName]; ok {
			if f.t.Kind() != reflect.String {
				return fmt.Errorf("%s.%s: enum %s on a %s", t.Name(), f.goName, e, f.t)
			}
			ts = e
		}
		raw, ok := present[f.json]
		opt := ""
		switch {
		case !ok:
			opt = "?"
		case string(raw) == "null" && ts != "unknown":
			ts += " | null"
		}
		writeDoc(b, "  ", g.docs[t.Name()+"."+f.goName])
		fmt.Fprintf(b, "  %s%s: %s;\n", f.json, opt, ts)
	}
	b.WriteString("}\n")
	return nil
}

var (
	timeType = reflect.TypeOf(time.Time{})
	rawType  = reflect.TypeOf(json.RawMessage{})
)

// tsType is the TypeScript type of a Go type's JSON, null aside.
func (g *gen) tsType(t reflect.Type) (string, error) {
	switch t {
	case timeType:
		return "string", nil // RFC 3339
	case rawType:
		return "unknown", nil
	}
	if name, ok := g.names[t]; ok {
		return name, nil
	}
	switch t.Kind() {
	case reflect.String:
		return "string", nil
	case reflect.Bool:
		return "boolean", nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number", nil
	case reflect.Pointer:
		return g.tsType(t.Elem())
	case reflect.Interface:
		return "unknown", nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "string", nil // base64
		}
		el, err := g.tsType(t.Elem())
		if err != nil {
			return "", err
		}
		return el + "[]", nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return "", fmt.Errorf("map key %s: only string keys are supported", t.Key())
		}
		el, err := g.tsType(t.Elem())
		if err != nil {
			return "", err
		}
		return "Record<string, " + el + ">", nil
	case reflect.Struct:
		return "", fmt.Errorf("struct type %s is not in tsgen's types", t)
	}
	return "", fmt.Errorf("type %s has no TypeScript form", t)
}

// writeDoc writes a Go doc comment as a JSDoc comment.
func writeDoc(b *bytes.Buffer, indent, doc string) {
	doc = strings.TrimSpace(doc)
	if doc == "" {
		return
	}
	lines := strings.Split(doc, "\n")
	if len(lines) == 1 {
		fmt.Fprintf(b, "%s/** %s */\n", indent, strings.ReplaceAll(lines[0], "*/", "* /"))
		return
	}
	fmt.Fprintf(b, "%s/**\n", indent)
	for _, l := range lines {
		l = strings.TrimRight(" * "+strings.ReplaceAll(l, "*/", "* /"), " ")
		fmt.Fprintf(b, "%s%s\n", indent, l)
	}
	fmt.Fprintf(b, "%s */\n", indent)
}

// readDocs reads the doc comments of the types and their fields from Go
// sources: files, or directories of them (test files left out).
func readDocs(paths ...string) (map[string]string, error) {
	docs := map[string]string{}
	fset := token.NewFileSet()
	for _, p := range paths {
		files := []string{p}
		if fi, err := os.Stat(p); err != nil {
			return nil, err
		} else if fi.IsDir() {
			files, _ = filepath.Glob(filepath.Join(p, "*.go"))
		}
		sort.Strings(files)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
			if err != nil {
				return nil, err
			}
			for _, d := range af.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.TYPE {
					continue
				}
				for _, s := range gd.Specs {
					ts := s.(*ast.TypeSpec)
					doc := ts.Doc
					if doc == nil && len(gd.Specs) == 1 {
						doc = gd.Doc
					}
					docs[ts.Name.Name] = doc.Text()
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					for _, fl := range st.Fields.List {
						text := fl.Doc.Text()
						if text == "" {
							text = fl.Comment.Text()
						}
						for _, n := range fl.Names {
							docs[ts.Name.Name+"."+n.Name] = text
						}
					}
				}
			}
		}
	}
	return docs, nil
}

// structTypes lists the exported struct types declared in a directory's
// Go files (tests left out), for TestEveryWireTypeGenerated.
func structTypes(dir string) ([]string, error) {
	fset := token.NewFileSet()
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			return nil, err
		}
		for _, d := range af.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				if _, ok := ts.Type.(*ast.StructType); ok && ts.Name.IsExported() {
					out = append(out, af.Name.Name+"."+ts.Name.Name)
				}
			}
		}
	}
	return out, nil
}
