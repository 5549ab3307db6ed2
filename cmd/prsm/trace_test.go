package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// traceSchema is the Agent Trace record schema (testdata/agent-trace).
func traceSchema(dir string) (*jsonschema.Schema, error) {
	f, err := os.Open(filepath.Join(dir, "testdata", "agent-trace", "trace-record.schema.json"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("trace-record.schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("trace-record.schema.json")
}

// testDir is the package's directory, where the tests start.
var testDir, _ = os.Getwd()

// validTraces checks each JSON value in data (one record, or a list of
// them under "records", or a stream of either) against the schema, and
// returns how many it checked.
func validTraces(s *jsonschema.Schema, data []byte) (int, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	n := 0
	for dec.More() {
		var v any
		if err := dec.Decode(&v); err != nil {
			return n, err
		}
		recs := []any{v}
		if m, ok := v.(map[string]any); ok {
			if list, ok := m["records"].([]any); ok {
				recs = list
			}
		}
		for _, r := range recs {
			if err := s.Validate(r); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// cmdValidTrace is `validtrace FILE`: every Agent Trace record in FILE is
// valid by the spec's schema, and there is at least one.
func cmdValidTrace(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: validtrace FILE")
	}
	s, err := traceSchema(testDir)
	ts.Check(err)
	n, err := validTraces(s, []byte(ts.ReadFile(args[0])))
	if neg {
		if err == nil && n > 0 {
			ts.Fatalf("%s holds %d valid trace records", args[0], n)
		}
		return
	}
	if err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
	if n == 0 {
		ts.Fatalf("%s holds no trace record", args[0])
	}
}

// TestTraceSchemaRefuses shows validtrace can fail: records that break
// the schema are refused.
func TestTraceSchemaRefuses(t *testing.T) {
	s, err := traceSchema(testDir)
	if err != nil {
		t.Fatal(err)
	}
	good := `{"version":"0.1.0","id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"2026-01-23T14:30:00Z","files":[{"path":"a","conversations":[{"url":"prsm://session/x/call/y","ranges":[{"start_line":1,"end_line":2}]}]}]}`
	if n, err := validTraces(s, []byte(good)); err != nil || n != 1 {
		t.Fatalf("good record: %d, %v", n, err)
	}
	for _, bad := range []string{
		`{"version":"0.1","id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"2026-01-23T14:30:00Z","files":[]}`,
		`{"version":"0.1.0","id":"not-a-uuid","timestamp":"2026-01-23T14:30:00Z","files":[]}`,
		`{"version":"0.1.0","id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"yesterday","files":[]}`,
		`{"version":"0.1.0","id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"2026-01-23T14:30:00Z","files":[{"path":"a","conversations":[{"ranges":[{"start_line":0,"end_line":2}]}]}]}`,
		`{"version":"0.1.0","id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"2026-01-23T14:30:00Z","files":[{"path":"a","conversations":[{"contributor":{"type":"robot"},"ranges":[]}]}]}`,
	} {
		if _, err := validTraces(s, []byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}
