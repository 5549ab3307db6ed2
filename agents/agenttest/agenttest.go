// Package agenttest holds what the agents' tests share: the recorded hook
// events in cmd/prsm/testdata (which the CLI's scripts replay too).
package agenttest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Testdata is cmd/prsm/testdata/NAME: "hooks" (Claude Code's events),
// "hooks-codex", ...
func Testdata(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "cmd", "prsm", "testdata", name)
}

// Payload reads a fixture (a name in testdata/hooks, or a path) with cwd
// put in for @CWD@.
func Payload(path, cwd string) ([]byte, error) {
	if !strings.ContainsRune(path, filepath.Separator) {
		path = filepath.Join(Testdata("hooks"), path+".json")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	q, err := json.Marshal(cwd)
	if err != nil {
		return nil, err
	}
	return bytes.ReplaceAll(b, []byte("@CWD@"), q[1:len(q)-1]), nil
}
