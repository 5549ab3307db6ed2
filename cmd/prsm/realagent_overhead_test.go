package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/internal/fakemodel"
)

// TestRealAgentClaudeOverhead times a whole scripted run of the real
// Claude Code (issue 35): the same script of Write tool calls run by Claude
// alone, with http hooks to a listener that does nothing (the floor of
// Claude's own hook client), and under `prsm run` (http hooks to prsm's
// server), several times each, interleaved. It logs the medians and what
// prsm costs per tool call over the bare hooks; `make bench` runs it. It
// asserts what each run did, never how long it took (timed assertions are
// flaky on a shared machine). PRSM_CLAUDE_OVERHEAD=1 runs it.
func TestRealAgentClaudeOverhead(t *testing.T) {
	if os.Getenv("PRSM_CLAUDE_OVERHEAD") != "1" {
		t.Skip("PRSM_CLAUDE_OVERHEAD=1 (make bench) times whole Claude Code runs")
	}
	// Two script lengths: the difference of their run times is what the
	// extra tool calls cost, without the fixed costs of a run (Claude's
	// start, prsm run's turn and settings file).
	const short, long, rounds = 4, 24, 5
	r := newClaudeRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	r.write(map[string]string{"a.txt": "alpha\n"})
	r.git("init", "-q")
	r.git("add", "-A")
	r.git("commit", "-qm", "first")
	s := r.startSession(ctx)

	// A listener that answers every hook with an empty 200.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{}"))
	})}
	go srv.Serve(ln)
	defer srv.Close()
	null := map[string]any{}
	if err := addClaudeHandlers(null, map[string]any{"type": "http", "url": "http://" + ln.Addr().String() + "/hooks/claude", "timeout": json.Number("30")}); err != nil {
		t.Fatal(err)
	}
	nullSettings := filepath.Join(t.TempDir(), "null-settings.json")
	data, _ := json.Marshal(null)
	if err := os.WriteFile(nullSettings, data, 0o600); err != nil {
		t.Fatal(err)
	}

	// script writes n files under dir, one Write per step.
	script := func(dir, tag string, n int) *fakemodel.AnthropicServer {
		var steps []fakemodel.AnthropicStep
		for i := 0; i < n; i++ {
			steps = append(steps, fakemodel.AnthropicStep{Tools: []fakemodel.AnthropicToolUse{{
				ID: fmt.Sprintf("toolu_%s%02d", tag, i), Name: "Write",
				Input: map[string]any{"file_path": filepath.Join(dir, fmt.Sprintf("%s-%02d.txt", tag, i)), "content": fmt.Sprintf("%s %d\n", tag, i)}}}})
		}
		return fakemodel.NewAnthropic(append(steps, fakemodel.AnthropicStep{Text: "Done."})...)
	}
	plain := filepath.Join(t.TempDir(), "plain")
	if err := os.MkdirAll(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	claude := func(model *fakemodel.AnthropicServer, extra ...string) time.Duration {
		args := append(claudeArgs(r.claude, "Write the files."), extra...)
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir, cmd.Env = plain, append(append([]string{}, r.env...), claudeModelEnv(model)...)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("claude: %v\n%s", err, out)
		}
		return time.Since(start)
	}
	// times[variant][length] are the run times.
	times := map[string]map[int][]time.Duration{"alone": {}, "bare": {}, "prsm": {}}
	recorded := 0
	for round := 0; round < rounds; round++ {
		for _, n := range []int{short, long} {
			tag := fmt.Sprintf("a%d-%d-", round, n)
			m := script(plain, tag, n)
			times["alone"][n] = append(times["alone"][n], claude(m))
			m.Close()

			tag = fmt.Sprintf("n%d-%d-", round, n)
			m = script(plain, tag, n)
			before := hits.Load()
			times["bare"][n] = append(times["bare"][n], claude(m, "--settings", nullSettings))
			m.Close()
			if got := hits.Load() - before; got < int64(2*n) {
				t.Fatalf("the null listener saw %d hook calls for %d tool calls", got, n)
			}

			tag = fmt.Sprintf("p%d-%d-", round, n)
			m = script(s.WorktreePath, tag, n)
			start := time.Now()
			r.prsm(ctx, claudeModelEnv(m), append([]string{"run", "--session", s.ID, "--"}, claudeArgs(r.claude, "Write the files.")...)...)
			times["prsm"][n] = append(times["prsm"][n], time.Since(start))
			m.Close()
			recorded += n
			recs, err := r.client(ctx).Changes(ctx, s.ID, "", "")
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != recorded {
				t.Fatalf("prsm recorded %d changes, want %d", len(recs), recorded)
			}
		}
	}
	med := func(ds []time.Duration) time.Duration {
		s := append([]time.Duration{}, ds...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return s[len(s)/2]
	}
	// perCall is the median cost of one more tool call of a variant.
	perCall := func(v string) float64 {
		return float64(med(times[v][long])-med(times[v][short])) / float64(time.Millisecond) / float64(long-short)
	}
	a, b, p := perCall("alone"), perCall("bare"), perCall("prsm")
	t.Logf("claude runs of %d and %d Write calls, %d rounds: alone %v / %v, http hooks to a null listener %v / %v, prsm run %v / %v (medians)",
		short, long, rounds, med(times["alone"][short]), med(times["alone"][long]), med(times["bare"][short]), med(times["bare"][long]),
		med(times["prsm"][short]), med(times["prsm"][long]))
	t.Logf("one tool call: %.1f ms alone, %.1f ms with bare http hooks, %.1f ms under prsm run: prsm costs %.1f ms over the bare hooks, %.1f ms over Claude alone",
		a, b, p, p-b, p-a)
}
