package engine_test

import (
	"encoding/json"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
)

// An edit reported only afterwards (Cursor's afterFileEdit: a complete
// with no capture) that the watcher recorded first, as a Watch record,
// becomes the edit's: the record's id, tool call and tool are the edit's,
// its content and status stay. A record already decided stays the
// watcher's, and a complete of a file another record came after adopts
// nothing.
func TestCompleteAdoptsTheWatchersRecordOfItsFile(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	args, _ := json.Marshal(map[string]string{"file_path": s.WorktreePath + "/f.txt"})

	write(t, s.WorktreePath, "f.txt", "edited\n")
	watched, err := f.eng.WatchNow(f.ctx, s.ID)
	if err != nil || len(watched) != 1 || watched[0].ToolName != "Watch" {
		t.Fatalf("watch: %v %+v", err, watched)
	}
	res, err := f.eng.CompleteToolCall(f.ctx, s.ID, "cursor-e1", api.CompleteRequest{ToolName: "Edit", Args: args, AgentID: "cursor"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 1 || res.Records[0].ID != "cursor-e1" || res.Records[0].ToolCallID != "cursor-e1" ||
		res.Records[0].ToolName != "Edit" || res.Records[0].AgentID != "cursor" || res.Records[0].Seq != watched[0].Seq {
		t.Fatalf("complete answered %+v, want the watcher's record (seq %d) as cursor-e1's Edit", res.Records, watched[0].Seq)
	}
	all, err := store.ListRecords(f.ctx, f.eng.DB.Q(), store.RecordFilter{SessionID: s.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].ID != "cursor-e1" || all[0].Status != prsm.StatusPending || all[0].NewHash != watched[0].NewHash {
		t.Fatalf("records: %+v", all)
	}
	if got := read(t, f.ws, "f.txt"); got != "edited\n" {
		t.Fatalf("workspace f.txt = %q", got)
	}

	// Decided: the record stays the watcher's.
	write(t, s.WorktreePath, "f.txt", "again\n")
	watched, err = f.eng.WatchNow(f.ctx, s.ID)
	if err != nil || len(watched) != 1 {
		t.Fatalf("watch: %v %+v", err, watched)
	}
	if _, err := f.eng.Accept(f.ctx, s.ID, watched[0].ID); err != nil {
		t.Fatal(err)
	}
	res, err = f.eng.CompleteToolCall(f.ctx, s.ID, "cursor-e2", api.CompleteRequest{ToolName: "Edit", Args: args, AgentID: "cursor"})
	if err != nil || len(res.Records) != 0 {
		t.Fatalf("complete after an accept: %v %+v, want no records", err, res.Records)
	}
	if r := f.record(s, watched[0].ID); r.ToolName != "Watch" || r.Status != prsm.StatusAccepted {
		t.Fatalf("the accepted record became %+v", r)
	}
}
