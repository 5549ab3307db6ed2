package engine_test

import (
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// TestEndedSessionRefusesWorkAndLetsGo: every call that takes only an
// active session refuses an ended one with session_ended, and lets the
// session's lock go: each call runs twice, and the second would wait for
// ever on a lock the first kept. The session ends both ways: by
// EndSession (its state forgotten) and by a vanished worktree that
// Reconcile ends (its state held since its tool calls).
func TestEndedSessionRefusesWorkAndLetsGo(t *testing.T) {
	for _, how := range []string{"end", "vanish"} {
		t.Run(how, func(t *testing.T) {
			f := newFixture(t)
			s := f.start("")
			f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", "edited\n") })
			if how == "end" {
				if _, err := f.eng.EndSession(f.ctx, s.ID, true); err != nil {
					t.Fatal(err)
				}
			} else {
				if err := os.RemoveAll(s.WorktreePath); err != nil {
					t.Fatal(err)
				}
				if _, err := f.eng.Reconcile(f.ctx); err != nil {
					t.Fatal(err)
				}
			}
			calls := map[string]func() error{
				"turn": func() error {
					_, err := f.eng.Turn(f.ctx, s.ID, api.TurnRequest{MessageIndex: 5, Prompt: "p"})
					return err
				},
				"end turn": func() error {
					_, err := f.eng.EndTurn(f.ctx, s.ID)
					return err
				},
				"checkpoint": func() error {
					_, err := f.eng.CreateCheckpoint(f.ctx, s.ID, api.CheckpointRequest{Name: "late"})
					return err
				},
				"rollback": func() error {
					_, err := f.eng.SelectRewind(f.ctx, s.ID, api.RollbackRequest{Last: 1, DryRun: true})
					return err
				},
				"tool call": func() error {
					_, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "e2", ToolName: "Edit", Args: json.RawMessage(`{}`)})
					return err
				},
			}
			for name, call := range calls {
				for i := range 2 {
					done := make(chan error, 1)
					go func() { done <- call() }()
					var err error
					select {
					case err = <-done:
					case <-time.After(30 * time.Second):
						t.Fatalf("%s #%d on an ended session: still waiting after 30s (a lock kept)", name, i+1)
					}
					var pe *prsm.Error
					if !errors.As(err, &pe) || pe.Code != "session_ended" || pe.Error() != "session "+s.ID+" has ended" {
						t.Fatalf("%s #%d on an ended session: %v, want session_ended %q", name, i+1, err, "session "+s.ID+" has ended")
					}
				}
			}
		})
	}
}
