package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// bulkMeasureNames are the measures of an agent's bulk work (an npm
// install, a generator): n new files recorded, all rejected, and
// discarded, each against git's own work on the same files.
var bulkMeasureNames = []string{"bulk-record", "bulk-reject", "bulk-discard"}

// bulkRel is the i-th file of a generated tree: 50 to a directory, two
// levels deep, as node_modules lays out small files.
func bulkRel(i int) string {
	return fmt.Sprintf("gen/p%03d/l%d/f%06d.js", i/500, (i/50)%10, i)
}

// genBulk writes n new files under root.
func genBulk(root string, n int) error {
	for i := 0; i < n; i++ {
		p := filepath.Join(root, filepath.FromSlash(bulkRel(i)))
		if i%50 == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("module.exports = %d;\n// generated\n", i)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// bulk measures, on a small repository, a Bash tool call that creates n
// files: its complete (detect, record, and the writes to the workspace)
// against `git add -A` of the same files in a plain clone; a reject of
// all of them against `git clean -fdq` there; and, after the same call
// once more, the session's end with --discard against the same clean.
// A server of its own shows the peak memory bulk work takes.
func bulk(ctx context.Context, o options, dir, bin string, rep *report, n int) error {
	want := func(m string) bool { return o.only == nil || o.only[m] }
	if !want("bulk-record") && !want("bulk-reject") && !want("bulk-discard") {
		return nil
	}
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "bench bulk %s: %s\n", sizeName(n), fmt.Sprintf(format, args...))
	}
	d := filepath.Join(dir, "bulk-"+sizeName(n))
	ws := filepath.Join(d, "workspace")
	plain := filepath.Join(d, "plain")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(ws, "README"), []byte("bulk\n"), 0o644); err != nil {
		return err
	}
	if err := commitAndClone(ctx, ws, plain); err != nil {
		return err
	}
	srv, err := startServer(ctx, bin, filepath.Join(d, "home"), ws)
	if err != nil {
		return err
	}
	defer srv.stop()
	pid := srv.cmd.Process.Pid
	rss0, _, err := srv.rssMB()
	if err != nil {
		return err
	}
	s, err := srv.cl.StartSession(ctx, api.StartRequest{Name: "bulk", AgentID: "bench"})
	if err != nil {
		return err
	}
	// generated runs one Bash tool call that creates the n files and
	// returns the time of its complete.
	call := 0
	generated := func() (time.Duration, error) {
		call++
		id := fmt.Sprintf("npm-install-%d", call)
		args, _ := json.Marshal(map[string]string{"command": "npm install"})
		if _, err := srv.cl.StartToolCall(ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Bash", Args: args, Cwd: s.WorktreePath}); err != nil {
			return 0, err
		}
		if err := genBulk(s.WorktreePath, n); err != nil {
			return 0, err
		}
		settle(pid)
		t0 := time.Now()
		_, err := srv.cl.CompleteToolCall(ctx, s.ID, id, api.CompleteRequest{Result: json.RawMessage(`{"ok":true}`)})
		took := time.Since(t0)
		if err != nil {
			return 0, err
		}
		// The answer lists the first 1000; the session counts them all.
		ss, err := srv.cl.Session(ctx, s.ID)
		if err != nil {
			return 0, err
		}
		if ss.PendingCount != n {
			return 0, fmt.Errorf("the call created %d files, %d changes are pending", n, ss.PendingCount)
		}
		if _, err := os.Stat(filepath.Join(ws, filepath.FromSlash(bulkRel(n-1)))); err != nil {
			return 0, fmt.Errorf("recorded, not in the workspace: %w", err)
		}
		return took, nil
	}
	seconds := func(d time.Duration) []float64 { return []float64{d.Seconds()} }
	timed := func(root string, args ...string) (time.Duration, error) {
		settle(pid)
		t0 := time.Now()
		_, err := git(ctx, root, nil, args...)
		return time.Since(t0), err
	}

	logf("recording %d new files", n)
	rec, err := generated()
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	_, peak, err := srv.rssMB()
	if err != nil {
		return err
	}
	if err := genBulk(plain, n); err != nil {
		return err
	}
	add, err := timed(plain, "add", "-A")
	if err != nil {
		return err
	}
	rep.add("bulk-record", n, "prsm", "s", false, seconds(rec),
		fmt.Sprintf("complete of a Bash call that created %d files: detect, record, write to the workspace; server peak RSS %.0f MB (%.0f MB at start)", n, peak, rss0))
	rep.add("bulk-record", n, "git add -A", "s", true, seconds(add), "")
	rep.add("bulk-record-rss", n, "prsm", "MB", false, []float64{peak},
		fmt.Sprintf("the server's peak resident set (VmHWM) over the record of %d new files", n))

	if !want("bulk-reject") && !want("bulk-discard") {
		return nil
	}
	logf("rejecting them all")
	settle(pid)
	t0 := time.Now()
	ans, err := srv.cl.RejectAll(ctx, s.ID, "")
	rej := time.Since(t0)
	if err != nil {
		return fmt.Errorf("reject-all: %w", err)
	}
	if ans.Job == nil || ans.Job.Done != n {
		return fmt.Errorf("reject-all decided %+v, want %d", ans.Job, n)
	}
	if _, err := os.Stat(filepath.Join(ws, "gen")); !os.IsNotExist(err) {
		return fmt.Errorf("reject-all left gen/ in the workspace (%v)", err)
	}
	_, peak, _ = srv.rssMB()
	// The files went into bins the server empties after its answer: git
	// is timed once that is done, not beside it.
	emptied, err := awaitTrash(filepath.Join(d, "home"), t0.Add(rej))
	if err != nil {
		return err
	}
	if _, err := git(ctx, plain, nil, "reset", "-q"); err != nil {
		return err
	}
	clean, err := timed(plain, "clean", "-fdq")
	if err != nil {
		return err
	}
	rep.add("bulk-reject", n, "prsm", "s", false, seconds(rej),
		fmt.Sprintf("POST reject-all: every created file out of the worktree and the workspace; server peak RSS %.0f MB; its bins emptied %.1f s after the answer", peak, emptied.Seconds()))
	rep.add("bulk-reject", n, "git clean -fdq", "s", true, seconds(clean), "")

	if !want("bulk-discard") {
		return nil
	}
	logf("recording them again, then ending the session with --discard")
	if _, err := generated(); err != nil {
		return fmt.Errorf("record again: %w", err)
	}
	settle(pid)
	t0 = time.Now()
	ended, err := srv.cl.EndSession(ctx, s.ID, true)
	dis := time.Since(t0)
	if err != nil {
		return fmt.Errorf("end --discard: %w", err)
	}
	if ended.Status != prsm.SessionEnded {
		return fmt.Errorf("end --discard: session %s", ended.Status)
	}
	if _, err := os.Stat(filepath.Join(ws, "gen")); !os.IsNotExist(err) {
		return fmt.Errorf("discard left gen/ in the workspace (%v)", err)
	}
	_, peak, _ = srv.rssMB()
	if _, err := awaitTrash(filepath.Join(d, "home"), t0.Add(dis)); err != nil {
		return err
	}
	if err := genBulk(plain, n); err != nil {
		return err
	}
	clean2, err := timed(plain, "clean", "-fdq")
	if err != nil {
		return err
	}
	rep.add("bulk-discard", n, "prsm", "s", false, seconds(dis),
		fmt.Sprintf("session end --discard: the rejects, then the worktree removed; server peak RSS %.0f MB over the whole run", peak))
	rep.add("bulk-discard", n, "git clean -fdq", "s", true, seconds(clean2), "")
	return nil
}

