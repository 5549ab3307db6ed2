package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	stdsync "sync"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

var measureNames = append(append([]string{"session-start", "roundtrip", "checkpoint", "rollback-100", "event-latency", "rss-10-sessions", "store-growth"},
	hookMeasureNames...), append(bulkMeasureNames, historyMeasureNames...)...)

// bench measures one repository size.
type bench struct {
	o   options
	n   int
	dir string
	bin string
	rep *report

	ws  string
	srv *prsmServer
	s   *prsm.Session // the session most measures work in
	sse *sseListener
	// next picks files no earlier edit of this run touched.
	next int
	tc   int
}

func (b *bench) want(m string) bool { return b.o.only == nil || b.o.only[m] }

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench %s: %s\n", sizeName(b.n), fmt.Sprintf(format, args...))
}

func (b *bench) close() {
	if b.sse != nil {
		b.sse.close()
	}
	b.srv.stop()
}

func (b *bench) all(ctx context.Context) error {
	b.logf("generating %d files", b.n)
	t0 := time.Now()
	ws, err := genRepo(ctx, b.dir, b.n)
	if err != nil {
		return err
	}
	b.ws = ws
	b.logf("generated in %s; starting prsm", time.Since(t0).Round(time.Millisecond))
	if b.srv, err = startServer(ctx, b.bin, filepath.Join(b.dir, "home"), ws); err != nil {
		return err
	}
	if b.want("session-start") {
		if err := b.sessionStart(ctx); err != nil {
			return fmt.Errorf("session start: %w", err)
		}
	}
	if b.s, err = b.srv.cl.StartSession(ctx, api.StartRequest{Name: "bench", AgentID: "bench"}); err != nil {
		return err
	}
	if b.sse, err = listen(ctx, b.srv); err != nil {
		return err
	}
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"roundtrip", b.roundTrip},
		{"checkpoint", b.checkpoint},
		{"rollback-100", b.rollback},
		{"rss-10-sessions", b.rss},
		{"store-growth", b.storeGrowth},
		{"hook-start", b.hookStart},
		{"toolcall-command", b.toolCallCommand},
		{"toolcall-http", b.toolCallHTTP},
	}
	for _, st := range steps {
		if !b.want(st.name) && !(st.name == "roundtrip" && b.want("event-latency")) {
			continue
		}
		t0 := time.Now()
		settle(b.srv.cmd.Process.Pid) // the setup's writeback (a 50k-file checkout) and warm-up are not the measure's
		b.logf("%s (after %s for a quiet disk and server)", st.name, time.Since(t0).Round(10*time.Millisecond))
		if err := st.fn(ctx); err != nil {
			return fmt.Errorf("%s: %w", st.name, err)
		}
	}
	return nil
}

// settle waits for a quiet disk and an idle server: everything written
// so far on its way, so a measure does not pay for the writeback of what
// came before it, nor for the server's background work (a new session's
// tree cache warm-up, object flushes). After a sync the device may still
// be busy (discards of removed worktrees, the host's own writeback), so
// it waits, up to 20 s, for the block devices' counters to stand still
// and for the server (pid, when not 0) to use at most one clock tick of
// CPU per 100 ms, for 300 ms.
func settle(pid int) {
	syncDisks()
	time.Sleep(200 * time.Millisecond)
	deadline := time.Now().Add(20 * time.Second)
	last, lastCPU, still := diskActivity(), cpuTicks(pid), 0
	for still < 3 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		now, cpu := diskActivity(), cpuTicks(pid)
		if now == last && now != "" && cpu-lastCPU <= 1 {
			still++
		} else {
			still = 0
		}
		last, lastCPU = now, cpu
	}
}

// cpuTicks is the CPU time (user and system, in clock ticks) process pid
// has used; 0 when unknown.
func cpuTicks(pid int) uint64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name (which may hold spaces) in ")".
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseUint(f[11], 10, 64)
	sy, _ := strconv.ParseUint(f[12], 10, 64)
	return u + sy
}

