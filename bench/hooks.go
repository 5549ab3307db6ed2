package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/prsm-dev/prsm"
)

// What the agent pays for prsm's hooks (issue 35): a hook process's
// start, and a tool call as Claude Code runs it, through two command-hook
// processes or through its http hooks, beside `git status -uall` of the
// same worktree.
var hookMeasureNames = []string{"hook-start", "toolcall-command", "toolcall-http"}

// hookStartRuns is how many hook processes hook-start starts per subject:
// one start costs a few ms, and a shared host's noise wants many.
const hookStartRuns = 200

// leanHook is the prsm-hook binary beside the prsm binary measured.
func (b *bench) leanHook() (string, error) {
	p := filepath.Join(filepath.Dir(b.bin), "prsm-hook")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no prsm-hook beside %s (make build puts it there): %w", b.bin, err)
	}
	return p, nil
}

// claudeEvent is a Claude Code hook event of an Edit in the bench session.
func (b *bench) claudeEvent(event, id, file string) []byte {
	ev, _ := json.Marshal(map[string]any{"session_id": "bench", "transcript_path": "/dev/null", "cwd": b.s.WorktreePath,
		"permission_mode": "bypassPermissions", "hook_event_name": event, "tool_name": "Edit", "tool_use_id": id,
		"tool_input":    map[string]any{"file_path": file, "old_string": "line", "new_string": "line", "replace_all": false},
		"tool_response": map[string]any{}})
	return ev
}

// runHook starts one hook process with the event on stdin, as Claude
// Code does, and returns how long it took.
func (b *bench) runHook(ctx context.Context, argv []string, dir string, event []byte) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PRSM_HOME="+b.srv.home, "PRSM_SESSION_ID=", "PRSM_WORKSPACE=")
	cmd.Stdin = bytes.NewReader(event)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	err := cmd.Run()
	d := time.Since(t0)
	if err != nil {
		return 0, fmt.Errorf("%v: %v: %s", argv, err, out.String())
	}
	return d, nil
}

// hookStart: one hook process, start to exit, for an event outside every
// session (nothing to send) and for one with a request to the running
// server (a Read's pre-tool capture), prsm-hook against `prsm hook`,
// alternately.
func (b *bench) hookStart(ctx context.Context) error {
	lean, err := b.leanHook()
	if err != nil {
		return err
	}
	outside := b.dir
	none, _ := json.Marshal(map[string]any{"session_id": "bench", "cwd": outside, "hook_event_name": "PreToolUse",
		"tool_name": "Edit", "tool_use_id": "toolu_none", "tool_input": map[string]any{"file_path": filepath.Join(outside, "x")}})
	subjects := []struct {
		name string
		argv []string
	}{{"prsm-hook", []string{lean, "claude"}}, {"prsm hook", []string{b.bin, "hook", "claude"}}}
	for _, withRequest := range []bool{false, true} {
		samples := make([][]time.Duration, len(subjects))
		for i := 0; i < hookStartRuns; i++ {
			for k, s := range subjects {
				ev, dir := none, outside
				if withRequest {
					ev = b.readEvent(b.toolCallID("toolu_start"))
					dir = b.s.WorktreePath
				}
				d, err := b.runHook(ctx, s.argv, dir, ev)
				if err != nil {
					return err
				}
				samples[k] = append(samples[k], d)
			}
		}
		measure, note := "hook-start", "a hook process, start to exit, for an event outside every session"
		if withRequest {
			measure, note = "hook-request", "a hook process, start to exit, with one request to the running server (a Read's PreToolUse)"
		}
		for k, s := range subjects {
			b.rep.add(measure, b.n, s.name, "ms", k > 0, durations(samples[k]), note)
		}
	}
	return nil
}

// readEvent is a PreToolUse of a Read: one request, no checkpoint.
func (b *bench) readEvent(id string) []byte {
	ev, _ := json.Marshal(map[string]any{"session_id": "bench", "cwd": b.s.WorktreePath, "hook_event_name": "PreToolUse",
		"tool_name": "Read", "tool_use_id": id, "tool_input": map[string]any{"file_path": filepath.Join(b.s.WorktreePath, "README")}})
	return ev
}

// toolCall runs one Edit as Claude Code does: the PreToolUse hook, the
// write, the PostToolUse hook, each hook through send; it returns the time
// of the whole and checks that the edit became one synced record. The
// PostToolUse answers before the records are made (the agent does not
// read them); the check, outside the time, waits for them, as the next
// tool call would, the agent's model answering in between.
func (b *bench) toolCall(ctx context.Context, send func(event []byte) error) (time.Duration, error) {
	f := b.freshFile()
	rel := fileRel(f)
	p := filepath.Join(b.s.WorktreePath, filepath.FromSlash(rel))
	id := b.toolCallID("toolu_bench")
	t0 := time.Now()
	if err := send(b.claudeEvent("PreToolUse", id, p)); err != nil {
		return 0, err
	}
	if err := os.WriteFile(p, fileContent(f, "hook "+id), 0o644); err != nil {
		return 0, err
	}
	if err := send(b.claudeEvent("PostToolUse", id, p)); err != nil {
		return 0, err
	}
	d := time.Since(t0)
	recs, err := b.srv.cl.ChangesOf(ctx, b.s.ID, id)
	if err != nil {
		return 0, err
	}
	if len(recs.Records) != 1 || recs.Records[0].SyncState != prsm.SyncSynced {
		return 0, fmt.Errorf("tool call %s on %s: want one synced record, got %d", id, rel, len(recs.Records))
	}
	return d, nil
}

