package engine_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testenv"
	"github.com/prsm-dev/prsm/internal/testgit"
)

// benchRepo builds a workspace with n committed files in 100 directories
// (testgit.CommitMany).
func benchRepo(b *testing.B, n int) (*engine.Engine, string) {
	b.Helper()
	eng, ws := newEngineTB(b)
	testgit.CommitMany(b, ws, n)
	return eng, ws
}

// BenchmarkToolCallRoundTrip measures one Edit of one file on a 10k-file
// repository: pre-tool capture, the edit, complete with detection, record
// and sync to the workspace. GitStatus is the per-call scan other tools run
// on the same worktree, for the ratio.
func BenchmarkToolCallRoundTrip(b *testing.B) {
	for _, n := range []int{10000, 50000} {
		benchRoundTrip(b, n)
	}
}

func benchRoundTrip(b *testing.B, n int) {
	eng, _ := benchRepo(b, n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := eng.StartWatching(ctx); err != nil {
		b.Fatal(err)
	}
	defer eng.StopWatching()
	s, err := eng.StartSession(ctx, api.StartRequest{})
	if err != nil {
		b.Fatal(err)
	}
	// Every op is a new tool call on a file no op edited before (until
	// next passes n): the testing package runs the body more than once,
	// and a repeated tool call id would be answered from the store.
	next := 0
	b.Run(fmt.Sprintf("%dk/prsm", n/1000), func(b *testing.B) {
		defer testenv.ReportCPU(b)()
		for range b.N {
			next++
			id := fmt.Sprintf("t%d", next)
			rel := fmt.Sprintf("d%03d/f%05d.txt", next%100, next%n)
			args := []byte(fmt.Sprintf(`{"file_path":%q}`, filepath.Join(s.WorktreePath, rel)))
			if _, err := eng.StartToolCall(ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Edit", Args: args}); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(s.WorktreePath, rel), []byte(lines(40, id)), 0o644); err != nil {
				b.Fatal(err)
			}
			res, err := eng.CompleteToolCall(ctx, s.ID, id, api.CompleteRequest{})
			if err != nil || len(res.Records) != 1 {
				b.Fatalf("%v %d", err, len(res.Records))
			}
		}
	})
	b.Run(fmt.Sprintf("%dk/git-status", n/1000), func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			cmd := exec.Command("git", "status", "--porcelain", "-z", "--untracked-files=all")
			cmd.Dir = s.WorktreePath
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSyncThroughput measures records per second: one Bash call that
// changes 100 files, recorded and synced.
func BenchmarkSyncThroughput(b *testing.B) {
	eng, _ := benchRepo(b, 1000)
	ctx := context.Background()
	s, err := eng.StartSession(ctx, api.StartRequest{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := fmt.Sprintf("b%d", i)
		for j := 0; j < 100; j++ {
			rel := fmt.Sprintf("d%03d/f%05d.txt", j, j)
			if err := os.WriteFile(filepath.Join(s.WorktreePath, rel), []byte(lines(40, id)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		res, err := eng.CompleteToolCall(ctx, s.ID, id, api.CompleteRequest{ToolName: "Bash"})
		if err != nil || len(res.Records) != 100 {
			b.Fatalf("%v %d", err, len(res.Records))
		}
	}
	b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkCheckpoint measures an automatic checkpoint after 10 edited
// files, on 10k- and 50k-file repositories, side by side with what other
// tools run: `git add -A && git commit` in a worktree, and a temp-index
// write-tree + commit-tree.
func BenchmarkCheckpoint(b *testing.B) {
	for _, n := range []int{10000, 50000} {
		eng, _ := benchRepo(b, n)
		ctx := context.Background()
		s, err := eng.StartSession(ctx, api.StartRequest{})
		if err != nil {
			b.Fatal(err)
		}
		round := 0
		edit10 := func(b *testing.B) {
			round++
			for j := 0; j < 10; j++ {
				rel := fmt.Sprintf("d%03d/f%05d.txt", j, j)
				if err := os.WriteFile(filepath.Join(s.WorktreePath, rel), []byte(lines(40, fmt.Sprint(round))), 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.Run(fmt.Sprintf("%dk/prsm", n/1000), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				edit10(b)
				if _, err := eng.CompleteToolCall(ctx, s.ID, fmt.Sprintf("e%d-%d", n, i), api.CompleteRequest{ToolName: "Bash"}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := eng.Turn(ctx, s.ID, api.TurnRequest{MessageIndex: i}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%dk/git-add-commit", n/1000), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				edit10(b)
				b.StartTimer()
				gitRun(b, s.WorktreePath, nil, "add", "-A")
				gitRun(b, s.WorktreePath, nil, "commit", "-qm", "cp", "--no-verify")
			}
		})
		b.Run(fmt.Sprintf("%dk/temp-index-write-tree", n/1000), func(b *testing.B) {
			idx := filepath.Join(b.TempDir(), "index")
			env := []string{"GIT_INDEX_FILE=" + idx}
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				edit10(b)
				os.Remove(idx)
				gitRun(b, s.WorktreePath, env, "read-tree", "HEAD")
				b.StartTimer()
				gitRun(b, s.WorktreePath, env, "add", "-A")
				tree := gitRun(b, s.WorktreePath, env, "write-tree")
				gitRun(b, s.WorktreePath, env, "commit-tree", tree, "-m", "cp")
			}
		})
	}
}

func gitRun(b *testing.B, dir string, env []string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// BenchmarkRollback100 measures a rewind to a checkpoint after one Bash
// call changed 100 files: the worktree and the workspace restored, the
// records rejected, a safety checkpoint taken.
func BenchmarkRollback100(b *testing.B) {
	eng, _ := benchRepo(b, 10000)
	ctx := context.Background()
	s, err := eng.StartSession(ctx, api.StartRequest{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cp, err := eng.Turn(ctx, s.ID, api.TurnRequest{MessageIndex: i + 1})
		if err != nil {
			b.Fatal(err)
		}
		id := fmt.Sprintf("rb%d", i)
		for j := 0; j < 100; j++ {
			rel := fmt.Sprintf("d%03d/f%05d.txt", j, j+100*(i%10))
			if err := os.WriteFile(filepath.Join(s.WorktreePath, rel), []byte(lines(40, id)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		if res, err := eng.CompleteToolCall(ctx, s.ID, id, api.CompleteRequest{ToolName: "Bash"}); err != nil || len(res.Records) != 100 {
			b.Fatalf("%v %d", err, len(res.Records))
		}
		b.StartTimer()
		plan, err := eng.Rewind(ctx, s.ID, cp.ID, false)
		if err != nil {
			b.Fatal(err)
		}
		if len(plan.Operations) != 100 {
			b.Fatalf("%d operations", len(plan.Operations))
		}
	}
}
