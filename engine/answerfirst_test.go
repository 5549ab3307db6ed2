package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/store"
)

// Under engine.AnswerFirst the work after a tool call's answer (storing
// the capture, the sync states) waits until the caller says its answer is
// sent; the session stays locked meanwhile, and nothing is lost.
func TestAnswerFirstHoldsWorkUntilSent(t *testing.T) {
	eng, ws := newEngine(t)
	ctx := context.Background()
	s, err := eng.StartSession(ctx, engine.StartRequest{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	args := []byte(`{"file_path":"` + filepath.Join(s.WorktreePath, "a.txt") + `"}`)
	actx, sent := engine.AnswerFirst(ctx)
	if _, err := eng.StartToolCall(actx, s.ID, engine.ToolCallRequest{ToolCallID: "t1", ToolName: "Edit", Args: args}); err != nil {
		t.Fatal(err)
	}
	// Answered; the capture is not stored yet.
	if _, err := store.GetToolCall(ctx, eng.DB.Q(), s.ID, "t1"); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("capture stored before the answer was sent: %v", err)
	}
	if err := os.WriteFile(filepath.Join(s.WorktreePath, "a.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The complete waits for the held work (the session's lock).
	type result struct {
		recs *engine.Records
		err  error
	}
	done := make(chan result, 1)
	go func() {
		recs, err := eng.CompleteToolCall(ctx, s.ID, "t1", engine.CompleteRequest{})
		done <- result{recs, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("complete ran while the capture's work was held: %+v %v", r.recs, r.err)
	case <-time.After(100 * time.Millisecond):
	}
	sent()
	r := <-done
	if r.err != nil || len(r.recs.Records) != 1 || r.recs.Records[0].SyncState != prsm.SyncSynced {
		t.Fatalf("complete after send: %+v %v", r.recs, r.err)
	}
	tc, err := store.GetToolCall(ctx, eng.DB.Q(), s.ID, "t1")
	if err != nil || tc.CompletedAt == nil {
		t.Fatalf("tool call after send: %+v %v", tc, err)
	}
	if got, err := os.ReadFile(filepath.Join(ws, "a.txt")); err != nil || string(got) != "b\n" {
		t.Fatalf("workspace a.txt = %q %v", got, err)
	}
	sent() // a second call does nothing
	engine.Settle(eng)
}

// A caller that never gets to its answer (an error) still lets the work go:
// sent after an error runs what was held, and the engine closes.
func TestAnswerFirstSentAfterError(t *testing.T) {
	eng, _ := newEngine(t)
	ctx := context.Background()
	actx, sent := engine.AnswerFirst(ctx)
	if _, err := eng.StartToolCall(actx, "no-such-session", engine.ToolCallRequest{ToolCallID: "t1", ToolName: "Edit"}); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
	sent()
	eng.Close() // would hang on held work
}
