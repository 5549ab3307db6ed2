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
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/hook"
	"github.com/prsm-dev/prsm/internal/osproc"
	"github.com/prsm-dev/prsm/internal/safepath"
	"github.com/prsm-dev/prsm/worktree"
)

// project is the workspace a command acts on and where its state lives.
type project struct {
	repo *worktree.Repo
	dir  string // PRSM_HOME/projects/<identity>
	// here is the tree the command runs in, for paths relative to the
	// current directory: the workspace, or a session's worktree.
	here string
}

func (a *app) project(ctx context.Context) (*project, error) {
	dir, err := a.workspaceDir()
	if err != nil {
		return nil, err
	}
	if a.workspace == "" {
		// Inside a session's worktree (an agent running prsm there): the
		// workspace is the one the session belongs to, and the session
		// is the one meant.
		if p, sid, err := worktreeProject(ctx, dir); err != nil || p != nil {
			a.inSession = sid
			return p, err
		}
	}
	repo, ok := worktree.Find(nil, dir)
	if !ok {
		if repo, err = worktree.Discover(ctx, nil, dir); err != nil {
			return nil, err
		}
	}
	home, err := prsm.Home()
	if err != nil {
		return nil, err
	}
	return &project{repo: repo, dir: prsm.ProjectDir(home, repo.Identity)}, nil
}

// worktreeProject is the project of the session whose worktree holds dir,
// and that session's id; nil when dir is in no session's worktree.
func worktreeProject(ctx context.Context, dir string) (*project, string, error) {
	home, err := prsm.Home()
	if err != nil {
		return nil, "", err
	}
	t := hook.SessionOfPath(home, dir)
	if t == nil {
		return nil, "", nil
	}
	t.Workspace = os.Getenv("PRSM_WORKSPACE")
	// The adapter's search, keeping the worktree.Repo it found.
	found := map[string]*worktree.Repo{}
	adapter := &hook.Adapter{Discover: func(ctx context.Context, dir string) (*hook.Repo, error) {
		repo, err := worktree.Discover(ctx, nil, dir)
		if err != nil {
			return nil, err
		}
		found[repo.Root] = repo
		return &hook.Repo{Root: repo.Root, CommonDir: repo.CommonDir, Identity: repo.Identity}, nil
	}}
	root, err := adapter.WorkspaceRoot(ctx, t)
	repo := found[root]
	if err != nil {
		return nil, "", fmt.Errorf("%s is the worktree of session %s, and %v", dir, t.SessionID, err)
	}
	return &project{repo: repo, dir: t.ProjectDir, here: safepath.Real(t.Worktree)}, t.SessionID, nil
}

// ensureDirs creates the project dir (and PRSM_HOME) private to the user.
func (p *project) ensureDirs() error {
	projects := filepath.Dir(p.dir)
	for _, d := range []string{filepath.Dir(projects), projects, p.dir} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return fmt.Errorf("create %s: %w", d, err)
			}
		}
	}
	return os.Chmod(p.dir, 0o700)
}

// connect finds the workspace's server through server.json, starting one in
// the background when none runs.
func (a *app) connect(ctx context.Context) (*client.Client, *project, error) {
	p, err := a.project(ctx)
	if err != nil {
		return nil, nil, err
	}
	a.proj = p
	if _, c, ok := client.LiveServer(ctx, p.dir); ok {
		return c, p, nil
	}
	_, c, err := a.startBackground(ctx, p, "")
	return c, p, err
}

// selfPath is how this binary can run itself again. os.Executable would name
// the test binary under testscript, so argv[0] is resolved first.
func selfPath() string {
	arg0 := os.Args[0]
	if !strings.ContainsRune(arg0, filepath.Separator) {
		if p, err := exec.LookPath(arg0); err == nil {
			if abs, err := filepath.Abs(p); err == nil {
				return abs
			}
		}
	} else if abs, err := filepath.Abs(arg0); err == nil {
		return abs
	}
	exe, _ := os.Executable()
	return exe
}

// startBackground starts `prsm serve` detached from this process (its own
// session, output in server.log) and waits until it answers.
func (a *app) startBackground(ctx context.Context, p *project, addr string) (*api.Info, *client.Client, error) {
	if err := p.ensureDirs(); err != nil {
		return nil, nil, err
	}
	logPath := filepath.Join(p.dir, "server.log")
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, err
	}
	defer logf.Close()
	args := []string{"serve", "--workspace", p.repo.Root}
	if addr != "" {
		args = append(args, "--addr", addr)
	}
	cmd := exec.Command(selfPath(), args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	osproc.Detach(cmd)
	cmd.Dir = p.repo.Root
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start prsm server: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(30 * time.Second)
	for {
		if info, c, ok := client.LiveServer(ctx, p.dir); ok {
			return info, c, nil
		}
		select {
		case err := <-exited:
			// Another server may have won the race for the lock.
			if info, c, ok := client.LiveServer(ctx, p.dir); ok {
				return info, c, nil
			}
			return nil, nil, fmt.Errorf("prsm server exited (%v): %s", err, logTail(logPath))
		case <-deadline:
			return nil, nil, fmt.Errorf("prsm server did not become ready in 30s; see %s", logPath)
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
