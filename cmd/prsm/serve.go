package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/feedback"
	"github.com/prsm-dev/prsm/internal/bigfile"
	"github.com/prsm-dev/prsm/server"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/tracker"
)

func (a *app) serveCmd() *cobra.Command {
	var addr string
	var detach bool
	c := &cobra.Command{
		Use:     "serve [--workspace DIR] [--addr 127.0.0.1:0] [--detach]",
		Example: "  prsm serve --detach\n  prsm serve --workspace ~/src/app",
		Short:   "Serve the workspace: sessions, changes and the API (one server per workspace)",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			// A bad address is a usage error before anything else, with
			// --detach too and whether or not a server runs.
			if err := server.CheckAddr(addr); err != nil {
				return err
			}
			p, err := a.project(ctx)
			if err != nil {
				return err
			}
			if info, _, ok := client.LiveServer(ctx, p.dir); ok {
				if detach {
					fmt.Fprintf(a.stdio.Out, "prsm server for %s already runs at http://%s (pid %d)\n", info.Workspace, info.Addr, info.PID)
					return nil
				}
				return alreadyRunning(info)
			}
			if detach {
				info, _, err := a.startBackground(ctx, p, addr)
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stdio.Out, "prsm server for %s at http://%s (pid %d)\n", info.Workspace, info.Addr, info.PID)
				return nil
			}
			return a.serve(ctx, p, addr)
		},
	}
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "loopback address to listen on")
	c.Flags().BoolVar(&detach, "detach", false, "run the server in the background and return")
	return c
}

func alreadyRunning(info *api.Info) error {
	return prsm.Errorf(prsm.ErrConflict, "server_running", "use it as it is, or stop it with `prsm stop`",
		"a prsm server for %s already runs at http://%s (pid %d)", info.Workspace, info.Addr, info.PID)
}

// memoryBound is the server's soft memory limit (debug.SetMemoryLimit)
// unless GOMEMLIMIT sets one: past it, Go collects its garbage sooner
// instead of letting the heap grow to twice what is live. An agent's bulk
// work (200k new files recorded at once) holds about 130 MB live at its
// peak; with this bound, and SQLite's memory beside it, the server's
// resident set stays under 256 MB (232-237 MB measured). Live memory past
// the bound is not refused: the collector then runs more, at most half
// the CPU.
const memoryBound = 192 << 20

func boundMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryBound)
	}
}

// startProfiling writes a CPU profile to $PRSM_CPUPROFILE and an
// execution trace to $PRSM_TRACE for the server's whole life, and the
// heap at its peaks to $PRSM_HEAPPROFILE (heapPeaks), when set: how the
// performance figures of make bench were explained.
func startProfiling() (stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if p := os.Getenv("PRSM_CPUPROFILE"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			return nil, fmt.Errorf("PRSM_CPUPROFILE: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("PRSM_CPUPROFILE: %w", err)
		}
		stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
	}
	if p := os.Getenv("PRSM_HEAPPROFILE"); p != "" {
		stops = append(stops, heapPeaks(p))
	}
	if p := os.Getenv("PRSM_TRACE"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			stop()
			return nil, fmt.Errorf("PRSM_TRACE: %w", err)
		}
		if err := trace.Start(f); err != nil {
			f.Close()
			stop()
			return nil, fmt.Errorf("PRSM_TRACE: %w", err)
		}
		stops = append(stops, func() { trace.Stop(); f.Close() })
	}
	return stop, nil
}

// heapPeaks writes a heap profile to path each time the live heap (as the
// last collection found it) passes its highest yet by 8 MB (looked at
// every 100 ms): the last one written shows where the memory of the
// server's peak went. It returns the stop.
func heapPeaks(path string) func() {
	done := make(chan struct{})
	go func() {
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var high uint64
		for {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			metrics.Read(live)
			if live[0].Value.Kind() != metrics.KindUint64 || live[0].Value.Uint64() < high+8<<20 {
				continue
			}
			high = live[0].Value.Uint64()
			if f, err := os.Create(path); err == nil {
				pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
		}
	}()
	return func() { close(done) }
}

// defaultIdleExit is how long a server with no active session and no
// client waits before it stops (PRSM_IDLE_EXIT); the next command starts
// it again.
const defaultIdleExit = 30 * time.Minute

// idleExit is PRSM_IDLE_EXIT (a duration; 0 never stops), else the default.
func idleExit() (time.Duration, error) {
	v := os.Getenv("PRSM_IDLE_EXIT")
	if v == "" {
		return defaultIdleExit, nil
	}
	if v == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("PRSM_IDLE_EXIT=%q: want a duration such as 30m (0: never)", v)
	}
	return d, nil
}

