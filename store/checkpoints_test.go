package store

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
)

func TestCheckpoints(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	q := db.Q()
	mustSession(t, q, "s1", t0)
	mustSession(t, q, "s2", t0)
	in := &prsm.Checkpoint{
		ID: "c1", SessionID: "s1", Kind: prsm.CheckpointManual, Name: "before refactor",
		Annotation: "note", MessageIndex: 4, ToolCallID: "t9", Tree: "tree-sha", Commit: "commit-sha",
		CreatedAt: t0.Add(time.Second),
	}
	if err := InsertCheckpoint(ctx, q, in); err != nil {
		t.Fatal(err)
	}
	got, err := GetCheckpoint(ctx, q, "s1", "c1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, in) {
		t.Fatalf("GetCheckpoint =\n%+v\nwant\n%+v", got, in)
	}
	if _, err := GetCheckpoint(ctx, q, "s2", "c1"); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("GetCheckpoint(other session) error = %v, want ErrNotFound", err)
	}
	dup := *in
	dup.SessionID = "s2"
	if err := InsertCheckpoint(ctx, q, &dup); !errors.Is(err, prsm.ErrConflict) {
		t.Fatalf("duplicate InsertCheckpoint error = %v, want ErrConflict", err)
	}

	// Two automatic checkpoints at the same instant keep insertion order,
	// and both sort before c1.
	for _, id := range []string{"c3", "c2"} {
		c := &prsm.Checkpoint{ID: id, SessionID: "s1", Kind: prsm.CheckpointAuto, CreatedAt: t0}
		if err := InsertCheckpoint(ctx, q, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := InsertCheckpoint(ctx, q, &prsm.Checkpoint{ID: "c4", SessionID: "s2", Kind: prsm.CheckpointAuto, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	list, err := ListCheckpoints(ctx, q, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, c := range list {
		order = append(order, c.ID)
	}
	if got, want := strings.Join(order, " "), "c3 c2 c1"; got != want {
		t.Fatalf("ListCheckpoints = %q, want %q", got, want)
	}

	for _, tc := range []struct {
		kind string
		want int
	}{{"", 3}, {prsm.CheckpointAuto, 2}, {prsm.CheckpointManual, 1}} {
		n, err := CountCheckpoints(ctx, q, "s1", tc.kind)
		if err != nil {
			t.Fatal(err)
		}
		if n != tc.want {
			t.Fatalf("CountCheckpoints(%q) = %d, want %d", tc.kind, n, tc.want)
		}
	}

	if err := UpdateCheckpointAnnotation(ctx, q, "s1", "c1", "new note"); err != nil {
		t.Fatal(err)
	}
	if err := UpdateCheckpointAnnotation(ctx, q, "s2", "c1", "x"); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("UpdateCheckpointAnnotation(other session) error = %v, want ErrNotFound", err)
	}
	got, err = GetCheckpoint(ctx, q, "s1", "c1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := got.Annotation, "new note"; got != want {
		t.Fatalf("Annotation = %q, want %q", got, want)
	}

	if err := RenameCheckpoint(ctx, q, "s1", "c2", "turn 3: next prompt", 3); err != nil {
		t.Fatal(err)
	}
	if err := RenameCheckpoint(ctx, q, "s2", "c2", "x", 1); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("RenameCheckpoint(other session) error = %v, want ErrNotFound", err)
	}
	if got, err := GetCheckpoint(ctx, q, "s1", "c2"); err != nil || got.Name != "turn 3: next prompt" || got.MessageIndex != 3 || got.Kind != prsm.CheckpointAuto {
		t.Fatalf("renamed checkpoint = %+v, %v", got, err)
	}

	if err := DeleteCheckpoint(ctx, q, "s2", "c1"); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("DeleteCheckpoint(other session) error = %v, want ErrNotFound", err)
	}
	if err := DeleteCheckpoint(ctx, q, "s1", "c1"); err != nil {
		t.Fatal(err)
	}
	if err := DeleteCheckpoint(ctx, q, "s1", "c1"); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("second DeleteCheckpoint error = %v, want ErrNotFound", err)
	}
	if _, err := GetCheckpoint(ctx, q, "s1", "c1"); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("GetCheckpoint after delete error = %v, want ErrNotFound", err)
	}
}