// bulkChecks evaluates the targets of bulk work: recording within 2x of
// git add -A at a server peak under 256 MB, a reject-all of 200k files
// well under a minute; they bind at 200k files.
func bulkChecks(r *report, sizes []int) []check {
	var out []check
	for _, n := range sizes {
		if p, g := r.prsmOf("bulk-record", n), r.find("bulk-record", n, "git add -A"); p != nil && g != nil && g.Median > 0 {
			ratio := p.Median / g.Median
			out = append(out, check{Target: "recording new files within 2x git add -A", Files: n, Figure: ratio,
				Value: fmt.Sprintf("%.2fx (%.1f s vs %.1f s)", ratio, p.Median, g.Median), OK: ratio <= 2, Binding: n == bulkTargetFiles})
		}
		if p := r.prsmOf("bulk-record-rss", n); p != nil {
			out = append(out, check{Target: "server peak RSS over a bulk record < 256 MB", Files: n, Figure: p.Max,
				Value: fmt.Sprintf("%.0f MB", p.Max), OK: p.Max < 256, Binding: n == bulkTargetFiles})
		}
		if p := r.prsmOf("bulk-reject", n); p != nil {
			out = append(out, check{Target: "reject-all of created files < 60 s", Files: n, Figure: p.Median,
				Value: fmt.Sprintf("%.1f s", p.Median), OK: p.Median < 60, Binding: n == bulkTargetFiles})
		}
	}
	return out
}

// bulkTargetFiles is the bulk size the bulk targets are set on.
const bulkTargetFiles = 200_000

// commitAndClone makes the files in ws its repository's first commit and
// clones it to plain, where git does the same work as prsm.
func commitAndClone(ctx context.Context, ws, plain string) error {
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "first"}} {
		if _, err := git(ctx, ws, nil, args...); err != nil {
			return err
		}
	}
	_, err := git(ctx, filepath.Dir(plain), nil, "clone", "-q", ws, plain)
	return err
}

// awaitTrash waits until the bins of the server whose home is home are
// empty (engine's trashCan), and returns how long after answered that
// was.
func awaitTrash(home string, answered time.Time) (time.Duration, error) {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		bins, err := filepath.Glob(filepath.Join(home, "projects", "*", "trash", "bin-*"))
		if err != nil {
			return 0, err
		}
		if len(bins) == 0 {
			return time.Since(answered), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("the server's bins are not empty after 10 minutes: %d left", len(bins))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
