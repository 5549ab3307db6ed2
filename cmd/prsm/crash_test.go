package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/internal/memtest"
	"github.com/prsm-dev/prsm/internal/testenv"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/server"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/tracker"
	"github.com/prsm-dev/prsm/worktree"
)

// TestKillNine is the kill -9 harness (SPEC rule 6). It runs the real prsm
// server (this test binary, as `prsm serve`), lets four agents work through
// the HTTP API at once (edits, writes, bash-like multi-file changes with
// creations and deletions, rejects, rollbacks of the last changes; one of
// them also rewinds, another works in review mode and accepts), and kills
// the server with SIGKILL at random moments, restarting it each time. It
// asserts:
//   - at every kill, no workspace file is torn: each is absent or equals,
//     byte for byte, one of the contents the agents ever wrote for it (every
//     write is a whole new version, so a mix of two versions, a truncated
//     file or an empty one matches none);
//   - at every kill, the database passes PRAGMA integrity_check;
//   - at the end, every tool call whose complete was answered still has the
//     records it was answered with;
//   - after every step that ran against one live server, and after the
//     last restart (reconcile), each session's files in the workspace equal
//     its worktree's and every record is settled (see settled); at the end
//     no intent is left open and no temp file is left.
//
// PRSM_CRASH_KILLS sets the number of kills (50; 25 under the race
// detector, where each restart of the race-built server costs a second and
// a half, and each run's new seed picks other moments), PRSM_CRASH_SEED replays a
// seed (the choices of the agents and of the kill moments; thread timing
// still varies).
func TestKillNine(t *testing.T) {
	kills := 50
	if memtest.Race {
		kills = 25
	}
	if v := os.Getenv("PRSM_CRASH_KILLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("PRSM_CRASH_KILLS: %v", err)
		}
		kills = n
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("PRSM_CRASH_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("PRSM_CRASH_SEED: %v", err)
		}
		seed = n
	}
	t.Logf("seed %d (replay with PRSM_CRASH_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))

	h := newHarness(t)
	h.start()
	ctx := context.Background()
	// Three sessions in auto mode, the fourth in review mode.
	var sessions []*prsm.Session
	for i := 0; i < nSessions; i++ {
		mode := prsm.ModeAuto
		if i == nSessions-1 {
			mode = prsm.ModeReview
		}
		s, err := h.client().StartSession(ctx, api.StartRequest{Name: fmt.Sprintf("agent-%d", i), AgentID: fmt.Sprintf("agent-%d", i), Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
	}

	var stop atomic.Bool
	var wg stdsync.WaitGroup
	agents := make([]*agent, nSessions)
	for i, s := range sessions {
		agents[i] = &agent{h: h, s: s, dir: fmt.Sprintf("s%d", i), rng: rand.New(rand.NewPCG(rng.Uint64(), uint64(i))),
			review: s.Mode == prsm.ModeReview, rewinder: i == nSessions-2}
		wg.Add(1)
		go func(a *agent) {
			defer wg.Done()
			a.run(&stop)
		}(agents[i])
	}

	start := time.Now()
	temps := 0
	for k := 0; k < kills; k++ {
		time.Sleep(time.Duration(20+rng.IntN(400)) * time.Millisecond)
		h.kill()
		temps += h.checkNotTorn()
		h.integrityCheck()
		h.start()
		if t.Failed() {
			break
		}
	}
	// Under load the kills may leave the agents little time between
	// restarts: they go on, with no more kills, until ten tool calls are
	// answered (a generous deadline for that, not a count of kills).
	for deadline := time.Now().Add(3 * time.Minute); h.answered.Load() < 10 && time.Now().Before(deadline) && !t.Failed(); {
		time.Sleep(100 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(start)

	// Quiet now: one more crash and restart, then the final state.
	h.kill()
	h.checkNotTorn()
	h.start()
	h.checkFinal(agents)
	h.stop()
	h.integrityCheck()
	h.checkNoIntents()

	var calls, answered, accepts, rejects, rollbacks, rewinds, retries int
	for _, a := range agents {
		calls += a.calls
		accepts += a.accepts
		answered += len(a.answered)
		rejects += a.rejects
		rollbacks += a.rollbacks
		rewinds += a.rewinds
		retries += a.retries
	}
	t.Logf("%d kills survived in %s (seed %d): %d tool calls (%d answered), %d accepts, %d rejects, %d rollbacks, %d rewinds, %d calls cut off by a kill, %d temp files left by kills (cleaned at start), %d records rejected in conflict, %d restarts waited for the dead server's lock",
		h.kills, elapsed.Round(time.Millisecond), seed, calls, answered, accepts, rejects, rollbacks, rewinds, retries, temps, h.rejectConflicts, h.busyStarts)
	if answered < 10 {
		t.Errorf("only %d tool calls answered: the agents barely ran", answered)
	}
}

// harness runs the server process and knows every content written.
type harness struct {
	t       *testing.T
	ws      string
	project string
	logPath string

	mu    stdsync.Mutex
	cmd   *exec.Cmd
	waitc chan error // the server's exit
	cl    atomic.Pointer[client.Client]

	kills           int
	answered        atomic.Int64 // tool calls the agents' completes were answered with records
	busyStarts      int          // starts that found the killed server's lock still held
	rejectConflicts int          // rejects that ended in conflict (see settled)
	// epoch changes at every kill (before the signal) and start: an agent
	// step that saw it unchanged ran against one live server throughout.
	epoch atomic.Int64

	vmu      stdsync.Mutex
	versions map[string]map[string]bool // rel -> every content ever written
	absentOK map[string]bool            // rel -> may be absent
}

// nSessions is how many agents work at once, each in its own directory.
const nSessions = 4

func newHarness(t *testing.T) *harness {
	testgit.Env(t)
	testenv.StopsItsServers(t)
	ws := testgit.Init(t, "ws")
	h := &harness{t: t, ws: ws, versions: map[string]map[string]bool{}, absentOK: map[string]bool{}}
	for i := 0; i < nSessions; i++ {
		for j := 0; j < 4; j++ {
			rel := fmt.Sprintf("s%d/f%d.txt", i, j)
			content := version(rel, 0, 10)
			h.note(rel, content)
			testgit.Write(t, ws, rel, content, 0o644)
		}
		for j := 0; j < 4; j++ {
			h.absentOK[fmt.Sprintf("s%d/n%d.txt", i, j)] = true
		}
	}
	testgit.Write(t, ws, ".gitignore", "*.log\n", 0o644)
	testgit.Git(t, ws, "add", "-A")
	testgit.Git(t, ws, "commit", "-qm", "init")
	repo, err := worktree.Discover(context.Background(), nil, ws)
	if err != nil {
		t.Fatal(err)
	}
	home, err := prsm.Home()
	if err != nil {
		t.Fatal(err)
	}
	h.project = prsm.ProjectDir(home, repo.Identity)
	h.ws = repo.Root
	h.logPath = filepath.Join(t.TempDir(), "server.log")
	t.Cleanup(func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.cmd != nil {
			h.cmd.Process.Kill()
			h.cmd.Wait()
		}
		if t.Failed() {
			if b, err := os.ReadFile(h.logPath); err == nil {
				lines := strings.Split(strings.TrimSpace(string(b)), "\n")
				if len(lines) > 40 {
					lines = lines[len(lines)-40:]
				}
				t.Logf("server log (tail):\n%s", strings.Join(lines, "\n"))
			}
		}
	})
	return h
}

// version is the content of the n-th write of rel: every line carries rel
// and n, so two versions share no line and no merge can mix them.
func version(rel string, n, lines int) string {
	var b strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&b, "%s version %d line %d of %d\n", rel, n, i, lines)
	}
	return b.String()
}

func (h *harness) note(rel, content string) {
	h.vmu.Lock()
	defer h.vmu.Unlock()
	if h.versions[rel] == nil {
		h.versions[rel] = map[string]bool{}
	}
	h.versions[rel][content] = true
}

func (h *harness) noteAbsent(rel string) {
	h.vmu.Lock()
	defer h.vmu.Unlock()
	h.absentOK[rel] = true
}

func (h *harness) client() *client.Client { return h.cl.Load() }

// start runs `prsm serve` and waits until it answers.
func (h *harness) start() { h.start1(0) }

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

func (h *harness) start1(busy int) {
	h.t.Helper()
	logf, err := os.OpenFile(h.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		h.t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command("prsm", "serve", "--workspace", h.ws)
	cmd.Dir = h.ws
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		h.t.Fatalf("start prsm serve: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if info, err := server.ReadInfo(h.project); err == nil && info.PID == cmd.Process.Pid {
			c := client.New(info)
			c.HTTP.Timeout = time.Minute
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := c.Healthz(ctx)
			cancel()
			if err == nil {
				h.mu.Lock()
				h.cmd = cmd
				h.waitc = exited
				h.mu.Unlock()
				h.cl.Store(c)
				h.epoch.Add(1)
				return
			}
		}
		select {
		case err := <-exited:
			// The lock of the killed server can outlive it for an instant
			// (a child between fork and exec holds its descriptors).
			if b, _ := os.ReadFile(h.logPath); strings.Contains(lastLine(string(b)), "is starting; try again") && busy < 100 {
				busy++
				h.busyStarts++
				time.Sleep(20 * time.Millisecond)
				h.start1(busy)
				return
			}
			h.t.Fatalf("prsm serve exited: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			h.t.Fatalf("prsm serve did not answer in 60s")
		}
	}
}

// kill sends SIGKILL to the server and waits until it is gone.
func (h *harness) kill() {
	h.t.Helper()
	h.mu.Lock()
	cmd, exited := h.cmd, h.waitc
	h.cmd = nil
	h.mu.Unlock()
	if cmd == nil {
		return
	}
	h.epoch.Add(1)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		h.t.Fatalf("kill -9: %v", err)
	}
	err := <-exited
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		h.t.Fatalf("server ended with %v before the kill", err)
	}
	h.kills++
}