// unused waits until the server has had no active session and no request
// in flight for idle (true), or ctx ends (false).
func unused(ctx context.Context, eng *engine.Engine, act *server.Activity, idle time.Duration) bool {
	return every(ctx, min(max(idle/4, 100*time.Millisecond), time.Minute), func() bool {
		if act.Idle() < idle {
			return false
		}
		active, err := eng.Sessions(ctx, prsm.SessionActive)
		return err == nil && len(active) == 0
	})
}

// workspaceCheck is how often a running server looks for its workspace.
const workspaceCheck = 2 * time.Second

// workspaceGone waits until the workspace at root, or its repository's
// git directory, is gone (true: a server of a deleted workspace serves
// nobody, and would run on forever), or ctx ends (false).
func workspaceGone(ctx context.Context, root, gitDir string) bool {
	return every(ctx, workspaceCheck, func() bool {
		for _, dir := range []string{root, gitDir} {
			if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
				return true
			}
		}
		return false
	})
}

// every checks cond each period until it holds (true) or ctx ends (false).
func every(ctx context.Context, period time.Duration, cond func() bool) bool {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			if cond() {
				return true
			}
		}
	}
}

// gcInterval is how often a running server applies retention.
const gcInterval = time.Hour

func (a *app) serve(ctx context.Context, p *project, addr string) error {
	if err := p.ensureDirs(); err != nil {
		return err
	}
	lock, err := server.AcquireLock(p.dir)
	// A server killed a moment ago may still hold the lock through a child
	// it was forking (the lock goes with the child's exec): wait a little
	// before calling it a second server.
	for tries := 0; errors.Is(err, server.ErrRunning) && tries < 40; tries++ {
		if info, _, ok := client.LiveServer(ctx, p.dir); ok {
			return alreadyRunning(info)
		}
		sleep(ctx, 50)
		lock, err = server.AcquireLock(p.dir)
	}
	if errors.Is(err, server.ErrRunning) {
		return fmt.Errorf("another prsm server for %s is starting; try again in a moment", p.repo.Root)
	}
	if err != nil {
		return err
	}
	defer lock.Release()

	log := slog.New(slog.NewTextHandler(a.stdio.Err, nil))
	boundMemory()
	stopProfile, err := startProfiling()
	if err != nil {
		return err
	}
	defer stopProfile()
	db, err := store.Open(filepath.Join(p.dir, "prsm.db"))
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer db.Close()
	eng := engine.New(p.repo, db, p.dir, log)
	defer eng.Close() // before the store closes (deferred earlier)
	eng.NoAutoCheckpoints = os.Getenv("PRSM_AUTO_CHECKPOINTS") == "0"
	// PRSM_MAX_WATCHES caps the directories watched (PRSM_WATCH_BUDGET
	// is its older name); a worktree past it is scanned instead.
	for _, name := range []string{"PRSM_WATCH_BUDGET", "PRSM_MAX_WATCHES"} {
		if b := os.Getenv(name); b != "" {
			n, err := strconv.Atoi(b)
			if err != nil || n < 0 {
				return fmt.Errorf("%s=%q: want a number of directories", name, b)
			}
			eng.WatchBudget = n
		}
	}
	if b := os.Getenv("PRSM_MAX_FILE_SIZE"); b != "" {
		n, err := parseSize(b)
		if err != nil || n <= 0 {
			return fmt.Errorf("PRSM_MAX_FILE_SIZE=%q: want a size such as 100M or 2G", b)
		}
		bigfile.SetLimit(n)
	}
	if b := os.Getenv("PRSM_LOOK_BUDGET"); b != "" {
		n, err := parseSize(b)
		if err != nil || n <= 0 {
			return fmt.Errorf("PRSM_LOOK_BUDGET=%q: want a size such as 256M", b)
		}
		tracker.SetLookBudget(n)
	}
	// Watch first, then reconcile: changes made while no server ran become
	// records, and from then on the watcher reports every change.
	if err := eng.StartWatching(ctx); err != nil {
		log.Warn("file watcher unavailable; scanning with git status", "err", err)
	}
	defer eng.StopWatching()
	if _, err := eng.Reconcile(ctx); err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	// A warm worktree being made when serving ends is cut off (the next
	// start clears what is left): the server's end does not wait for it.
	warmCtx, stopWarming := context.WithCancel(ctx)
	defer stopWarming()       // before eng.Close waits for its work
	eng.StartWarming(warmCtx) // PRSM_WARM_WORKTREES=0: none
	// Retention at start: the defaults (30 ended sessions, 200 automatic
	// checkpoints each) and PRSM_STORE_BUDGET when set (e.g. 500M).
	gcReq := api.GCRequest{}
	if b := os.Getenv("PRSM_STORE_BUDGET"); b != "" {
		if n, err := parseSize(b); err == nil {
			gcReq.BudgetBytes = n
		} else {
			log.Warn("ignoring bad PRSM_STORE_BUDGET", "value", b)
		}
	}
	if _, err := eng.GC(ctx, gcReq); err != nil {
		log.Warn("retention at start failed", "err", err)
	}
	// And from then on every hour, so a long-running server keeps the
	// store under its budget too.
	gcCtx, stopGC := context.WithCancel(ctx)
	gcDone := make(chan struct{})
	defer func() { stopGC(); <-gcDone }() // before the store closes
	go func() {
		defer close(gcDone)
		t := time.NewTicker(gcInterval)
		defer t.Stop()
		for {
			select {
			case <-gcCtx.Done():
				return
			case <-t.C:
				if _, err := eng.GC(gcCtx, gcReq); err != nil && gcCtx.Err() == nil {
					log.Warn("periodic retention failed", "err", err)
				}
			}
		}
	}()
	idle, err := idleExit()
	if err != nil {
		return err
	}
	act := server.NewActivity()
	// The review's feedback to the agents: the notice of a reject or a
	// rewind made without a note is on unless PRSM_FEEDBACK_NOTICES=0;
	// keeping a Claude Code turn going at its Stop with what it has not
	// heard is off unless PRSM_FEEDBACK_ON_STOP=1.
	fb := &feedback.Queue{DB: db, NoNotices: os.Getenv("PRSM_FEEDBACK_NOTICES") == "0",
		OnStop: os.Getenv("PRSM_FEEDBACK_ON_STOP") == "1"}
	srv, err := server.New(eng, server.Config{Addr: addr, ProjectDir: p.dir, Activity: act, Feedback: fb})
	if err != nil {
		return err
	}
	log.Info("prsm serving", "workspace", p.repo.Root, "addr", "http://"+srv.Addr(), "pid", os.Getpid())
	serveCtx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	go func() {
		if workspaceGone(serveCtx, p.repo.Root, p.repo.CommonDir) {
			log.Info("the workspace is gone; stopping", "workspace", p.repo.Root)
			stopServing()
		}
	}()
	if idle > 0 {
		go func() {
			if unused(serveCtx, eng, act, idle) {
				log.Info("no active session and no client; stopping", "idle", idle)
				stopServing()
			}
		}()
	}
	serveErr := srv.Serve(serveCtx)
	stopWarming()
	// Checkpoints answered a moment ago reach the repository before the
	// store closes (a crash leaves them to the next start).
	if err := eng.FlushObjects(context.WithoutCancel(ctx)); err != nil {
		log.Error("write checkpoint objects", "err", err)
	}
	if err := eng.SaveStats(context.WithoutCancel(ctx)); err != nil {
		log.Warn("store stat cache", "err", err)
	}
	if serveErr != nil {
		return serveErr
	}
	log.Info("prsm stopped")
	return nil
}

