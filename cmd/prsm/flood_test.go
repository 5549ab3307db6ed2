package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/server"
)

// The descriptor flood, scaled down: a local process without the
// token opens 600 connections to the real `prsm serve` (a process of its
// own), each sending GET /healthz or nothing and holding on. The server's
// descriptors stay within its cap of unauthenticated connections (128)
// over what it held before, and `prsm status`, the CLI's own connection,
// succeeds while the flood holds on.
func TestDescriptorFlood(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts descriptors in /proc")
	}
	const flood, maxUntrusted = 600, 128 // server's defaultMaxUntrusted
	home := testgit.Env(t)
	ws := testgit.Init(t, "ws")
	testgit.Write(t, ws, "a.txt", "a\n", 0o644)
	testgit.Git(t, ws, "add", "-A")
	testgit.Git(t, ws, "commit", "-qm", "init")

	var log bytes.Buffer
	cmd := exec.Command("prsm", "serve", "--workspace", ws)
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	var info *api.Info
	for deadline := time.Now().Add(time.Minute); info == nil; {
		if files, _ := filepath.Glob(filepath.Join(home, "projects", "*", server.InfoFile)); len(files) == 1 {
			if i, err := server.ReadInfo(filepath.Dir(files[0])); err == nil && i.PID == cmd.Process.Pid {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				if client.New(i).Healthz(ctx) == nil {
					info = i
				}
				cancel()
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("prsm serve exited: %v\n%s", err, log.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("prsm serve did not answer in a minute:\n%s", log.String())
		}
	}
	fds := func() int {
		t.Helper()
		ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	before := fds()

	conns := make([]net.Conn, 0, flood)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < flood; i++ {
		c, err := net.Dial("tcp", info.Addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
		if i%2 == 0 {
			if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: "+info.Addr+"\r\n\r\n"); err != nil {
				t.Fatalf("connection %d: %v", i, err)
			}
		}
	}

	// The CLI, while every flood connection is held open on this side.
	st := exec.Command("prsm", "status")
	st.Dir = ws
	st.Env = cmd.Env
	if out, err := st.CombinedOutput(); err != nil || !strings.Contains(string(out), ws) {
		t.Fatalf("prsm status during the flood: %v\n%s", err, out)
	}
	// The server lets go of what it does not keep; wait for that, bounded.
	limit := before + maxUntrusted + 16
	n := fds()
	for deadline := time.Now().Add(time.Minute); n > limit && time.Now().Before(deadline); n = fds() {
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("server descriptors: %d before, %d with %d connections held open by a flood", before, n, flood)
	if n > limit {
		t.Fatalf("the server holds %d descriptors during a flood of %d connections, want at most %d (%d before)", n, flood, limit, before)
	}
}