// diskActivity sums, over the block devices of /proc/diskstats, the
// writes, discards and flushes completed and the I/Os in flight: equal
// sums a moment apart mean a quiet disk. "" where there is no such file.
func diskActivity() string {
	b, err := os.ReadFile("/proc/diskstats")
	if err != nil {
		return ""
	}
	var writes, inflight, discards, flushes uint64
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 14 {
			continue
		}
		n := func(i int) uint64 {
			if i >= len(f) {
				return 0
			}
			v, _ := strconv.ParseUint(f[i], 10, 64)
			return v
		}
		writes += n(7)
		inflight += n(11)
		discards += n(14)
		flushes += n(18)
	}
	return fmt.Sprint(writes, inflight, discards, flushes)
}

func (b *bench) toolCallID(prefix string) string {
	b.tc++
	return fmt.Sprintf("%s-%d", prefix, b.tc)
}

func (b *bench) freshFile() int {
	i := (b.next * 7919) % b.n // spread over the tree
	b.next++
	return i
}

// edit runs one Edit tool call on file i of session s the way an agent's
// hook does: pre-tool capture, the edit, complete. It returns the time of
// the whole round trip.
func (b *bench) edit(ctx context.Context, s *prsm.Session, rel string, content []byte) (time.Duration, string, error) {
	id := b.toolCallID("edit")
	p := filepath.Join(s.WorktreePath, filepath.FromSlash(rel))
	args, _ := json.Marshal(map[string]string{"file_path": p, "old_string": "line", "new_string": "line"})
	t0 := time.Now()
	if _, err := b.srv.cl.StartToolCall(ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Edit", Args: args, Cwd: s.WorktreePath}); err != nil {
		return 0, id, err
	}
	if err := os.WriteFile(p, content, 0o644); err != nil {
		return 0, id, err
	}
	res, err := b.srv.cl.CompleteToolCall(ctx, s.ID, id, api.CompleteRequest{Result: json.RawMessage(`{"success":true}`)})
	d := time.Since(t0)
	if err != nil {
		return 0, id, err
	}
	if len(res.Records) != 1 || res.Records[0].SyncState != prsm.SyncSynced {
		return 0, id, fmt.Errorf("edit of %s: want one synced record, got %d", rel, len(res.Records))
	}
	return d, id, nil
}

// bash runs one Bash tool call that rewrites files (untimed helper).
func (b *bench) bash(ctx context.Context, s *prsm.Session, files map[string][]byte) error {
	id := b.toolCallID("bash")
	args, _ := json.Marshal(map[string]string{"command": "./generate.sh"})
	if _, err := b.srv.cl.StartToolCall(ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Bash", Args: args, Cwd: s.WorktreePath}); err != nil {
		return err
	}
	for rel, c := range files {
		if err := os.WriteFile(filepath.Join(s.WorktreePath, filepath.FromSlash(rel)), c, 0o644); err != nil {
			return err
		}
	}
	res, err := b.srv.cl.CompleteToolCall(ctx, s.ID, id, api.CompleteRequest{})
	if err != nil {
		return err
	}
	if len(res.Records) != len(files) {
		return fmt.Errorf("bash changed %d files, prsm recorded %d", len(files), len(res.Records))
	}
	return nil
}

// roundTripBlock is how many edits, then git status runs, roundTrip
// measures in a row.
const roundTripBlock = 10

