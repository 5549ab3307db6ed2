package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	stdsync "sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/rogpeppe/go-internal/testscript"
)

// pty STEPS prsm ARGS...: runs prsm on a terminal of its own (a pty whose
// controlling process it is, so that Ctrl-C typed there is a SIGINT to
// it), as a person at a prompt would, and follows the steps in the file
// STEPS, one per line:
//
//	expect RE   wait (2 min at most) until what it printed since the last
//	            expect matches RE
//	send TEXT   type TEXT, a Go string without its quotes ("y\n", "\x03")
//	signal SIG  send it SIGTERM or SIGINT
//	exit N      wait (2 min at most) for it to exit with status N
//
// Everything it printed becomes the command's stdout.
func cmdPty(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || args[1] != "prsm" {
		ts.Fatalf("usage: pty STEPS prsm ARGS...")
	}
	steps, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	bin := lookIn(ts.Getenv("PATH"), "prsm")
	if bin == "" {
		ts.Fatalf("no prsm on the script's PATH")
	}
	cmd := exec.Command(bin, args[2:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = os.Environ()
	for _, k := range []string{"HOME", "PATH", "PRSM_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "GORACE", "TMPDIR"} {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 200})
	ts.Check(err)
	defer tty.Close()

	var mu stdsync.Mutex
	var out bytes.Buffer
	read := make(chan struct{}) // closed when the pty has no more to read
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			mu.Lock()
			out.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		mu.Lock()
		ts.Stdout().Write(out.Bytes())
		mu.Unlock()
	}()
	defer cmd.Process.Kill()

	seen := 0 // what an expect matched up to
	sc := bufio.NewScanner(bytes.NewReader(steps))
	for sc.Scan() {
		verb, arg, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		switch verb {
		case "", "#":
		case "expect":
			re := regexp.MustCompile(arg)
			for deadline := time.Now().Add(2 * time.Minute); ; {
				mu.Lock()
				loc := re.FindIndex(out.Bytes()[seen:])
				mu.Unlock()
				if loc != nil {
					seen += loc[1]
					break
				}
				if time.Now().After(deadline) {
					mu.Lock()
					ts.Logf("printed:\n%s", out.Bytes())
					mu.Unlock()
					ts.Fatalf("no %q in 2m", arg)
				}
				time.Sleep(10 * time.Millisecond)
			}
		case "send":
			text, err := strconv.Unquote(`"` + arg + `"`)
			ts.Check(err)
			_, err = tty.Write([]byte(text))
			ts.Check(err)
		case "signal":
			sig := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "INT": syscall.SIGINT}[arg]
			if sig == 0 {
				ts.Fatalf("unknown signal %q", arg)
			}
			ts.Check(cmd.Process.Signal(sig))
		case "exit":
			want, err := strconv.Atoi(arg)
			ts.Check(err)
			select {
			case err := <-exited:
				got := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					got = ee.ExitCode()
				} else if err != nil {
					ts.Fatalf("wait: %v", err)
				}
				if got != want {
					ts.Fatalf("prsm exited %d, want %d", got, want)
				}
				// What it printed last, up to the pty's end.
				select {
				case <-read:
				case <-time.After(30 * time.Second):
				}
			case <-time.After(2 * time.Minute):
				ts.Fatalf("prsm did not exit in 2m")
			}
		default:
			ts.Fatalf("unknown step %q", verb)
		}
	}
}

// lookIn finds name in the directories of the list path.
func lookIn(path, name string) string {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
