package engine_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// TestAnswerCarriesPreToolContent: a file changed outside any tool call
// before the call starts is recorded with the call (from what the tracker
// knew), and the answer carries the three contents: the known one, what
// the tool found, and what it left; a read of the record says the same.
func TestAnswerCarriesPreToolContent(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	outside := replaceLine(base, 2, "outside")
	write(t, s.WorktreePath, "f.txt", outside)
	tool := replaceLine(outside, 9, "tool")
	recs := f.tool(s, "t1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", tool) })
	if len(recs) != 1 {
		t.Fatalf("records: %s", summary(recs))
	}
	check := func(what string, r *prsm.Record) {
		t.Helper()
		if r.OldContent == nil || *r.OldContent != base || r.NewContent == nil || *r.NewContent != tool ||
			r.PreToolContent == nil || *r.PreToolContent != outside {
			t.Errorf("%s: contents old/pre-tool/new are not base/outside/tool: %v %v %v", what, r.OldContent != nil, r.PreToolContent != nil, r.NewContent != nil)
		}
	}
	check("complete's answer", recs[0])
	read, err := f.eng.RecordsOf(f.ctx, s.ID, "t1")
	if err != nil || len(read) != 1 {
		t.Fatal(err)
	}
	if err := f.eng.FillContent(f.ctx, read); err != nil {
		t.Fatal(err)
	}
	check("record read back", read[0])
}

// TestRepeatedCaptureIsNoOp: a capture of a tool call the session has
// already (captured, completed without a capture, or from before a
// restart) answers with the stored call and changes nothing.
func TestRepeatedCaptureIsNoOp(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	f.tool(s, "t1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", "one\n") })
	// t2 completes without a capture (its row is inserted by complete),
	// then its capture comes late, naming another tool.
	write(t, s.WorktreePath, "keep.txt", "two\n")
	res, err := f.eng.CompleteToolCall(f.ctx, s.ID, "t2", api.CompleteRequest{ToolName: "Write"})
	if err != nil || summary(res.Records) != "t2 modify keep.txt pending/synced" {
		t.Fatalf("complete t2: %v %s", err, summary(res.Records))
	}
	capture := func(id, tool string) *api.ToolCallAnswer {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"file_path": filepath.Join(s.WorktreePath, "f.txt")})
		ans, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: tool, Args: args})
		if err != nil {
			t.Fatalf("capture %s: %v", id, err)
		}
		return ans
	}
	ckpts := func() int {
		t.Helper()
		list, err := f.eng.Checkpoints(f.ctx, s.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	n := ckpts()
	for round, restart := range []bool{false, true} {
		if restart {
			f.restart()
		}
		if ans := capture("t2", "Edit"); ans.ToolName != "Write" {
			t.Fatalf("round %d: late capture of t2 answered %+v, want the stored call (Write)", round, ans)
		}
		if ans := capture("t1", "Bash"); ans.ToolName != "Edit" {
			t.Fatalf("round %d: repeated capture of t1 answered %+v, want the stored call (Edit)", round, ans)
		}
	}
	if got := ckpts(); got != n {
		t.Errorf("repeated captures took %d checkpoints", got-n)
	}
	// A change now is no tool call's: repeating t2's complete returns its
	// records as they were.
	write(t, s.WorktreePath, "f.txt", "three\n")
	again, err := f.eng.CompleteToolCall(f.ctx, s.ID, "t2", api.CompleteRequest{})
	if err != nil || summary(again.Records) != summary(res.Records) {
		t.Fatalf("repeated complete of t2: %v %s", err, summary(again.Records))
	}
}