// stop shuts the server down normally.
func (h *harness) stop() {
	h.t.Helper()
	h.mu.Lock()
	cmd, exited := h.cmd, h.waitc
	h.cmd = nil
	h.mu.Unlock()
	if err := h.client().Shutdown(context.Background()); err != nil {
		h.t.Errorf("shutdown: %v", err)
		cmd.Process.Kill()
	}
	<-exited
}

// checkNotTorn: every workspace file is absent (where allowed) or one
// whole version. It returns how many temp files the kill left.
func (h *harness) checkNotTorn() (temps int) {
	h.t.Helper()
	h.vmu.Lock()
	defer h.vmu.Unlock()
	seen := map[string]bool{}
	filepath.WalkDir(h.ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			h.t.Errorf("walk %s: %v", p, err)
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(h.ws, p)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(d.Name(), sync.TempPrefix) {
			temps++
			return nil
		}
		if rel == ".gitignore" {
			return nil
		}
		seen[rel] = true
		b, err := os.ReadFile(p)
		if err != nil {
			h.t.Errorf("read %s: %v", rel, err)
			return nil
		}
		if !h.versions[rel][string(b)] {
			h.t.Errorf("kill %d: workspace file %s is torn: %d bytes, not one of the %d versions written:\n%.300s",
				h.kills, rel, len(b), len(h.versions[rel]), b)
		}
		return nil
	})
	for rel := range h.versions {
		if !seen[rel] && !h.absentOK[rel] {
			h.t.Errorf("kill %d: workspace file %s is missing", h.kills, rel)
		}
	}
	return temps
}