// toolCallBeside measures tool calls through send beside `git status
// -uall` of the same worktree, in blocks as roundTrip does.
func (b *bench) toolCallBeside(ctx context.Context, measure, note string, send func([]byte) error) error {
	for i := 0; i < 3; i++ { // warm up
		if _, err := b.toolCall(ctx, send); err != nil {
			return err
		}
	}
	var ps, gs []time.Duration
	for i := 0; i < b.o.rtRuns; i += roundTripBlock {
		n := min(roundTripBlock, b.o.rtRuns-i)
		for j := 0; j < n; j++ {
			d, err := b.toolCall(ctx, send)
			if err != nil {
				return err
			}
			ps = append(ps, d)
		}
		for j := 0; j < n; j++ {
			t0 := time.Now()
			if _, err := git(ctx, b.s.WorktreePath, nil, "status", "--porcelain", "-z", "--untracked-files=all"); err != nil {
				return err
			}
			gs = append(gs, time.Since(t0))
		}
	}
	b.rep.add(measure, b.n, "prsm", "ms", false, durations(ps), note)
	b.rep.add(measure, b.n, "git status", "ms", true, durations(gs), "")
	return nil
}

// toolCallCommand: a tool call through two prsm-hook processes, and the
// floor of any command hook written in Go: the same write between two
// starts of an empty Go program.
func (b *bench) toolCallCommand(ctx context.Context) error {
	lean, err := b.leanHook()
	if err != nil {
		return err
	}
	err = b.toolCallBeside(ctx, "toolcall-command",
		"Edit as Claude Code runs it: a prsm-hook process for PreToolUse, the write, one for PostToolUse",
		func(ev []byte) error {
			_, err := b.runHook(ctx, []string{lean, "claude"}, b.s.WorktreePath, ev)
			return err
		})
	if err != nil {
		return err
	}
	return b.commandFloor(ctx)
}

// commandFloor times the write of a tool call between two starts of an
// empty Go program, started as runHook starts prsm-hook, with the same
// event on stdin: what two command hooks cost before they do anything.
// The write goes outside the worktree, so nothing records it.
func (b *bench) commandFloor(ctx context.Context) error {
	empty, err := buildEmpty(ctx, b.dir)
	if err != nil {
		return err
	}
	scratch := filepath.Join(b.dir, "floor")
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		return err
	}
	var ds []time.Duration
	for i := 0; i < b.o.rtRuns; i++ {
		f := b.freshFile()
		p := filepath.Join(scratch, fmt.Sprintf("f%d.txt", i))
		ev := b.claudeEvent("PreToolUse", "toolu_floor", p)
		t0 := time.Now()
		if _, err := b.runHook(ctx, []string{empty}, b.s.WorktreePath, ev); err != nil {
			return err
		}
		if err := os.WriteFile(p, fileContent(f, "floor"), 0o644); err != nil {
			return err
		}
		if _, err := b.runHook(ctx, []string{empty}, b.s.WorktreePath, ev); err != nil {
			return err
		}
		ds = append(ds, time.Since(t0))
	}
	b.rep.add("toolcall-command", b.n, "empty Go x2", "ms", true, durations(ds),
		"the floor of a command hook in Go: the write between two starts of a program whose main is empty")
	return nil
}

// buildEmpty builds a Go program whose main does nothing, in dir.
func buildEmpty(ctx context.Context, dir string) (string, error) {
	src := filepath.Join(dir, "empty-src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module empty\n\ngo 1.22\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "empty")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build an empty Go program: %v: %s", err, out)
	}
	return bin, nil
}

// toolCallHTTP: a tool call through Claude's http hooks, a new connection
// per POST (as a client that keeps none would).
func (b *bench) toolCallHTTP(ctx context.Context) error {
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	url := "http://" + b.srv.info.Addr + "/hooks/claude"
	return b.toolCallBeside(ctx, "toolcall-http",
		"Edit as Claude Code runs it with http hooks: POST /hooks/claude PreToolUse, the write, POST PostToolUse; a new connection per POST",
		func(ev []byte) error {
			req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(ev))
			if err != nil {
				return err
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+b.srv.info.Token)
			resp, err := hc.Do(req)
			if err != nil {
				return err
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("POST /hooks/claude: %s %s", resp.Status, body)
			}
			return nil
		})
}

// hookChecks evaluates the hook targets of issue 35 at size n.
func hookChecks(r *report, n int) []check {
	var out []check
	for _, m := range []struct {
		measure string
		min     float64
	}{{"toolcall-http", 50}, {"toolcall-command", 20}} {
		if p, g := r.prsmOf(m.measure, n), r.find(m.measure, n, "git status"); p != nil && g != nil && p.Median > 0 {
			ratio := g.Median / p.Median
			value := fmt.Sprintf("%.1fx (%.2f ms vs %.1f ms)", ratio, p.Median, g.Median)
			if f := r.find(m.measure, n, "empty Go x2"); f != nil && f.Median > 0 {
				value += fmt.Sprintf("; two empty Go processes alone: %.1fx", g.Median/f.Median)
			}
			out = append(out, check{Target: fmt.Sprintf("%s: tool call >= %.0fx faster than git status", m.measure, m.min), Files: n, Figure: ratio,
				Value: value, OK: ratio >= m.min})
		}
	}
	// The start alone is the target; hook-request (the same with one
	// request) is in the table for reference.
	if p := r.find("hook-start", n, "prsm-hook"); p != nil {
		out = append(out, check{Target: "hook-start: one hook process <= 3 ms median", Files: n, Figure: p.Median,
			Value: fmt.Sprintf("%.2f ms median", p.Median), OK: p.Median <= 3})
	}
	return out
}
