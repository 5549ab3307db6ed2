package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/internal/testenv"
	"github.com/prsm-dev/prsm/internal/testgit"
)

// BenchmarkToolCallRoundTripHTTP is engine's BenchmarkToolCallRoundTrip
// through the real HTTP server and client, in one process: one Edit of
// one file of a 10k-file repository (start, write, complete with sync).
// Its cpu-µs/op against the engine's is what the HTTP layer costs.
// events=true adds an SSE client that reads every event, as the extension
// does.
func BenchmarkToolCallRoundTripHTTP(b *testing.B) {
	const n = 10000
	testgit.Env(b)
	ws := testgit.Init(b, "ws")
	testgit.CommitMany(b, ws, n)
	pdir := filepath.Join(b.TempDir(), "project")
	eng := testenv.Engine(b, ws, pdir, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := eng.StartWatching(ctx); err != nil {
		b.Fatal(err)
	}
	defer eng.StopWatching()
	info, stop := serveEngine(b, ctx, eng, pdir)
	defer stop()
	cl := client.New(info)
	s, err := cl.StartSession(ctx, api.StartRequest{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	next := 0
	for _, events := range []bool{false, true} {
		b.Run(fmt.Sprintf("events=%v", events), func(b *testing.B) {
			if events {
				lctx, cancel := context.WithCancel(ctx)
				defer cancel()
				if _, err := listen(lctx, info); err != nil {
					b.Fatal(err)
				}
			}
			defer testenv.ReportCPU(b)()
			for range b.N {
				next++
				id := fmt.Sprintf("t%d", next)
				rel := fmt.Sprintf("d%03d/f%05d.txt", next%100, next%n)
				p := filepath.Join(s.WorktreePath, rel)
				args, _ := json.Marshal(map[string]string{"file_path": p})
				if _, err := cl.StartToolCall(ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Edit", Args: args, Cwd: s.WorktreePath}); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(testgit.Lines(40, id)), 0o644); err != nil {
					b.Fatal(err)
				}
				res, err := cl.CompleteToolCall(ctx, s.ID, id, api.CompleteRequest{Result: json.RawMessage(`{"success":true}`)})
				if err != nil || len(res.Records) != 1 || res.Records[0].SyncState != prsm.SyncSynced {
					b.Fatalf("complete %s: %v %+v", id, err, res)
				}
			}
		})
	}
}
