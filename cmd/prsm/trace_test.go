package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// traceCheck builds cmd/prsm/internal/tracecheck, the Agent Trace record schema
// (testdata/agent-trace) checker, as dir/tracecheck. It is a program of
// its own so that the test binary, which every prsm a script runs is,
// does not pay the schema library's init.
func traceCheck(dir string) (string, error) {
	bin := filepath.Join(dir, "tracecheck")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	cmd := exec.Command("go", "build", "-o", bin, "github.com/prsm-dev/prsm/cmd/prsm/internal/tracecheck")
	cmd.Dir = testDir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build tracecheck: %v\n%s", err, out)
	}
	return bin, nil
}

// testDir is the package's directory, where the tests start.
var testDir, _ = os.Getwd()

// validTraces checks each JSON value in data (one record, or a list of
// them under "records", or a stream of either) against the schema, with
// the checker bin: how many it checked, and refused, the schema's
// reason for the first it refused. err is a checker that did not run.
func validTraces(bin string, data []byte) (n int, refused, err error) {
	cmd := exec.Command(bin, filepath.Join(testDir, "testdata", "agent-trace", "trace-record.schema.json"), "-")
	cmd.Stdin = bytes.NewReader(data)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	n, convErr := strconv.Atoi(strings.TrimSpace(stdout.String()))
	var ee *exec.ExitError
	switch {
	case runErr == nil && convErr == nil:
		return n, nil, nil
	case errors.As(runErr, &ee) && ee.ExitCode() == 1 && convErr == nil:
		return n, errors.New(strings.TrimSpace(stderr.String())), nil
	}
	return 0, nil, fmt.Errorf("tracecheck: %v %v: %s", runErr, convErr, stderr.String())
}

// cmdValidTrace is `validtrace FILE`: every Agent Trace record in FILE is
// valid by the spec's schema, and there is at least one.
func cmdValidTrace(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: validtrace FILE")
	}
	bin, err := traceCheck(ts.MkAbs(".bin"))
	ts.Check(err)
	n, refused, err := validTraces(bin, []byte(ts.ReadFile(args[0])))
	ts.Check(err)
	if neg {
		if refused == nil && n > 0 {
			ts.Fatalf("%s holds %d valid trace records", args[0], n)
		}
		return
	}
	if refused != nil {
		ts.Fatalf("%s: %v", args[0], refused)
	}
	if n == 0 {
		ts.Fatalf("%s holds no trace record", args[0])
	}
}

// TestTraceSchemaRefuses shows validtrace can fail: records that break
// the schema are refused.
func TestTraceSchemaRefuses(t *testing.T) {
	bin, err := traceCheck(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	good := `{"version":"0.1.0","id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"2026-01-23T14:30:00Z","files":[{"path":"a","conversations":[{"url":"prsm://session/x/call/y","ranges":[{"start_line":1,"end_line":2}]}]}]}`
	if n, refused, err := validTraces(bin, []byte(good)); err != nil || refused != nil || n != 1 {
		t.Fatalf("good record: %d, %v %v", n, refused, err)
	}
	for _, bad := range []string{
		`{"version":"0.1","id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"2026-01-23T14:30:00Z","files":[]}`,
		`{"version":"0.1.0","id":"not-a-uuid","timestamp":"2026-01-23T14:30:00Z","files":[]}`,
		`{"version":"0.1.0","id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"yesterday","files":[]}`,
		`{"version":"0.1.0","id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"2026-01-23T14:30:00Z","files":[{"path":"a","conversations":[{"ranges":[{"start_line":0,"end_line":2}]}]}]}`,
		`{"version":"0.1.0","id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"2026-01-23T14:30:00Z","files":[{"path":"a","conversations":[{"contributor":{"type":"robot"},"ranges":[]}]}]}`,
	} {
		if _, refused, err := validTraces(bin, []byte(bad)); err != nil || refused == nil {
			t.Errorf("accepted %s (%v)", bad, err)
		}
	}
}
