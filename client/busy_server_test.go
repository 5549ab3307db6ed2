package client_test

// The busy store's retry against the real server. An external test: the
// server's http hook route links package hook, which links the client, so
// an internal test of the client may not import the server.

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	stdsync "sync"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/internal/testenv"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/server"
)

// busyCounter counts the server's "store busy" warnings: one per busy
// answer.
type busyCounter struct {
	slog.Handler
	mu stdsync.Mutex
	n  int
}

func (h *busyCounter) Enabled(context.Context, slog.Level) bool { return true }

func (h *busyCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "store busy" {
		h.mu.Lock()
		h.n++
		h.mu.Unlock()
	}
	return nil
}

func (h *busyCounter) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

// TestBusyStoreRetried: while another connection holds the database's
// write lock, a reject (through net/http) and a complete (through the
// kept connection of the tool-call hooks) are answered 503 busy; the
// client asks again, and both succeed once the lock goes.
func TestBusyStoreRetried(t *testing.T) {
	testgit.Env(t)
	ctx := context.Background()
	ws := testgit.Init(t, "ws")
	testgit.Commit(t, ws, "init", map[string]string{"a.txt": "a\n"})
	pdir := filepath.Join(t.TempDir(), "project")
	busy := &busyCounter{Handler: slog.DiscardHandler}
	eng := testenv.Engine(t, ws, pdir, slog.New(busy))
	srv, err := server.New(eng, server.Config{ProjectDir: pdir})
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { srv.Serve(sctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	cl := client.New(&api.Info{Addr: srv.Addr(), Token: srv.Token()})

	// Two sessions, so that the two calls wait for the database side by
	// side rather than one after the other on a session's lock.
	var ss [2]*prsm.Session
	for i := range ss {
		if ss[i], err = cl.StartSession(ctx, api.StartRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cl.StartToolCall(ctx, ss[0].ID, api.ToolCallRequest{ToolCallID: "e1", ToolName: "Bash"}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ss[0].WorktreePath, "a.txt"), []byte("e1\n"), 0o644)
	if _, err := cl.CompleteToolCall(ctx, ss[0].ID, "e1", api.CompleteRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.StartToolCall(ctx, ss[1].ID, api.ToolCallRequest{ToolCallID: "e2", ToolName: "Write",
		Args: json.RawMessage(`{"file_path":"new.txt"}`)}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ss[1].WorktreePath, "new.txt"), []byte("new\n"), 0o644)

	release := testenv.HoldWriteLock(t, eng.DB.Path())
	var rejected, completed *api.Records
	var rejectErr, completeErr error
	var wg stdsync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); rejected, rejectErr = cl.Reject(ctx, ss[0].ID, "e1") }()
	go func() {
		defer wg.Done()
		completed, completeErr = cl.CompleteToolCall(ctx, ss[1].ID, "e2", api.CompleteRequest{})
	}()
	for limit := time.Now().Add(30 * time.Second); busy.count() < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(limit) {
			t.Fatalf("busy answers after 30 s: %d", busy.count())
		}
	}
	release()
	wg.Wait()
	if rejectErr != nil || len(rejected.Records) != 1 || rejected.Records[0].Status != prsm.StatusRejected {
		t.Errorf("reject: %+v %v", rejected, rejectErr)
	}
	if completeErr != nil || len(completed.Records) != 1 || completed.Records[0].RelPath != "new.txt" {
		t.Errorf("complete: %+v %v", completed, completeErr)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "a\n" {
		t.Errorf("workspace a.txt after the reject: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "new.txt")); string(b) != "new\n" {
		t.Errorf("workspace new.txt after the complete: %q", b)
	}
	t.Logf("busy answers: %d", busy.count())
}
