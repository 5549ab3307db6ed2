package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// report is everything one run measured.
type report struct {
	Machine map[string]string `json:"machine"`
	Runs    int               `json:"runs"`
	Started time.Time         `json:"started"`
	Results []*result         `json:"results"`
	Checks  []check           `json:"checks"`
}

// result is one subject of one measure at one repository size: prsm, or a
// baseline it is compared with.
type result struct {
	Measure string    `json:"measure"`
	Files   int       `json:"files"`
	Subject string    `json:"subject"`
	Unit    string    `json:"unit"`
	N       int       `json:"n"`
	Median  float64   `json:"median"`
	Min     float64   `json:"min"`
	Max     float64   `json:"max"`
	P99     float64   `json:"p99"`
	Samples []float64 `json:"samples"`
	// Baseline marks the git CLI approaches prsm is compared with.
	Baseline bool   `json:"baseline"`
	Note     string `json:"note,omitempty"`
}

// check is one target of the performance issue, evaluated.
type check struct {
	Target string  `json:"target"`
	Value  string  `json:"value"`
	OK     bool    `json:"ok"`
	Files  int     `json:"files"`
	Figure float64 `json:"figure"`
	// Binding: the issue sets its targets on the 50k-file repository;
	// the same figures at the other sizes are for reference (a git
	// status of 10k files takes about 20 ms, so 50x of it is not a goal).
	Binding bool `json:"binding"`
}

// targetFiles is the repository size the targets are set on.
const targetFiles = 50_000

func durations(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d) / float64(time.Millisecond)
	}
	return out
}

func (r *report) add(measure string, files int, subject, unit string, baseline bool, samples []float64, note string) *result {
	res := &result{Measure: measure, Files: files, Subject: subject, Unit: unit, N: len(samples), Samples: samples,
		Baseline: baseline, Note: note}
	if len(samples) > 0 {
		s := append([]float64(nil), samples...)
		sort.Float64s(s)
		res.Min, res.Max = s[0], s[len(s)-1]
		res.Median = quantile(s, 0.5)
		res.P99 = quantile(s, 0.99)
	}
	r.Results = append(r.Results, res)
	return res
}

// quantile of sorted s, by the nearest-rank method.
func quantile(s []float64, q float64) float64 {
	if len(s) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func (r *report) find(measure string, files int, subject string) *result {
	for _, res := range r.Results {
		if res.Measure == measure && res.Files == files && res.Subject == subject {
			return res
		}
	}
	return nil
}

// prsmOf is the prsm result of a measure at a size.
func (r *report) prsmOf(measure string, files int) *result {
	for _, res := range r.Results {
		if res.Measure == measure && res.Files == files && !res.Baseline {
			return res
		}
	}
	return nil
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "\nprsm bench  %s  (%s, %s cores, %s)\n\n", r.Started.Format(time.RFC3339), r.Machine["cpu"], r.Machine["cores"], r.Machine["git"])
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "measure\tfiles\tsubject\tmedian\tmin\tmax\tp99\tn\tratio\t")
	last := ""
	for _, res := range r.Results {
		key := res.Measure + "/" + sizeName(res.Files)
		if last != "" && key != last {
			fmt.Fprintln(tw, "\t\t\t\t\t\t\t\t\t")
		}
		last = key
		ratio := ""
		if p := r.prsmOf(res.Measure, res.Files); res.Baseline && p != nil && p.Median > 0 {
			ratio = fmt.Sprintf("%.1fx prsm", res.Median/p.Median)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t\n", res.Measure, sizeName(res.Files), res.Subject,
			num(res.Median, res.Unit), num(res.Min, res.Unit), num(res.Max, res.Unit), num(res.P99, res.Unit), res.N, ratio)
	}
	tw.Flush()
	notes := map[string]bool{}
	for _, res := range r.Results {
		if res.Note != "" && !notes[res.Note] {
			notes[res.Note] = true
			fmt.Fprintf(w, "  %s: %s\n", res.Measure+"/"+res.Subject, res.Note)
		}
	}
	if len(r.Checks) > 0 {
		fmt.Fprintf(w, "\ntargets (set on %s files, the bulk ones on %s new files; other sizes for reference, marked -)\n", sizeName(targetFiles), sizeName(bulkTargetFiles))
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, c := range r.Checks {
			mark := "ok  "
			switch {
			case !c.Binding:
				mark = "-   "
			case !c.OK:
				mark = "MISS"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", mark, sizeName(c.Files), c.Target, c.Value)
		}
		tw.Flush()
	}
}

func num(v float64, unit string) string {
	switch {
	case unit == "ms" && v < 10:
		return fmt.Sprintf("%.2f ms", v)
	case unit == "ms":
		return fmt.Sprintf("%.1f ms", v)
	default:
		return fmt.Sprintf("%.1f %s", v, unit)
	}
}

