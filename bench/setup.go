package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/internal/osproc"
	"github.com/prsm-dev/prsm/server"
)

// buildPrsm builds the binary under measure from this checkout.
func buildPrsm(ctx context.Context, dir string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" || strings.TrimSpace(string(out)) == os.DevNull {
		return "", fmt.Errorf("run bench from the prsm checkout (go env GOMOD: %v)", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	bin := filepath.Join(dir, "prsm")
	// prsm-hook beside it, built as make install builds it.
	for _, pkg := range []string{"prsm", "prsm-hook"} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, pkg), "./cmd/"+pkg)
		cmd.Dir = root
		cmd.Stderr = os.Stderr
		if pkg == "prsm-hook" {
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		}
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("build %s: %w", pkg, err)
		}
	}
	return bin, nil
}

// Generated repositories: n small text files, 50 to a directory, two levels
// deep (pkg%03d/mod%02d), as source trees are; plus ten 10 KB files under
// big/ for the store-growth measure.
const filesPerDir = 50

func fileRel(i int) string {
	d := i / filesPerDir
	return fmt.Sprintf("pkg%03d/mod%02d/file%06d.txt", d/20, d%20, i)
}

func bigRel(i int) string { return fmt.Sprintf("big/b%02d.txt", i) }

func fileContent(i int, tag string) []byte {
	var b bytes.Buffer
	for l := 0; l < 30; l++ {
		fmt.Fprintf(&b, "line %d of file %d %s\n", l, i, tag)
	}
	return b.Bytes()
}

// bigContent is a 10 KB file of 200 lines; edit changes one of them.
func bigContent(i, edit int) []byte {
	var b bytes.Buffer
	for l := 0; l < 200; l++ {
		if l == edit%200 {
			fmt.Fprintf(&b, "edited line %04d of big file %02d, edit number %06d....\n", l, i, edit)
			continue
		}
		fmt.Fprintf(&b, "plain line %04d of big file %02d with some text to fill it.\n", l, i)
	}
	return b.Bytes()
}

// genRepo writes a repository of n files and commits it.
func genRepo(ctx context.Context, dir string, n int) (string, error) {
	ws := filepath.Join(dir, "workspace")
	for i := 0; i < n; i++ {
		p := filepath.Join(ws, fileRel(i))
		if i%filesPerDir == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return "", err
			}
		}
		if err := os.WriteFile(p, fileContent(i, "base"), 0o644); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(filepath.Join(ws, "big"), 0o755); err != nil {
		return "", err
	}
	for i := 0; i < 10; i++ {
		if err := os.WriteFile(filepath.Join(ws, bigRel(i)), bigContent(i, -1), 0o644); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(filepath.Join(ws, ".gitignore"), []byte("node_modules/\n*.log\n"), 0o644); err != nil {
		return "", err
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"commit", "-q", "-m", "generated"},
	} {
		if _, err := git(ctx, ws, nil, args...); err != nil {
			return "", err
		}
	}
	return ws, nil
}

// git runs the git CLI the way the baselines do, with a clean identity.
func git(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@localhost",
		"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@localhost", "GIT_CONFIG_NOSYSTEM=1")
	cmd.Env = append(cmd.Env, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// server is one prsm serve process on a workspace.
type prsmServer struct {
	cmd     *exec.Cmd
	home    string
	project string
	info    *api.Info
	cl      *client.Client
	log     string
}

// startServer starts prsm serve on ws with PRSM_HOME=home and env added.
func startServer(ctx context.Context, bin, home, ws string, env ...string) (*prsmServer, error) {
	logPath := filepath.Join(home, "server.log")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, "serve", "--workspace", ws)
	cmd.Env = append(append(os.Environ(), "PRSM_HOME="+home), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	osproc.Group(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &prsmServer{cmd: cmd, home: home, log: logPath}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if err := ctx.Err(); err != nil {
			s.stop()
			return nil, err
		}
		files, _ := filepath.Glob(filepath.Join(home, "projects", "*", server.InfoFile))
		if len(files) == 1 {
			if info, err := server.ReadInfo(filepath.Dir(files[0])); err == nil && info.PID == cmd.Process.Pid {
				s.project, s.info, s.cl = filepath.Dir(files[0]), info, client.New(info)
				if s.cl.Healthz(ctx) == nil {
					return s, nil
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.stop()
	b, _ := os.ReadFile(logPath)
	return nil, fmt.Errorf("prsm serve did not come up in 60 s:\n%s", b)
}

func (s *prsmServer) stop() {
	if s == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		osproc.StopGroup(s.cmd.Process.Pid, true)
		<-done
	}
}

// rssMB reads the server's resident set size and its peak, in MiB.
func (s *prsmServer) rssMB() (rss, peak float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		var kb float64
		switch {
		case strings.HasPrefix(l, "VmRSS:"):
			fmt.Sscanf(strings.TrimPrefix(l, "VmRSS:"), "%f", &kb)
			rss = kb / 1024
		case strings.HasPrefix(l, "VmHWM:"):
			fmt.Sscanf(strings.TrimPrefix(l, "VmHWM:"), "%f", &kb)
			peak = kb / 1024
		}
	}
	if rss == 0 {
		return 0, 0, errors.New("no VmRSS in /proc status")
	}
	return rss, peak, nil
}

// storeBytes is the size of the store: the database with its WAL.
func (s *prsmServer) storeBytes() int64 {
	var n int64
	for _, f := range []string{"prsm.db", "prsm.db-wal", "prsm.db-shm"} {
		if fi, err := os.Stat(filepath.Join(s.project, f)); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// dirBytes is the size of every file below dir.
func dirBytes(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}
