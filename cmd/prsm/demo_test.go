//go:build unix

package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	stdsync "sync"
	"syscall"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/server"
)

// demoRun is one `prsm demo` process, in its own process group as a
// terminal's foreground job is, so that a signal to the group is Ctrl-C.
type demoRun struct {
	t        *testing.T
	cmd      *exec.Cmd
	prsmHome string
	tmp      string // the demo's TMPDIR: its scratch dir is made in there

	mu      stdsync.Mutex
	out     strings.Builder
	lines   chan string   // stdout, line by line; closed at EOF
	exited  chan struct{} // closed when the process has exited
	waitErr error         // its exit, once exited is closed
}

func startDemo(t *testing.T, args ...string) *demoRun {
	t.Helper()
	root := t.TempDir()
	d := &demoRun{
		t:        t,
		prsmHome: filepath.Join(root, "prsm"),
		tmp:      filepath.Join(root, "tmp"),
		lines:    make(chan string, 256),
		exited:   make(chan struct{}),
	}
	home := filepath.Join(root, "home")
	for _, dir := range []string{home, d.tmp} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(home, ".gitconfig")
	if err := os.WriteFile(cfg, []byte("[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d.cmd = exec.Command(prsmBinary(t), append([]string{"demo"}, args...)...)
	d.cmd.Env = append(os.Environ(),
		"HOME="+home, "PRSM_HOME="+d.prsmHome, "TMPDIR="+d.tmp,
		"GIT_CONFIG_GLOBAL="+cfg, "GIT_CONFIG_NOSYSTEM=1",
		"GORACE=atexit_sleep_ms=0", "BROWSER=false")
	d.cmd.Dir = root
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := d.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d.cmd.Stderr = &lockedWriter{mu: &d.mu, w: &d.out}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			d.mu.Lock()
			d.out.WriteString(sc.Text() + "\n")
			d.mu.Unlock()
			d.lines <- sc.Text()
		}
		io.Copy(io.Discard, stdout)
		close(d.lines)
		d.waitErr = d.cmd.Wait()
		close(d.exited)
	}()
	t.Cleanup(func() {
		// Whatever the test did: no demo, no server left behind.
		syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-d.exited:
		case <-time.After(10 * time.Second):
		}
		stopServers(d.prsmHome)
	})
	return d
}

type lockedWriter struct {
	mu *stdsync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (d *demoRun) output() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.out.String()
}

// waitLine reads stdout until a line matches re and returns its submatches.
func (d *demoRun) waitLine(re string) []string {
	d.t.Helper()
	rx := regexp.MustCompile(re)
	timeout := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-d.lines:
			if !ok {
				d.t.Fatalf("prsm demo ended before printing a line matching %q; output:\n%s", re, d.output())
			}
			if m := rx.FindStringSubmatch(l); m != nil {
				return m
			}
		case <-timeout:
			d.t.Fatalf("no line matching %q within 60s; output:\n%s", re, d.output())
		}
	}
}

// wait waits for the demo to exit and returns its exit code.
func (d *demoRun) wait() int {
	d.t.Helper()
	go func() {
		for range d.lines {
		}
	}()
	select {
	case <-d.exited:
		var ee *exec.ExitError
		if errors.As(d.waitErr, &ee) {
			return ee.ExitCode()
		}
		if d.waitErr != nil {
			d.t.Fatal(d.waitErr)
		}
		return 0
	case <-time.After(60 * time.Second):
		d.t.Fatalf("prsm demo did not exit within 60s after the signal; output:\n%s", d.output())
		return -1
	}
}

// ctrlC sends SIGINT to the demo's process group, as a terminal does.
func (d *demoRun) ctrlC() {
	d.t.Helper()
	if err := syscall.Kill(-d.cmd.Process.Pid, syscall.SIGINT); err != nil {
		d.t.Fatal(err)
	}
}