func (r *report) writeJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// checks evaluates the targets of the performance issue at every size,
// and the scaling ones between the smallest and each larger size.
func checks(r *report, sizes []int) []check {
	var out []check
	if len(sizes) == 0 {
		return nil
	}
	small := sizes[0]
	for _, n := range sizes {
		if p, g := r.prsmOf("roundtrip", n), r.find("roundtrip", n, "git status"); p != nil && g != nil {
			ratio := g.Median / p.Median
			out = append(out, check{Target: "tool call round trip >= 50x faster than git status", Files: n, Figure: ratio,
				Value: fmt.Sprintf("%.1fx (%.2f ms vs %.1f ms)", ratio, p.Median, g.Median), OK: ratio >= 50})
		}
		if p, g := r.prsmOf("checkpoint", n), r.find("checkpoint", n, "git add -A && git commit"); p != nil && g != nil {
			ratio := g.Median / p.Median
			out = append(out, check{Target: "checkpoint >= 20x faster than add+commit", Files: n, Figure: ratio,
				Value: fmt.Sprintf("%.1fx (%.2f ms vs %.1f ms)", ratio, p.Median, g.Median), OK: ratio >= 20})
		}
		if g := r.find("session-start", n, "git worktree add"); g != nil && g.Median > 0 {
			if p := r.find("session-start", n, "prsm, warm worktree"); p != nil {
				ratio := p.Median / g.Median
				out = append(out, check{Target: "session start, warm worktree <= 10% of git worktree add", Files: n, Figure: ratio,
					Value: fmt.Sprintf("%.0f%% (%.0f ms vs %.0f ms)", 100*ratio, p.Median, g.Median), OK: ratio <= 0.10})
			}
			if p := r.find("session-start", n, "prsm, cold"); p != nil {
				ratio := p.Median / g.Median
				out = append(out, check{Target: "session start, cold <= 1.0x git worktree add", Files: n, Figure: ratio,
					Value: fmt.Sprintf("%.2fx (%.0f ms vs %.0f ms)", ratio, p.Median, g.Median), OK: ratio <= 1.0})
			}
		}
		if p := r.prsmOf("rollback-100", n); p != nil {
			out = append(out, check{Target: "rollback of 100 files < 150 ms", Files: n, Figure: p.Median,
				Value: fmt.Sprintf("%.1f ms median, %.1f ms max", p.Median, p.Max), OK: p.Median < 150})
		}
		if p := r.prsmOf("event-latency", n); p != nil {
			out = append(out, check{Target: "event latency p99 < 10 ms", Files: n, Figure: p.P99,
				Value: fmt.Sprintf("p99 %.2f ms, median %.2f ms", p.P99, p.Median), OK: p.P99 < 10})
		}
		if p := r.prsmOf("rss-10-sessions", n); p != nil {
			out = append(out, check{Target: "server RSS with 10 sessions < 150 MB", Files: n, Figure: p.Max,
				Value: fmt.Sprintf("%.1f MB", p.Max), OK: p.Max < 150})
		}
		if p := r.prsmOf("store-growth", n); p != nil {
			out = append(out, check{Target: "store growth, 100 turns x 10 edits < 10 MB", Files: n, Figure: p.Median,
				Value: fmt.Sprintf("%.2f MB", p.Median), OK: p.Median < 10})
		}
		out = append(out, hookChecks(r, n)...)
		if n == small {
			continue
		}
		for _, m := range []string{"roundtrip", "checkpoint"} {
			a, b := r.prsmOf(m, small), r.prsmOf(m, n)
			if a == nil || b == nil || a.Median == 0 {
				continue
			}
			ratio := b.Median / a.Median
			out = append(out, check{Target: fmt.Sprintf("%s cost at %s within 1.5x of %s", m, sizeName(n), sizeName(small)), Files: n,
				Figure: ratio, Value: fmt.Sprintf("%.2fx (%.2f ms vs %.2f ms)", ratio, b.Median, a.Median), OK: ratio <= 1.5})
		}
	}
	for i := range out {
		out[i].Binding = out[i].Files == targetFiles
	}
	return out
}

// machine describes where the figures were taken.
func machine() (map[string]string, error) {
	m := map[string]string{"cores": fmt.Sprint(runtime.NumCPU()), "go": runtime.Version(), "os": runtime.GOOS + "/" + runtime.GOARCH}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				if i := strings.IndexByte(l, ':'); i > 0 {
					m["cpu"] = strings.TrimSpace(l[i+1:])
				}
				break
			}
		}
	}
	out, err := exec.Command("git", "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("git is needed: %w", err)
	}
	m["git"] = strings.TrimSpace(string(out))
	return m, nil
}