// roundTrip: one Edit of one file (start, edit, complete with sync) against
// the per-call scan other tools run, on the same worktree. The SSE listener
// collects event latency on the way.
func (b *bench) roundTrip(ctx context.Context) error {
	// Warm up: the first calls load the session's state and caches.
	for i := 0; i < 3; i++ {
		f := b.freshFile()
		if _, _, err := b.edit(ctx, b.s, fileRel(f), fileContent(f, "warm")); err != nil {
			return err
		}
	}
	b.sse.reset()
	var ps, gs []time.Duration
	var ids []string
	// Side by side, in blocks of roundTripBlock edits then as many git
	// status runs of the same worktree: the samples of both spread over
	// the whole measure (a shared VM's speed drifts by a fifth within a
	// minute, and 60 edits alone take a tenth of a second), while each
	// block runs warm, as a burst of tool calls does.
	for i := 0; i < b.o.rtRuns; i += roundTripBlock {
		n := min(roundTripBlock, b.o.rtRuns-i)
		for j := i; j < i+n; j++ {
			f := b.freshFile()
			d, id, err := b.edit(ctx, b.s, fileRel(f), fileContent(f, fmt.Sprint("rt", j)))
			if err != nil {
				return err
			}
			ps = append(ps, d)
			ids = append(ids, id)
		}
		for j := 0; j < n; j++ {
			t0 := time.Now()
			if _, err := git(ctx, b.s.WorktreePath, nil, "status", "--porcelain", "-z", "--untracked-files=all"); err != nil {
				return err
			}
			gs = append(gs, time.Since(t0))
		}
	}
	if b.want("roundtrip") {
		b.rep.add("roundtrip", b.n, "prsm", "ms", false, durations(ps), "Edit: POST tool-calls, write, POST complete (detect, record, sync to the workspace)")
		b.rep.add("roundtrip", b.n, "git status", "ms", true, durations(gs), "")
	}
	if b.want("event-latency") {
		lat, err := b.sse.latencies(ids, 5*time.Second)
		if err != nil {
			return err
		}
		b.rep.add("event-latency", b.n, "prsm", "ms", false, durations(lat), "record timestamp (taken before it is stored) to file_changed received by an SSE client")
	}
	return nil
}

