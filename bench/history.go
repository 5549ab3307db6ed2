package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/prsm-dev/prsm/api"
)

// historyMeasureNames are issue 47's measures: prsm blame of a file many
// records touched against git blame of the same history as commits, and
// prsm commit of a turn against git add plus git commit of the same
// change. Both run the CLI, as a user does.
var historyMeasureNames = []string{"blame", "commit"}

const (
	blameLines   = 5000 // lines of the blamed file
	blameRecords = 200  // tool calls that edit it
	commitFiles  = 20   // files of the committed turn
)

// historyBench measures blame and commit on a small repository of their
// own, each beside git's own work on a plain clone.
func historyBench(ctx context.Context, o options, dir, bin string, rep *report) error {
	want := func(m string) bool { return o.only == nil || o.only[m] }
	if !want("blame") && !want("commit") {
		return nil
	}
	d := filepath.Join(dir, "history")
	ws, plain := filepath.Join(d, "workspace"), filepath.Join(d, "plain")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	var lines []string
	for i := 0; i < blameLines; i++ {
		lines = append(lines, fmt.Sprintf("line %d of the blamed file", i))
	}
	if err := os.WriteFile(filepath.Join(ws, "blamed.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	for i := 0; i < commitFiles; i++ {
		if err := os.WriteFile(filepath.Join(ws, commitRel(i)), fileContent(i, "base"), 0o644); err != nil {
			return err
		}
	}
	if err := commitAndClone(ctx, ws, plain); err != nil {
		return err
	}
	home := filepath.Join(d, "home")
	srv, err := startServer(ctx, bin, home, ws, identity...)
	if err != nil {
		return err
	}
	defer srv.stop()
	s, err := srv.cl.StartSession(ctx, api.StartRequest{Name: "history", AgentID: "bench"})
	if err != nil {
		return err
	}
	cli := func(args ...string) (time.Duration, error) {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = ws
		cmd.Env = append(append(os.Environ(), "PRSM_HOME="+home), identity...)
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("prsm %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return time.Since(t0), nil
	}
	gitTimed := func(args ...string) (time.Duration, error) {
		t0 := time.Now()
		_, err := git(ctx, plain, nil, args...)
		return time.Since(t0), err
	}
	call := 0
	// edit runs one tool call that writes files in the session's
	// worktree (and the same in the plain clone).
	edit := func(files map[string][]byte) error {
		call++
		id := fmt.Sprintf("hist-%d", call)
		args, _ := json.Marshal(map[string]string{"command": "edit"})
		if _, err := srv.cl.StartToolCall(ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Bash", Args: args, Cwd: s.WorktreePath}); err != nil {
			return err
		}
		for rel, b := range files {
			for _, root := range []string{s.WorktreePath, plain} {
				if err := os.WriteFile(filepath.Join(root, rel), b, 0o644); err != nil {
					return err
				}
			}
		}
		_, err := srv.cl.CompleteToolCall(ctx, s.ID, id, api.CompleteRequest{Result: json.RawMessage(`{"ok":true}`)})
		return err
	}
	if want("blame") {
		fmt.Fprintf(os.Stderr, "bench history: %d edits of a %d-line file\n", blameRecords, blameLines)
		for k := 0; k < blameRecords; k++ {
			// Each edit rewrites two lines far apart and adds one.
			a, b := (k*37)%blameLines, (k*91+17)%blameLines
			lines[a] = fmt.Sprintf("line %d, edited by call %d", a, k)
			lines[b] = fmt.Sprintf("line %d, edited by call %d", b, k)
			lines = append(lines[:a+1], append([]string{fmt.Sprintf("added by call %d", k)}, lines[a+1:]...)...)
			if err := edit(map[string][]byte{"blamed.txt": []byte(strings.Join(lines, "\n") + "\n")}); err != nil {
				return err
			}
			if _, err := git(ctx, plain, nil, "commit", "-q", "-am", fmt.Sprintf("call %d", k)); err != nil {
				return err
			}
		}
		var p, g []time.Duration
		for i := 0; i < o.runs; i++ {
			tp, err := cli("blame", "blamed.txt")
			if err != nil {
				return err
			}
			tg, err := gitTimed("blame", "blamed.txt")
			if err != nil {
				return err
			}
			p, g = append(p, tp), append(g, tg)
		}
		note := fmt.Sprintf("%d lines, %d records / commits", len(lines), blameRecords)
		rep.add("blame", blameLines, "prsm blame", "ms", false, durations(p), note)
		rep.add("blame", blameLines, "git blame", "ms", true, durations(g), note)
	}
	if want("commit") {
		runs := min(o.runs, 10)
		fmt.Fprintf(os.Stderr, "bench history: %d commits of %d-file turns\n", runs, commitFiles)
		var p, g []time.Duration
		for i := 0; i < runs; i++ {
			if _, err := srv.cl.Turn(ctx, s.ID, api.TurnRequest{Prompt: fmt.Sprintf("change the files, take %d", i)}); err != nil {
				return err
			}
			files := map[string][]byte{}
			for f := 0; f < commitFiles; f++ {
				files[commitRel(f)] = fileContent(f, fmt.Sprintf("take %d", i))
			}
			if err := edit(files); err != nil {
				return err
			}
			if _, err := srv.cl.AcceptAll(ctx, s.ID, ""); err != nil {
				return err
			}
			tp, err := cli("commit")
			if err != nil {
				return err
			}
			t0 := time.Now()
			if _, err := git(ctx, plain, nil, "add", "-A"); err != nil {
				return err
			}
			if _, err := git(ctx, plain, nil, "commit", "-q", "-m", fmt.Sprintf("take %d", i)); err != nil {
				return err
			}
			p, g = append(p, tp), append(g, time.Since(t0))
		}
		note := fmt.Sprintf("%d files a turn, one commit and its trace note", commitFiles)
		rep.add("commit", commitFiles, "prsm commit", "ms", false, durations(p), note)
		rep.add("commit", commitFiles, "git add + git commit", "ms", true, durations(g), note)
	}
	return nil
}

// identity is the committer prsm commit and git notes need.
var identity = []string{"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@localhost",
	"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@localhost"}

func commitRel(i int) string { return fmt.Sprintf("commit%02d.txt", i) }

// historyChecks are issue 47's targets.
func historyChecks(r *report) []check {
	var out []check
	if p, g := r.find("blame", blameLines, "prsm blame"), r.find("blame", blameLines, "git blame"); p != nil && g != nil {
		ratio := p.Median / g.Median
		out = append(out, check{Target: "prsm blame <= 1.0x git blame", Files: blameLines, Figure: ratio,
			Value: fmt.Sprintf("%.2fx (%.1f ms vs %.1f ms)", ratio, p.Median, g.Median), OK: ratio <= 1.0})
	}
	if p, g := r.find("commit", commitFiles, "prsm commit"), r.find("commit", commitFiles, "git add + git commit"); p != nil && g != nil {
		ratio := p.Median / g.Median
		out = append(out, check{Target: "prsm commit <= 2.0x git add + git commit", Files: commitFiles, Figure: ratio,
			Value: fmt.Sprintf("%.2fx (%.1f ms vs %.1f ms)", ratio, p.Median, g.Median), OK: ratio <= 2.0})
	}
	return out
}
