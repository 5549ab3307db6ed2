package worktree

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Proc is a git command that keeps running, reading requests on its
// standard input and answering each on its standard output (git
// check-ignore --stdin): one process for many questions, instead of a
// process start for each. It runs with the runner's argument
// list and environment, as Run's calls do; each exchange has a deadline
// instead of the whole process.
type Proc struct {
	cmd    *exec.Cmd
	group  *group
	in     io.WriteCloser
	out    *os.File
	r      *bufio.Reader
	stderr *lockedBuffer
	once   sync.Once
}

// lockedBuffer is stderr as git writes it and an error reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 64<<10 {
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Start starts c to keep running. GIT_FLUSH=1 makes git answer each
// request at once rather than when its output buffer fills.
func (r *Runner) Start(c *Cmd) (*Proc, error) {
	argv, err := r.argv(c)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	noFilters, err := r.noFilters(ctx, c)
	cancel()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(r.bin(), argv...)
	cmd.Env = Environ(append(append(noFilters, c.env...), "GIT_FLUSH=1")...)
	g := inGroup(cmd)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = pw
	p := &Proc{cmd: cmd, group: g, in: in, out: pr, r: bufio.NewReader(pr), stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, &Error{Args: c.Args(), ExitCode: -1, Err: err}
	}
	pw.Close() // git holds its end
	return p, nil
}

// StartIn is Start in dir, the workspace or a session worktree, as RunIn
// runs its calls.
func (r *Repo) StartIn(dir string, c *Cmd) (*Proc, error) {
	if dir == r.Root || realPath(dir) == r.Root {
		return r.git.Start(c.Dir(dir))
	}
	l, err := r.Linked(dir)
	if err != nil {
		return nil, err
	}
	return r.git.Start(c.In(l))
}

// Send writes a request to the process.
func (p *Proc) Send(b []byte) error {
	if _, err := p.in.Write(b); err != nil {
		return p.failed(err)
	}
	return nil
}

// ReadField reads the process's output up to the next delim, without
// it, waiting until deadline at most. After an error the process is of
// no more use: Close it.
func (p *Proc) ReadField(delim byte, deadline time.Time) ([]byte, error) {
	if err := p.out.SetReadDeadline(deadline); err != nil {
		return nil, p.failed(err)
	}
	b, err := p.r.ReadBytes(delim)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			err = fmt.Errorf("%w: no answer in time", ErrTimeout)
		}
		return nil, p.failed(err)
	}
	return b[:len(b)-1], nil
}

// failed wraps err with what git said on its standard error.
func (p *Proc) failed(err error) error {
	return &Error{Args: p.cmd.Args[1:], ExitCode: -1, Stderr: p.stderr.String(), Err: err}
}

// Close ends the process: its input closed, so git exits, and killed
// with its process group if it does not within a second.
func (p *Proc) Close() {
	p.once.Do(func() {
		p.in.Close()
		done := make(chan struct{})
		go func() {
			p.cmd.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(time.Second):
			p.group.kill()
			<-done
		}
		p.out.Close()
	})
}

// Pid is the process's id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }
