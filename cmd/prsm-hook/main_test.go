package main

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents"
)

// TestDepsLean checks that prsm-hook links neither the store (sqlite), the
// git layer (go-git), the HTTP server (echo), prsm's engine nor net/http
// and crypto/tls: their package initialisation and the size they add are
// what made a hook process slow (net/http alone cost 0.65 ms of a 2.65 ms
// start; the hook speaks to the server through internal/wire).
func TestDepsLean(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	const mod = "github.com/prsm-dev/prsm"
	allowed := map[string]bool{mod: true, mod + "/api": true, mod + "/hook": true,
		mod + "/internal/safepath": true, mod + "/internal/wire": true, mod + "/cmd/prsm-hook": true,
		mod + "/agents": true, mod + "/agents/agent": true,
		// the one atomic writer (an agent's settings), and what it needs
		mod + "/sync": true, mod + "/internal/bigfile": true, mod + "/sync/linediff": true,
		// what differs per system: a server's liveness, a call state's lock
		mod + "/internal/osproc": true}
	for _, name := range agents.Names() {
		allowed[mod+"/agents/"+name] = true // each agent's folder
	}
	seen := 0
	for _, p := range strings.Fields(string(out)) {
		for _, heavy := range []string{"modernc.org/sqlite", "github.com/go-git/", "github.com/labstack/echo", "github.com/spf13/cobra", "encoding/gob",
			"net/http", "crypto/tls", "crypto/x509"} {
			if p == heavy || strings.HasPrefix(p, strings.TrimSuffix(heavy, "/")+"/") {
				t.Errorf("prsm-hook depends on %s", p)
			}
		}
		if p != mod && !strings.HasPrefix(p, mod+"/") {
			continue
		}
		seen++
		if !allowed[p] {
			t.Errorf("prsm-hook depends on %s; it should need only prsm, api, hook, the agents (registry, agent and the agent folders), safepath, wire, osproc and sync (the atomic writer)", p)
		}
	}
	if seen == 0 {
		t.Fatalf("go list named none of prsm's packages:\n%s", out)
	}
	// net (and net/textproto, which imports it) links the C library into
	// a build with cgo on, for a resolver a loopback address never needs.
	for _, p := range strings.Fields(string(out)) {
		if p == "net" || p == "net/textproto" || p == "runtime/cgo" {
			t.Errorf("prsm-hook depends on %s: a plain go build of it would load libc at every start", p)
		}
	}
}

// TestPlainBuildStatic: `go install ./cmd/prsm-hook`, with cgo on as it is
// by default where a C compiler is, gives a static binary as `make install`
// does (issue 44, item 16): no program interpreter, no shared library.
func TestPlainBuildStatic(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "prsm-hook")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("prsm-hook has a %v program header: it is linked dynamically", p.Type)
		}
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		t.Errorf("prsm-hook needs shared libraries %v", libs)
	}
}

// buildBoth builds prsm and prsm-hook side by side, as make install puts
// them.
func buildBoth(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	for _, pkg := range []string{"../prsm", "."} {
		name := "prsm"
		if pkg == "." {
			name = "prsm-hook"
		}
		if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, name), pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	return bin
}