func (h *harness) openDB() *sql.DB {
	h.t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(h.project, "prsm.db")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		h.t.Fatal(err)
	}
	return db
}

// integrityCheck runs PRAGMA integrity_check on the database (the server
// is down).
func (h *harness) integrityCheck() {
	h.t.Helper()
	db := h.openDB()
	defer db.Close()
	var res string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
		h.t.Errorf("kill %d: integrity_check: %q %v", h.kills, res, err)
	}
}

func (h *harness) checkNoIntents() {
	h.t.Helper()
	db := h.openDB()
	defer db.Close()
	rows, err := db.Query("SELECT kind, payload FROM intents")
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind, payload string
		rows.Scan(&kind, &payload)
		h.t.Errorf("intent left open: %s %s", kind, payload)
	}
}

// checkFinal: after the last restart, answered tool calls keep their
// records, each session's files are the same in workspace and worktree,
// and every record is settled.
func (h *harness) checkFinal(agents []*agent) {
	h.t.Helper()
	ctx := context.Background()
	cl := h.client()
	if left := tempFilesUnder(h.ws); len(left) > 0 {
		h.t.Errorf("temp files left after restart: %v", left)
	}
	for _, a := range agents {
		if _, err := cl.Flush(ctx, a.s.ID); err != nil {
			h.t.Errorf("flush %s: %v", a.s.ID, err)
		}
		if a.review {
			// Everything still pending reaches the workspace now.
			if _, err := cl.AcceptAll(ctx, a.s.ID, ""); err != nil {
				h.t.Errorf("accept-all %s: %v", a.s.ID, err)
			}
		}
		recs, err := cl.Changes(ctx, a.s.ID, "", "")
		if err != nil {
			h.t.Fatal(err)
		}
		byID := map[string]*prsm.Record{}
		for _, r := range recs {
			byID[r.ID] = r
			if !settled(r, false, a.rewinder) {
				h.t.Errorf("session %s: record %s (%s, %s) is %s/%s, want synced", a.dir, r.ID, r.ToolName, r.RelPath, r.Status, r.SyncState)
			}
			if r.SyncState == prsm.SyncConflict && settled(r, false, a.rewinder) {
				h.rejectConflicts++
			}
		}
		for tc, ids := range a.answered {
			for _, id := range ids {
				r, ok := byID[id]
				if !ok || r.ToolCallID != tc {
					h.t.Errorf("session %s: record %s of answered tool call %s lost", a.dir, id, tc)
				}
			}
		}
		wsTree := filtered(testgit.Tree(h.t, filepath.Join(h.ws, a.dir), nil))
		wtTree := filtered(testgit.Tree(h.t, filepath.Join(a.s.WorktreePath, a.dir), nil))
		if d := testgit.Diff(wsTree, wtTree); d != "" {
			h.t.Errorf("session %s: workspace and worktree differ after restart:\n%s", a.dir, d)
		}
		if len(wsTree) == 0 {
			h.t.Errorf("session %s: no files", a.dir)
		}
	}
}

