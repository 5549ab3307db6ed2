package testenv

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/internal/osproc"
)

// Server is a prsm server process: its pid and the workspace it serves.
type Server struct {
	PID       int
	Workspace string
}

// ServersUnder lists the running prsm servers (processes whose arguments
// are `serve --workspace DIR`, as every server prsm starts in the
// background is) whose workspace lies under dir. Where there is no /proc,
// it finds none.
func ServersUnder(dir string) []Server {
	dir = filepath.Clean(dir)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var out []Server
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte("serve\x00")) {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		for i, a := range args {
			ws, ok := strings.CutPrefix(a, "--workspace=")
			if !ok && a == "--workspace" && i+1 < len(args) {
				ws, ok = args[i+1], true
			}
			if ok && (ws == dir || strings.HasPrefix(ws, dir+string(filepath.Separator))) && pid != os.Getpid() {
				out = append(out, Server{PID: pid, Workspace: ws})
				break
			}
		}
	}
	return out
}

// StopsItsServers fails tb if, when it ends, a prsm server it started
// still runs: one whose workspace is under the test's temporary
// directories, or its subtests' (theirs are named after it). Such a server
// is then stopped (SIGTERM, then SIGKILL), so that it does not run on once
// the test is over. Call it before the test starts any server; it is for
// tests that do not run in parallel with others of the same name prefix.
func StopsItsServers(tb testing.TB) {
	tb.Helper()
	// testing names a test's directory after it, with digits after.
	root := filepath.Dir(tb.TempDir())
	prefix := filepath.Join(filepath.Dir(root), strings.TrimRight(filepath.Base(root), "0123456789"))
	tb.Cleanup(func() {
		dirs, _ := filepath.Glob(prefix + "*")
		var left []Server
		for _, d := range dirs {
			left = append(left, ServersUnder(d)...)
		}
		for _, s := range left {
			tb.Errorf("the test left a prsm server running: pid %d, workspace %s", s.PID, s.Workspace)
			osproc.Stop(s.PID, false)
			for deadline := time.Now().Add(30 * time.Second); osproc.Alive(s.PID); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					osproc.Stop(s.PID, true)
					break
				}
			}
		}
	})
}