func gitRepo(t *testing.T) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "ws")
	for _, args := range [][]string{{"init", "-q", ws}, {"-C", ws, "commit", "-q", "--allow-empty", "-m", "init"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return ws
}

// run runs a binary in dir with stdin and the test's environment.
func runIn(t *testing.T, dir, stdin, bin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	return code, out.String(), errb.String()
}

// The lean binary does what `prsm hook claude` does: a Write's Pre and Post
// in a session's worktree become a record; a workspace path is moved onto
// the worktree (the answer on stdout); a stopped server is started through
// the prsm binary beside it; a session found only through
// $PRSM_SESSION_ID is found through `prsm hook locate`; an event outside
// every session does nothing.
func TestLeanHookRecords(t *testing.T) {
	home := t.TempDir()
	t.Setenv("PRSM_HOME", home)
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, "gitconfig"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_AUTHOR_NAME", "t")
	t.Setenv("GIT_AUTHOR_EMAIL", "t@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "t")
	t.Setenv("GIT_COMMITTER_EMAIL", "t@example.com")
	t.Setenv("PRSM_SESSION_ID", "")
	t.Setenv("PRSM_WORKSPACE", "")
	bin := buildBoth(t)
	prsmBin, lean := filepath.Join(bin, "prsm"), filepath.Join(bin, "prsm-hook")
	ws := gitRepo(t)
	code, out, errs := runIn(t, ws, "", prsmBin, "session", "start", "--name", "lean", "--json")
	if code != 0 {
		t.Fatalf("session start: %d %s", code, errs)
	}
	t.Cleanup(func() { runIn(t, ws, "", prsmBin, "stop") })
	var s prsm.Session
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("session start: %v %s", err, out)
	}
	wt := s.WorktreePath
	event := func(name, id, file, content string) string {
		b, _ := json.Marshal(map[string]any{"session_id": "c1", "cwd": wt, "hook_event_name": name, "tool_name": "Write",
			"tool_use_id": id, "permission_mode": "bypassPermissions", "tool_input": map[string]string{"file_path": file, "content": content}})
		return string(b)
	}
	write := func(id, file, content string) {
		t.Helper()
		code, out, errs := runIn(t, wt, event("PreToolUse", id, file, content), lean, "claude")
		if code != 0 {
			t.Fatalf("Pre %s: exit %d %s", id, code, errs)
		}
		if out != "" {
			var ans struct {
				HookSpecificOutput struct {
					UpdatedInput struct {
						FilePath string `json:"file_path"`
					} `json:"updatedInput"`
				} `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal([]byte(out), &ans); err != nil {
				t.Fatalf("Pre %s answer %q: %v", id, out, err)
			}
			file = ans.HookSpecificOutput.UpdatedInput.FilePath
		}
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, out, errs := runIn(t, wt, event("PostToolUse", id, file, content), lean, "claude"); code != 0 || out != "" {
			t.Fatalf("Post %s: exit %d %q %s", id, code, out, errs)
		}
	}
	write("toolu_lean1", filepath.Join(wt, "a.txt"), "a\n")
	// The workspace's own path: moved onto the worktree.
	write("toolu_lean2", filepath.Join(ws, "b.txt"), "b\n")
	// The server stopped: prsm-hook has prsm start it.
	if code, _, errs := runIn(t, ws, "", prsmBin, "stop"); code != 0 {
		t.Fatalf("stop: %s", errs)
	}
	write("toolu_lean3", filepath.Join(wt, "c.txt"), "c\n")
	// Found through $PRSM_SESSION_ID only: cwd is elsewhere.
	elsewhere := t.TempDir()
	t.Setenv("PRSM_SESSION_ID", s.ID)
	t.Setenv("PRSM_WORKSPACE", ws)
	ev := func(name string) string {
		b, _ := json.Marshal(map[string]any{"cwd": elsewhere, "hook_event_name": name, "tool_name": "Bash",
			"tool_use_id": "toolu_lean4", "tool_input": map[string]string{"command": "echo d > d.txt"}})
		return string(b)
	}
	if code, _, errs := runIn(t, elsewhere, ev("PreToolUse"), lean, "claude"); code != 0 {
		t.Fatalf("Pre via env: %d %s", code, errs)
	}
	if err := os.WriteFile(filepath.Join(wt, "d.txt"), []byte("d\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runIn(t, elsewhere, ev("PostToolUse"), lean, "claude"); code != 0 {
		t.Fatalf("Post via env: %d %s", code, errs)
	}
	t.Setenv("PRSM_SESSION_ID", "")
	// Outside every session: nothing, exit 0.
	if code, out, errs := runIn(t, elsewhere, ev("PreToolUse"), lean, "claude"); code != 0 || out != "" || errs != "" {
		t.Fatalf("outside: %d %q %q", code, out, errs)
	}
	code, out, errs = runIn(t, ws, "", prsmBin, "changes", "--session", s.ID, "--json")
	if code != 0 {
		t.Fatalf("changes: %s", errs)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("changes: %v %s", err, out)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, r["tool_call_id"].(string)+" "+r["rel_path"].(string))
	}
	if want := "toolu_lean1 a.txt,toolu_lean2 b.txt,toolu_lean3 c.txt,toolu_lean4:0 d.txt"; strings.Join(ids, ",") != want {
		t.Fatalf("records %v, want %s", ids, want)
	}
	// Every file reached the workspace, b.txt through the worktree.
	for _, f := range []string{"a.txt", "b.txt", "c.txt", "d.txt"} {
		if b, err := os.ReadFile(filepath.Join(ws, f)); err != nil || string(b) != f[:1]+"\n" {
			t.Errorf("workspace %s: %q %v", f, b, err)
		}
	}
}

// prsm-hook --version says its version, not "unknown agent" (issue 44,
// item 14).
func TestVersion(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"--version"}, strings.NewReader(""), &out, &errb); code != 0 || errb.Len() > 0 {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if !strings.HasPrefix(out.String(), "prsm-hook version ") {
		t.Fatalf("stdout = %q, want prsm-hook version ...", out.String())
	}
}