// settled: a record reached the workspace (synced) or was rejected cleanly;
// nothing else writes the workspace, so no conflict is right. Except in the
// session that rewinds: there a reject may end in conflict with nothing
// written, because after a rewind past a rollback or a reject a file can
// hold the content of a record that stays marked rejected (statuses are not
// part of checkpoints), and then the reverse merge of an earlier record of
// that file cannot take its delta out cleanly. In review mode a pending
// record waits for its accept (pending_review), and a record rejected
// before it was ever accepted stays pending_review: it never reached the
// workspace.
func settled(r *prsm.Record, review, rewinder bool) bool {
	return r.SyncState == prsm.SyncSynced || (rewinder && r.Status == prsm.StatusRejected && r.SyncState == prsm.SyncConflict) ||
		(review && r.Status == prsm.StatusPending && r.SyncState == prsm.SyncPendingReview) ||
		(r.Status == prsm.StatusRejected && r.SyncState == prsm.SyncPendingReview)
}

// filtered drops the sentinel files the watcher writes for an instant.
func filtered(m map[string]string) map[string]string {
	for k := range m {
		if strings.HasPrefix(filepath.Base(k), tracker.SentinelPrefix) {
			delete(m, k)
		}
	}
	return m
}

func tempFilesUnder(root string) []string {
	var out []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), sync.TempPrefix) {
			out = append(out, p)
		}
		return nil
	})
	return out
}