// serverInfo waits for the demo's server.json and returns it.
func (d *demoRun) serverInfo() (*api.Info, string) {
	d.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		files, _ := filepath.Glob(filepath.Join(d.prsmHome, "projects", "*", server.InfoFile))
		if len(files) == 1 {
			if info, err := server.ReadInfo(filepath.Dir(files[0])); err == nil {
				return info, filepath.Dir(files[0])
			}
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("no server.json under %s within 60s; output:\n%s", d.prsmHome, d.output())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// scratchDirs lists the demo's scratch dirs in its TMPDIR.
func (d *demoRun) scratchDirs() []string {
	m, _ := filepath.Glob(filepath.Join(d.tmp, "prsm-demo-*"))
	return m
}

// assertGone checks that nothing of the demo is left: no scratch dir, no
// project dir, no server process, nothing listening on its address.
func (d *demoRun) assertGone(info *api.Info, projectDir string) {
	d.t.Helper()
	if m := d.scratchDirs(); len(m) != 0 {
		d.t.Errorf("scratch dirs left in TMPDIR: %v", m)
	}
	if projectDir != "" {
		if _, err := os.Stat(projectDir); !errors.Is(err, os.ErrNotExist) {
			d.t.Errorf("the demo's project dir %s is still there (%v)", projectDir, err)
		}
	}
	if info != nil {
		if alive(info.PID) {
			d.t.Errorf("the demo's server (pid %d) still runs", info.PID)
		}
		if c, err := net.DialTimeout("tcp", info.Addr, time.Second); err == nil {
			c.Close()
			d.t.Errorf("something still listens on the demo server's address %s", info.Addr)
		}
	}
}

// TestDemoCtrlC: without --keep, prsm demo serves until Ctrl-C, then stops
// its server and removes its scratch repository and its state.
func TestDemoCtrlC(t *testing.T) {
	d := startDemo(t)
	ws := d.waitLine(`^  workspace  (.+)$`)[1]
	scratch := d.waitLine(`^The demo server runs until you press Ctrl-C; then it stops and (.+) is removed\.$`)[1]
	d.waitLine(`^\(Run .prsm demo --keep. to keep both\.\)$`)
	if filepath.Dir(ws) != scratch || filepath.Dir(scratch) != mustEval(t, d.tmp) {
		t.Fatalf("workspace %s is not in the scratch dir %s under TMPDIR %s", ws, scratch, d.tmp)
	}
	info, projectDir := d.serverInfo()
	if _, err := os.Stat(filepath.Join(ws, ".git")); err != nil {
		t.Fatalf("the scratch repository is not there while the demo runs: %v", err)
	}
	if !alive(info.PID) {
		t.Fatalf("the demo's server (pid %d) is not running", info.PID)
	}
	// The page and the API answer while the demo waits.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl := liveClient(ctx, t, projectDir)
	sessions, err := cl.Sessions(ctx, "")
	if err != nil || len(sessions) != 1 {
		t.Fatalf("the demo server's sessions: %v, %v", sessions, err)
	}
	if recs, err := cl.Changes(ctx, sessions[0].ID, "", ""); err != nil || len(recs) != 8 {
		t.Fatalf("the demo session's changes: %d, %v", len(recs), err)
	}

	d.ctrlC()
	if code := d.wait(); code != 0 {
		t.Fatalf("prsm demo exited %d after Ctrl-C; output:\n%s", code, d.output())
	}
	if out := d.output(); !strings.Contains(out, "stopping the demo server and removing "+scratch) {
		t.Errorf("no goodbye in the output:\n%s", out)
	}
	d.assertGone(info, projectDir)
}

// TestDemoCtrlCWhileSettingUp: a Ctrl-C before the demo is ready leaves
// nothing behind either: not its server, not its scratch repository.
func TestDemoCtrlCWhileSettingUp(t *testing.T) {
	for _, when := range []string{"scratch dir made", "server started"} {
		t.Run(when, func(t *testing.T) {
			d := startDemo(t)
			var info *api.Info
			var projectDir string
			if when == "server started" {
				info, projectDir = d.serverInfo()
			} else {
				for deadline := time.Now().Add(60 * time.Second); len(d.scratchDirs()) == 0; time.Sleep(time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("no scratch dir within 60s; output:\n%s", d.output())
					}
				}
			}
			d.ctrlC()
			code := d.wait()
			t.Logf("exit %d; output:\n%s", code, d.output())
			if code == 0 && !strings.Contains(d.output(), "stopping the demo server") {
				t.Errorf("exit 0 without having stopped")
			}
			if info == nil {
				// The signal may have come before or after the server started.
				files, _ := filepath.Glob(filepath.Join(d.prsmHome, "projects", "*"))
				for _, f := range files {
					if i, err := server.ReadInfo(f); err == nil {
						t.Errorf("server.json left: %+v", i)
					}
				}
				if len(files) > 0 {
					t.Errorf("project dirs left: %v", files)
				}
			}
			d.assertGone(info, projectDir)
		})
	}
}

// TestDemoKeep: with --keep the demo returns at once and leaves its
// scratch repository and its server in place.
func TestDemoKeep(t *testing.T) {
	d := startDemo(t, "--keep")
	ws := d.waitLine(`^  workspace  (.+)$`)[1]
	if code := d.wait(); code != 0 {
		t.Fatalf("prsm demo --keep exited %d; output:\n%s", code, d.output())
	}
	if _, err := os.Stat(filepath.Join(ws, ".git")); err != nil {
		t.Fatalf("--keep removed the scratch repository: %v", err)
	}
	info, projectDir := d.serverInfo()
	if !alive(info.PID) {
		t.Fatalf("--keep stopped the server (pid %d)", info.PID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	liveClient(ctx, t, projectDir)
	if !strings.Contains(d.output(), "prsm stop --workspace "+ws) {
		t.Errorf("--keep does not say how to stop the server:\n%s", d.output())
	}
}

// liveClient is a client of the server that projectDir's server.json names,

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The demo's hints name a prsm a shell runs: "prsm" only when the prsm
// on PATH is this binary, else this binary's path (issue 44, item 9).
func TestSelfCommand(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	if cmd, onPath := selfCommand(); onPath || !filepath.IsAbs(strings.Trim(cmd, "'")) {
		t.Errorf("no prsm on PATH: got %q, %v; want this binary's absolute path", cmd, onPath)
	} else if out, err := exec.Command(strings.Trim(cmd, "'"), "-test.run=^$").CombinedOutput(); err != nil {
		t.Errorf("%s does not run: %v\n%s", cmd, err, out)
	}
	bin := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, "prsm")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	if cmd, onPath := selfCommand(); cmd != "prsm" || !onPath {
		t.Errorf("this binary on PATH: got %q, %v; want prsm, true", cmd, onPath)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "prsm"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", other)
	if cmd, onPath := selfCommand(); cmd == "prsm" || onPath {
		t.Errorf("another prsm on PATH: got %q, %v; want this binary's path", cmd, onPath)
	}
}
