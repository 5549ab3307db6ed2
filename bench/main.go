// Command bench is prsm's performance harness (`make bench`). It generates
// repositories of 10k and 50k files (200k when asked), runs the real prsm
// binary on each, and measures, side by side in the same run, what prsm costs
// against the git CLI approaches other tools use:
//
//   - a tool call round trip for a one-file edit (start, edit, complete with
//     sync) against `git status --porcelain -z --untracked-files=all`;
//   - an automatic checkpoint after 10 edits against `git add -A && git
//     commit` in a plain worktree and a temp-index write-tree + commit-tree;
//   - session start against a plain `git worktree add`;
//   - a rollback of 100 files;
//   - event latency, from a record stored to an SSE client receiving it;
//   - the server's RSS with 10 active sessions;
//   - store growth after 100 turns of 10 edits each on 10 KB files;
//   - an agent's bulk work on a small repository (-bulk, 20k and 200k new
//     files): the complete of a Bash call that created them against `git
//     add -A` of the same files, a reject of all of them and a discard of
//     the session against `git clean -fdq` (bulk.go);
//   - prsm blame of a 5,000-line file 200 tool calls edited against git
//     blame of the same history as commits, and prsm commit of a 20-file
//     turn against git add plus git commit (history.go).
//
// It prints a table of median/min/max with ratios and the targets of the
// performance issue, and writes every figure as JSON with -json FILE.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
)

type options struct {
	sizes     []int
	bulk      []int
	runs      int
	rtRuns    int
	startRuns int
	jsonOut   string
	keep      bool
	prsmBin   string
	only      map[string]bool
	dir       string
}

func main() {
	var o options
	var sizes, bulkSizes, only string
	flag.StringVar(&sizes, "sizes", "10k,50k", "repository sizes in files, comma separated (e.g. 10k,50k,200k; \"\" for the bulk measures alone)")
	flag.StringVar(&bulkSizes, "bulk", "20k,200k", "new files of the bulk measures, comma separated (\"\" for none; 200k takes some 10 minutes)")
	flag.IntVar(&o.runs, "runs", 30, "samples per measure (tool calls, checkpoints, git status, ...)")
	flag.IntVar(&o.rtRuns, "roundtrip-runs", 300, "samples of the tool call round trip and of git status beside it (each edit takes about 2 ms, so more samples cost little and steady the median; the git status runs cost 26 s at 50k)")
	flag.IntVar(&o.startRuns, "start-runs", 5, "samples of session start and git worktree add (each checks out the whole repository)")
	flag.StringVar(&o.jsonOut, "json", "", "also write every figure as JSON to this file")
	flag.BoolVar(&o.keep, "keep", false, "keep the generated repositories and prsm's state")
	flag.StringVar(&o.prsmBin, "prsm", "", "the prsm binary to measure (default: built from this checkout)")
	flag.StringVar(&only, "only", "", "run only these measures: "+strings.Join(measureNames, ","))
	flag.StringVar(&o.dir, "dir", "", "work directory (default: a new temp dir)")
	cpuprofile := flag.String("cpuprofile", "", "write the bench client's own CPU profile to this file (the server's: PRSM_CPUPROFILE)")
	flag.Parse()

	for _, s := range strings.Split(sizes, ",") {
		if sizes == "" {
			break // only the bulk measures
		}
		n, err := parseSize(s)
		if err != nil {
			fatalf("bad -sizes %q: %v", sizes, err)
		}
		o.sizes = append(o.sizes, n)
	}
	if bulkSizes != "" {
		for _, s := range strings.Split(bulkSizes, ",") {
			n, err := parseSize(s)
			if err != nil {
				fatalf("bad -bulk %q: %v", bulkSizes, err)
			}
			o.bulk = append(o.bulk, n)
		}
	}
	if only != "" {
		o.only = map[string]bool{}
		for _, m := range strings.Split(only, ",") {
			if !contains(measureNames, m) {
				fatalf("unknown measure %q (have %s)", m, strings.Join(measureNames, ", "))
			}
			o.only[m] = true
		}
	}
	if o.runs < 3 || o.rtRuns < 3 || o.startRuns < 1 {
		fatalf("-runs and -roundtrip-runs must be at least 3 and -start-runs at least 1")
	}

	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fatalf("-cpuprofile: %v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fatalf("-cpuprofile: %v", err)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		fatalf("%v", err)
	}
}

func run(ctx context.Context, o options) error {
	dir := o.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "prsm-bench-")
		if err != nil {
			return err
		}
		dir = d
	}
	if !o.keep {
		defer os.RemoveAll(dir)
	} else {
		fmt.Fprintf(os.Stderr, "bench: keeping %s\n", dir)
	}
	bin := o.prsmBin
	if bin == "" {
		var err error
		if bin, err = buildPrsm(ctx, dir); err != nil {
			return err
		}
	}
	env, err := machine()
	if err != nil {
		return err
	}
	rep := &report{Machine: env, Runs: o.runs, Started: time.Now().UTC()}
	for _, n := range o.sizes {
		if err := ctx.Err(); err != nil {
			return err
		}
		b := &bench{o: o, n: n, dir: filepath.Join(dir, sizeName(n)), bin: bin, rep: rep}
		if err := b.all(ctx); err != nil {
			b.close()
			return fmt.Errorf("%s files: %w", sizeName(n), err)
		}
		b.close()
	}
	for _, n := range o.bulk {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := bulk(ctx, o, dir, bin, rep, n); err != nil {
			return fmt.Errorf("bulk %s: %w", sizeName(n), err)
		}
	}
	if err := historyBench(ctx, o, dir, bin, rep); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	rep.Checks = append(append(checks(rep, o.sizes), bulkChecks(rep, o.bulk)...), historyChecks(rep)...)
	rep.print(os.Stdout)
	if o.jsonOut != "" {
		if err := rep.writeJSON(o.jsonOut); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "bench: wrote %s\n", o.jsonOut)
	}
	return nil
}

func parseSize(s string) (int, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	mult := 1
	if strings.HasSuffix(s, "k") {
		mult, s = 1000, strings.TrimSuffix(s, "k")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("want a number of files like 10k")
	}
	return n * mult, nil
}

func sizeName(n int) string {
	if n%1000 == 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(1)
}
