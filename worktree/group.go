package worktree

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	stdsync "sync"

	"github.com/prsm-dev/prsm/internal/osproc"
)

// Every git call runs in a process group of its own, so that ending it
// ends what it started too (a filter, the checkout `git worktree add`
// runs). A call that runs out of time or is cancelled gets SIGTERM, on
// which git removes its lock files, and after the runner's wait delay
// whatever is left of the group gets SIGKILL. git leaves its temporary
// object files on any signal (a pack it was streaming a large file into:
// objects/pack/tmp_pack_*), so those the group had open when it was
// stopped are removed too: found by name in its open files, never by a
// pattern in the directory, where another git of the user's may be
// writing its own.

// group is one git call's process group.
type group struct {
	cmd   *exec.Cmd
	mu    stdsync.Mutex
	temps []string // git's temporary object files the group had open when stopped
	ended bool     // stopped by Cancel
}

// inGroup makes cmd start in a process group of its own; one made by
// exec.CommandContext is stopped as a group when its context ends.
func inGroup(cmd *exec.Cmd) *group {
	g := &group{cmd: cmd}
	osproc.Group(cmd)
	if cmd.Cancel != nil { // set by exec.CommandContext
		cmd.Cancel = g.stop
	}
	return g
}

// stop notes the git temporary files the group holds open, then asks
// it to end (SIGTERM).
func (g *group) stop() error {
	pid := g.cmd.Process.Pid
	temps := openTemps(pid)
	g.mu.Lock()
	g.temps, g.ended = temps, true
	g.mu.Unlock()
	if err := osproc.StopGroup(pid, false); err != nil {
		if errors.Is(err, osproc.ErrGone) {
			return os.ErrProcessDone
		}
		return err
	}
	return nil
}

// finish, once the call's Wait returned, kills what is left of a
// stopped group and removes the temporary files it had open.
func (g *group) finish() {
	g.mu.Lock()
	temps, ended := g.temps, g.ended
	g.mu.Unlock()
	if !ended {
		return
	}
	// The group's id stays taken while any of it lives: this reaches
	// nothing else.
	osproc.StopGroup(g.cmd.Process.Pid, true)
	for _, p := range temps {
		os.Remove(p)
	}
}

// kill ends the whole group at once (a Proc that does not exit).
func (g *group) kill() {
	if g.cmd.Process != nil {
		osproc.StopGroup(g.cmd.Process.Pid, true)
	}
}

// openTemps lists git's temporary object files that the processes of
// process group pgid hold open, read from /proc (Linux). Elsewhere it
// finds none, and such files stay, as git leaves them, for git gc.
func openTemps(pgid int) []string {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", p.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold anything, so
		// the fields are read after its last ')'.
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name()))
			if err == nil && gitTemp(target) {
				out = append(out, target)
			}
		}
	}
	return out
}

// gitTemp reports whether p is one of git's temporary object files: a
// tmp_pack_, tmp_idx_, tmp_rev_ or tmp_obj_ file in an object store
// (objects/, objects/pack/ or a loose object's objects/xx/).
func gitTemp(p string) bool {
	if !filepath.IsAbs(p) || strings.HasSuffix(p, " (deleted)") {
		return false
	}
	name := filepath.Base(p)
	temp := false
	for _, pre := range []string{"tmp_pack_", "tmp_idx_", "tmp_rev_", "tmp_obj_"} {
		temp = temp || strings.HasPrefix(name, pre)
	}
	if !temp {
		return false
	}
	dir := filepath.Dir(p)
	return filepath.Base(dir) == "objects" || filepath.Base(filepath.Dir(dir)) == "objects"
}
