package store

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
)

func TestToolCallRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	q := db.Q()
	mustSession(t, q, "s1", t0)
	mustSession(t, q, "s2", t0)
	in := &prsm.ToolCall{
		SessionID: "s1", ID: "t1", ToolName: "Edit", Args: []byte(`{"file_path":"a"}`),
		AgentID: "agent", Cwd: "/ws", MessageIndex: 7, Snapshot: []byte{0, 1, 2, 255},
		StartedAt: t0,
	}
	if err := InsertToolCall(ctx, q, in); err != nil {
		t.Fatal(err)
	}
	got, err := GetToolCall(ctx, q, "s1", "t1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, in) {
		t.Fatalf("GetToolCall =\n%+v\nwant\n%+v", got, in)
	}
	if err := InsertToolCall(ctx, q, in); !errors.Is(err, prsm.ErrConflict) {
		t.Fatalf("duplicate InsertToolCall error = %v, want ErrConflict", err)
	}
	// The same id in another session is a different tool call.
	other := *in
	other.SessionID = "s2"
	if err := InsertToolCall(ctx, q, &other); err != nil {
		t.Fatalf("same id in another session: %v", err)
	}
	missing := *in
	missing.SessionID = "nope"
	if err := InsertToolCall(ctx, q, &missing); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("InsertToolCall for a missing session error = %v, want ErrNotFound", err)
	}

	done := t0.Add(time.Minute)
	if err := CompleteToolCall(ctx, q, "s1", "t1", []byte(`{"ok":true}`), done); err != nil {
		t.Fatal(err)
	}
	if err := CompleteToolCall(ctx, q, "s1", "nope", nil, done); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("CompleteToolCall(nope) error = %v, want ErrNotFound", err)
	}
	got, err = GetToolCall(ctx, q, "s1", "t1")
	if err != nil {
		t.Fatal(err)
	}
	want := *in
	want.Result = []byte(`{"ok":true}`)
	want.CompletedAt = &done
	if !reflect.DeepEqual(got, &want) {
		t.Fatalf("completed tool call =\n%+v\nwant\n%+v", got, &want)
	}
	if _, err := GetToolCall(ctx, q, "s2", "nope"); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("GetToolCall(nope) error = %v, want ErrNotFound", err)
	}

	second := &prsm.ToolCall{SessionID: "s1", ID: "t0", ToolName: "Bash", StartedAt: t0.Add(time.Second)}
	if err := InsertToolCall(ctx, q, second); err != nil {
		t.Fatal(err)
	}
	list, err := ListToolCalls(ctx, q, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != "t1" || list[1].ID != "t0" {
		t.Fatalf("ListToolCalls = %+v, want t1 then t0", list)
	}
	if list[1].Args != nil || list[1].Result != nil || list[1].CompletedAt != nil {
		t.Fatalf("unset fields came back set: %+v", list[1])
	}
}

// TestToolCallKeepsBulkyJSONShort: a tool call keeps its arguments and
// result, not the file contents they may carry (a Write's content, the
// whole file Claude Code sends back for an Edit): the records' blobs
// have those. The short fields stay as they are.
func TestToolCallKeepsBulkyJSONShort(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	q := db.Q()
	mustSession(t, q, "s1", t0)
	big := strings.Repeat("x", 400<<10)
	args, _ := json.Marshal(map[string]string{"file_path": "/ws/a.go", "content": big})
	if err := InsertToolCall(ctx, q, &prsm.ToolCall{SessionID: "s1", ID: "t1", ToolName: "Write", Args: args, StartedAt: t0}); err != nil {
		t.Fatal(err)
	}
	result, _ := json.Marshal(map[string]any{"filePath": "/ws/a.go", "originalFile": big, "userModified": false})
	if err := CompleteToolCall(ctx, q, "s1", "t1", result, t0); err != nil {
		t.Fatal(err)
	}
	if err := CompleteToolCall(ctx, q, "s1", "t1", []byte(`"`+big+`"`), t0); err != nil {
		t.Fatal(err)
	}
	got, err := GetToolCall(ctx, q, "s1", "t1")
	if err != nil {
		t.Fatal(err)
	}
	var a map[string]string
	if err := json.Unmarshal(got.Args, &a); err != nil || a["file_path"] != "/ws/a.go" || len(got.Args) > 64<<10 {
		t.Errorf("args kept: %d bytes, file_path %q, %v", len(got.Args), a["file_path"], err)
	}
	if len(got.Result) > 64<<10 || !json.Valid(got.Result) {
		t.Errorf("result kept: %d bytes: %.100s", len(got.Result), got.Result)
	}
	if err := CompleteToolCall(ctx, q, "s1", "t1", result, t0); err != nil {
		t.Fatal(err)
	}
	if got, _ = GetToolCall(ctx, q, "s1", "t1"); !strings.Contains(string(got.Result), `"filePath":"/ws/a.go"`) || len(got.Result) > 64<<10 {
		t.Errorf("Edit result kept: %d bytes: %.200s", len(got.Result), got.Result)
	}
}
