package engine_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testgit"
)

// benchRepo builds a workspace with n committed files in 100 directories.
func benchRepo(b *testing.B, n int) (*engine.Engine, string) {
	b.Helper()
	eng, ws := newEngineTB(b)
	for i := 0; i < n; i++ {
		p := filepath.Join(ws, fmt.Sprintf("d%03d", i%100), fmt.Sprintf("f%05d.txt", i))
		if i < 100 {
			os.MkdirAll(filepath.Dir(p), 0o755)
		}
		if err := os.WriteFile(p, []byte(lines(40, fmt.Sprint(i))), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	testgit.Git(b, ws, "add", "-A")
	testgit.Git(b, ws, "commit", "-qm", "many")
	return eng, ws
}

// BenchmarkToolCallRoundTrip measures one Edit of one file on a 10k-file
// repository: pre-tool capture, the edit, complete with detection, record
// and sync to the workspace. GitStatus is the per-call scan other tools run
// on the same worktree, for the ratio.
func BenchmarkToolCallRoundTrip(b *testing.B) {
	eng, _ := benchRepo(b, 10000)
	ctx := context.Background()
	s, err := eng.StartSession(ctx, engine.StartRequest{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("prsm", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			id := fmt.Sprintf("t%d", i)
			rel := fmt.Sprintf("d%03d/f%05d.txt", i%100, i%10000)
			args := []byte(fmt.Sprintf(`{"file_path":%q}`, filepath.Join(s.WorktreePath, rel)))
			if _, err := eng.StartToolCall(ctx, s.ID, engine.ToolCallRequest{ToolCallID: id, ToolName: "Edit", Args: args}); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(s.WorktreePath, rel), []byte(lines(40, id)), 0o644); err != nil {
				b.Fatal(err)
			}
			res, err := eng.CompleteToolCall(ctx, s.ID, id, engine.CompleteRequest{})
			if err != nil || len(res.Records) != 1 {
				b.Fatalf("%v %d", err, len(res.Records))
			}
		}
	})
	b.Run("git-status", func(b *testing.B) {
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
	s, err := eng.StartSession(ctx, engine.StartRequest{})
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
		res, err := eng.CompleteToolCall(ctx, s.ID, id, engine.CompleteRequest{ToolName: "Bash"})
		if err != nil || len(res.Records) != 100 {
			b.Fatalf("%v %d", err, len(res.Records))
		}
	}
	b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "records/s")
}
