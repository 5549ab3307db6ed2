package engine_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/engine"
)

// capture starts tool call id (an Edit of file) without completing it.
func (f *fixture) capture(s *prsm.Session, id, file string) {
	f.t.Helper()
	b, _ := json.Marshal(map[string]string{"file_path": filepath.Join(s.WorktreePath, file)})
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, engine.ToolCallRequest{ToolCallID: id, ToolName: "Edit", Args: b}); err != nil {
		f.t.Fatalf("start %s: %v", id, err)
	}
}

func (f *fixture) complete(s *prsm.Session, id string) []*prsm.Record {
	f.t.Helper()
	res, err := f.eng.CompleteToolCall(f.ctx, s.ID, id, engine.CompleteRequest{})
	if err != nil {
		f.t.Fatalf("complete %s: %v", id, err)
	}
	return res.Records
}

// TestEarlyWriteServesAnEdit: an Edit's workspace write is started before
// complete knows the change, and is the one placed.
func TestEarlyWriteServesAnEdit(t *testing.T) {
	f := newFixture(t)
	s := f.start("auto")
	want := replaceLine(lines(20, ""), 4, "agent")
	recs := f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", want) })
	if got := summary(recs); got != "e1 modify f.txt pending/synced" {
		t.Fatalf("records:\n%s", got)
	}
	if got := read(t, f.ws, "f.txt"); got != want {
		t.Fatalf("workspace f.txt = %q, want %q", got, want)
	}
	if n := engine.EarlyPlaced(f.eng); n != 1 {
		t.Fatalf("early writes placed = %d, want 1", n)
	}
}

// TestEarlyWriteOfAStaleBaseIsDropped: two calls name the same file; the
// later one completes first and records it, so what the earlier one's
// capture knew of the file is stale. Its early write (made against that
// base, which would conflict) is dropped, and the write is made against
// what is known now.
func TestEarlyWriteOfAStaleBaseIsDropped(t *testing.T) {
	f := newFixture(t)
	s := f.start("auto")
	base := lines(20, "")
	f.capture(s, "a", "f.txt")
	f.capture(s, "b", "f.txt")
	v1 := replaceLine(base, 3, "by b")
	write(t, s.WorktreePath, "f.txt", v1)
	if got := summary(f.complete(s, "b")); got != "b modify f.txt pending/synced" {
		t.Fatalf("records of b:\n%s", got)
	}
	v2 := replaceLine(v1, 3, "by a")
	write(t, s.WorktreePath, "f.txt", v2)
	recs := f.complete(s, "a")
	if got := summary(recs); got != "a modify f.txt pending/synced" {
		t.Fatalf("records of a:\n%s", got)
	}
	if got := read(t, f.ws, "f.txt"); got != v2 {
		t.Fatalf("workspace f.txt = %q, want %q", got, v2)
	}
	if *recs[0].OldContent != v1 {
		t.Fatalf("record a's old content = %q, want b's %q", *recs[0].OldContent, v1)
	}
	if n := engine.EarlyPlaced(f.eng); n != 1 {
		t.Fatalf("early writes placed = %d, want 1 (b's only)", n)
	}
}

// TestEarlyWriteDroppedWhenMoreChanged: a tool that changed more than the
// file it names gets every change written, not just the early one.
func TestEarlyWriteDroppedWhenMoreChanged(t *testing.T) {
	f := newFixture(t)
	s := f.start("auto")
	want := replaceLine(lines(20, ""), 9, "agent")
	recs := f.tool(s, "e1", "Edit", "f.txt", func(wt string) {
		write(t, wt, "f.txt", want)
		write(t, wt, "keep.txt", "kept no more\n")
	})
	if got := summary(recs); got != "e1:0 modify f.txt pending/synced\ne1:1 modify keep.txt pending/synced" {
		t.Fatalf("records:\n%s", got)
	}
	if got := read(t, f.ws, "f.txt"); got != want {
		t.Fatalf("workspace f.txt = %q, want %q", got, want)
	}
	if got := read(t, f.ws, "keep.txt"); got != "kept no more\n" {
		t.Fatalf("workspace keep.txt = %q", got)
	}
	if n := engine.EarlyPlaced(f.eng); n != 0 {
		t.Fatalf("early writes placed = %d, want 0", n)
	}
}
