package engine_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// TestRecordSummary: a list row's one line (issue 37): the shell command
// of a shell call (its first line), else the first line the change adds,
// or the first it removes.
func TestRecordSummary(t *testing.T) {
	f := newFixture(t)
	events, stop := f.eng.Events.Subscribe()
	defer stop()
	s := f.start(prsm.ModeReview)
	base := read(t, f.ws, "f.txt")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 4, "  return x + 1  ")) })
	args, _ := json.Marshal(map[string]string{"command": "\n  sed -i 's/a/b/' g.txt && make build\necho done"})
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "b1", ToolName: "Bash", Args: args, AgentID: "claude"}); err != nil {
		t.Fatal(err)
	}
	write(t, s.WorktreePath, "g.txt", "b\n")
	f.complete(s, "b1")
	f.tool(s, "d1", "Edit", "f.txt", func(wt string) {
		lines := read(t, wt, "f.txt")
		write(t, wt, "f.txt", lines[len("line 1 \n"):]) // takes out the first line
	})
	recs, err := f.eng.Records(f.ctx, s.ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.eng.FillContent(f.ctx, recs); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"e1": "return x + 1", "b1": "sed -i 's/a/b/' g.txt && make build", "d1": "removed: line 1"}
	for _, r := range recs {
		if r.Summary != want[r.ToolCallID] {
			t.Errorf("%s: summary %q, want %q", r.ID, r.Summary, want[r.ToolCallID])
		}
	}
	if len(recs) != 3 {
		t.Errorf("records: %s", summary(recs))
	}
	// The file_changed events carry it too.
	seen := map[string]string{}
	for len(seen) < 3 {
		select {
		case ev := <-events:
			if r, ok := ev.Data.(*prsm.Record); ok && ev.Type == api.EventFileChanged {
				seen[r.ToolCallID] = r.Summary
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("file_changed events seen: %v", seen)
		}
	}
	for tc, got := range seen {
		if got != want[tc] {
			t.Errorf("event of %s: summary %q, want %q", tc, got, want[tc])
		}
	}
}