func (a *app) stopCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "stop",
		Example: "  prsm stop",
		Short:   "Stop the workspace's server",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			p, err := a.project(ctx)
			if err != nil {
				return err
			}
			info, c, ok := client.LiveServer(ctx, p.dir)
			if !ok {
				fmt.Fprintln(a.stdio.Out, "no prsm server runs for this workspace")
				return nil
			}
			if err := c.Shutdown(ctx); err != nil {
				return err
			}
			// Wait until it is gone, so the next command starts afresh:
			// it lets go of its lock last, after server.json and its last
			// work (checkpoint objects, the stat cache, the store's
			// close), and a server started before would find it held.
			if !lockFreed(ctx, p.dir, 2*time.Minute) {
				fmt.Fprintf(a.stdio.Out, "prsm server (pid %d) stopped serving and is still finishing its work; it exits on its own\n", info.PID)
				return nil
			}
			fmt.Fprintf(a.stdio.Out, "stopped prsm server (pid %d)\n", info.PID)
			return nil
		},
	}
}

// lockFreed waits up to wait for the server of the project at dir to let
// go of its lock (the last thing it does), and reports whether it did.
func lockFreed(ctx context.Context, dir string, wait time.Duration) bool {
	for deadline := time.Now().Add(wait); ; sleep(ctx, 25) {
		l, err := server.AcquireLock(dir)
		if err == nil {
			l.Release()
			return true
		}
		if !errors.Is(err, server.ErrRunning) || time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
	}
}