// checkpoint: an automatic checkpoint (POST turns) after 10 edits, against
// `git add -A && git commit` in a plain worktree after the same 10 edits,
// and a temp-index `add -A` + write-tree + commit-tree there.
func (b *bench) checkpoint(ctx context.Context) error {
	plain := filepath.Join(b.dir, "plain-ckpt")
	if _, err := git(ctx, b.ws, nil, "worktree", "add", "--quiet", "-b", "plain-ckpt", plain, "HEAD"); err != nil {
		return err
	}
	idx := filepath.Join(b.dir, "temp-index")
	idxEnv := []string{"GIT_INDEX_FILE=" + idx}
	if _, err := git(ctx, plain, idxEnv, "read-tree", "HEAD"); err != nil {
		return err
	}
	parent, err := git(ctx, plain, nil, "rev-parse", "HEAD")
	if err != nil {
		return err
	}
	tenEdits := func(round int) map[string][]byte {
		files := map[string][]byte{}
		for j := 0; j < 10; j++ {
			f := b.freshFile()
			files[fileRel(f)] = fileContent(f, fmt.Sprint("ckpt", round))
		}
		return files
	}
	write := func(root string, files map[string][]byte) error {
		for rel, c := range files {
			if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(rel)), c, 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	var ps, ga, gt []time.Duration
	for i := -1; i < b.o.runs; i++ { // i == -1 warms up
		files := tenEdits(i)
		if err := b.bash(ctx, b.s, files); err != nil {
			return err
		}
		t0 := time.Now()
		cp, err := b.srv.cl.Turn(ctx, b.s.ID, api.TurnRequest{MessageIndex: i + 2, Prompt: "bench turn"})
		d := time.Since(t0)
		if err != nil {
			return err
		}
		if cp.Kind != prsm.CheckpointAuto || cp.Tree == "" {
			return fmt.Errorf("turn made no automatic checkpoint: %+v", cp)
		}

		if err := write(plain, files); err != nil {
			return err
		}
		t0 = time.Now()
		if _, err := git(ctx, plain, nil, "add", "-A"); err != nil {
			return err
		}
		if _, err := git(ctx, plain, nil, "commit", "-q", "--no-verify", "-m", "checkpoint"); err != nil {
			return err
		}
		da := time.Since(t0)

		for rel := range files { // the same 10 files, changed again
			files[rel] = append(files[rel], "again\n"...)
		}
		if err := write(plain, files); err != nil {
			return err
		}
		t0 = time.Now()
		if _, err := git(ctx, plain, idxEnv, "add", "-A"); err != nil {
			return err
		}
		tree, err := git(ctx, plain, idxEnv, "write-tree")
		if err != nil {
			return err
		}
		if parent, err = git(ctx, plain, idxEnv, "commit-tree", tree, "-p", parent, "-m", "checkpoint"); err != nil {
			return err
		}
		dt := time.Since(t0)
		if i >= 0 {
			ps, ga, gt = append(ps, d), append(ga, da), append(gt, dt)
		}
	}
	b.rep.add("checkpoint", b.n, "prsm", "ms", false, durations(ps), "POST turns after a Bash call that changed 10 files")
	b.rep.add("checkpoint", b.n, "git add -A && git commit", "ms", true, durations(ga), "")
	b.rep.add("checkpoint", b.n, "temp index: add -A, write-tree, commit-tree", "ms", true, durations(gt), "")
	return nil
}

// rollback: a Bash call rewrites 100 files after a turn's checkpoint; the
// rewind to that checkpoint (worktree and workspace, with its safety
// checkpoint) is timed.
func (b *bench) rollback(ctx context.Context) error {
	runs := min(b.o.runs, 10)
	var ps []time.Duration
	for i := 0; i < runs; i++ {
		cp, err := b.srv.cl.Turn(ctx, b.s.ID, api.TurnRequest{MessageIndex: 1000 + i, Prompt: "before 100 files"})
		if err != nil {
			return err
		}
		files := map[string][]byte{}
		for len(files) < 100 {
			f := b.freshFile()
			files[fileRel(f)] = fileContent(f, fmt.Sprint("rb", i))
		}
		if err := b.bash(ctx, b.s, files); err != nil {
			return err
		}
		settle(b.srv.cmd.Process.Pid) // the user looks at the changes before rewinding them
		t0 := time.Now()
		plan, err := b.srv.cl.Rewind(ctx, b.s.ID, cp.ID, false)
		d := time.Since(t0)
		if err != nil {
			return err
		}
		if len(plan.Operations) != 100 {
			return fmt.Errorf("rollback of 100 files planned %d operations", len(plan.Operations))
		}
		for rel := range files {
			got, err := os.ReadFile(filepath.Join(b.ws, filepath.FromSlash(rel)))
			if err != nil {
				return err
			}
			if strings.Contains(string(got), fmt.Sprint("rb", i)) {
				return fmt.Errorf("rollback left %s as the Bash call wrote it", rel)
			}
		}
		ps = append(ps, d)
	}
	b.rep.add("rollback-100", b.n, "prsm", "ms", false, durations(ps), "rewind to a checkpoint after a Bash call changed 100 files: worktree, workspace, safety checkpoint")
	return nil
}

// rss: ten active sessions that have each made a few edits; the server's
// resident set size is sampled after each is added.
func (b *bench) rss(ctx context.Context) error {
	sessions := []*prsm.Session{b.s}
	for len(sessions) < 10 {
		s, err := b.srv.cl.StartSession(ctx, api.StartRequest{Name: fmt.Sprintf("rss-%d", len(sessions))})
		if err != nil {
			return err
		}
		sessions = append(sessions, s)
	}
	for round := 0; round < 5; round++ {
		for _, s := range sessions {
			f := b.freshFile()
			if _, _, err := b.edit(ctx, s, fileRel(f), fileContent(f, fmt.Sprint("rss", round))); err != nil {
				return err
			}
		}
	}
	var samples []float64
	var peak float64
	for i := 0; i < 5; i++ {
		rss, hwm, err := b.srv.rssMB()
		if err != nil {
			return err
		}
		samples, peak = append(samples, rss), max(peak, hwm)
		time.Sleep(200 * time.Millisecond)
	}
	r := b.rep.add("rss-10-sessions", b.n, "prsm", "MB", false, samples, fmt.Sprintf("VmRSS of prsm serve with 10 active sessions; peak (VmHWM) %.1f MB", peak))
	r.Max = max(r.Max, peak)
	for _, s := range sessions[1:] {
		if _, err := b.srv.cl.EndSession(ctx, s.ID, true); err != nil {
			return err
		}
	}
	return nil
}

// storeGrowth: 100 turns of 10 Edit calls each, every edit changing one
// line of one of ten 10 KB files; the store's growth is measured, and the
// git objects the checkpoints wrote are reported beside it.
func (b *bench) storeGrowth(ctx context.Context) error {
	s, err := b.srv.cl.StartSession(ctx, api.StartRequest{Name: "growth"})
	if err != nil {
		return err
	}
	before := b.srv.storeBytes()
	objects := filepath.Join(b.ws, ".git", "objects")
	objBefore := dirBytes(objects)
	edit := 0
	for turn := 0; turn < 100; turn++ {
		if _, err := b.srv.cl.Turn(ctx, s.ID, api.TurnRequest{MessageIndex: turn + 1, Prompt: fmt.Sprint("turn ", turn)}); err != nil {
			return err
		}
		for j := 0; j < 10; j++ {
			edit++
			if _, _, err := b.edit(ctx, s, bigRel(j), bigContent(j, edit)); err != nil {
				return err
			}
		}
	}
	grown := float64(b.srv.storeBytes()-before) / (1 << 20)
	objGrown := float64(dirBytes(objects)-objBefore) / (1 << 20)
	b.rep.add("store-growth", b.n, "prsm", "MB", false, []float64{grown},
		fmt.Sprintf("prsm.db with WAL after 1000 edits of 10 KB files (10 MB of edited content); checkpoints added %.2f MB of git objects", objGrown))
	return nil
}

// sseListener is an SSE client of /events that notes when each
// file_changed event arrives.
type sseListener struct {
	cancel context.CancelFunc
	mu     stdsync.Mutex
	got    map[string]time.Duration // tool call id -> latency
	done   chan struct{}
}

func listen(ctx context.Context, srv *prsmServer) (*sseListener, error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.cl.BaseURL+"/events", nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+srv.info.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		cancel()
		resp.Body.Close()
		return nil, fmt.Errorf("GET /events: %s", resp.Status)
	}
	l := &sseListener{cancel: cancel, got: map[string]time.Duration{}, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && event == "file_changed":
				at := time.Now()
				var r prsm.Record
				if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &r) == nil {
					l.mu.Lock()
					l.got[r.ToolCallID] = at.Sub(r.Timestamp)
					l.mu.Unlock()
				}
			case line == "":
				event = ""
			}
		}
	}()
	return l, nil
}

func (l *sseListener) reset() {
	l.mu.Lock()
	l.got = map[string]time.Duration{}
	l.mu.Unlock()
}

// latencies waits until every tool call in ids has its event.
func (l *sseListener) latencies(ids []string, wait time.Duration) ([]time.Duration, error) {
	deadline := time.Now().Add(wait)
	for {
		l.mu.Lock()
		var out []time.Duration
		missing := 0
		for _, id := range ids {
			if d, ok := l.got[id]; ok {
				out = append(out, d)
			} else {
				missing++
			}
		}
		l.mu.Unlock()
		if missing == 0 {
			return out, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d of %d file_changed events never arrived", missing, len(ids))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (l *sseListener) close() {
	l.cancel()
	<-l.done
}
