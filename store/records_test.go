package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
)

func testRecord(sessionID, id, toolCallID, rel string) *prsm.Record {
	return &prsm.Record{
		ID: id, SessionID: sessionID, FilePath: "/ws/" + rel, RelPath: rel,
		ChangeType: prsm.ChangeModify, ToolCallID: toolCallID, ToolName: "Edit",
		Timestamp: t0, Status: prsm.StatusPending, SyncState: prsm.SyncSynced,
	}
}

func TestRecordRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	q := db.Q()
	mustSession(t, q, "s1", t0)
	mustSession(t, q, "s2", t0)
	old, err := PutBlob(ctx, q, []byte("old\n"))
	if err != nil {
		t.Fatal(err)
	}
	content := "new\n"
	in := &prsm.Record{
		ID: "r1", SessionID: "s1", FilePath: "/ws/dir/a.txt", RelPath: "dir/a.txt", AgentID: "agent",
		ChangeType: prsm.ChangeModify, ToolCallID: "t1:0", ToolName: "MultiEdit", MessageIndex: 3,
		NewContent:    &content, // ignored: contents live in blobs
		AddedRanges:   []prsm.Range{{StartLine: 1, EndLine: 2}, {StartLine: 5, EndLine: 5}},
		RemovedRanges: []prsm.Range{{StartLine: 1, EndLine: 1}},
		Timestamp:     t0, Status: prsm.StatusPending, SyncState: prsm.SyncConflict, Binary: true,
		ModeBefore: 0o644, ModeAfter: 0o755, SizeBefore: 4, SizeAfter: 1 << 40, Note: "too large: 1 TiB",
		OldHash: old, NewHash: HashBlob([]byte("new\n")), PreToolHash: old,
	}
	if err := InsertRecord(ctx, q, in); err != nil {
		t.Fatal(err)
	}
	if in.Seq <= 0 {
		t.Fatalf("Seq = %d, want > 0", in.Seq)
	}
	got, err := GetRecord(ctx, q, "s1", "r1")
	if err != nil {
		t.Fatal(err)
	}
	want := *in
	want.NewContent = nil
	if !reflect.DeepEqual(got, &want) {
		t.Fatalf("GetRecord =\n%+v\nwant\n%+v", got, &want)
	}

	if err := InsertRecord(ctx, q, in); !errors.Is(err, prsm.ErrConflict) {
		t.Fatalf("duplicate InsertRecord error = %v, want ErrConflict", err)
	}
	other := *in
	other.SessionID = "s2"
	if err := InsertRecord(ctx, q, &other); err != nil {
		t.Fatalf("same id in another session: %v", err)
	}
	if other.Seq <= in.Seq {
		t.Fatalf("second Seq %d not after first %d", other.Seq, in.Seq)
	}
	if _, err := GetRecord(ctx, q, "s1", "nope"); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("GetRecord(nope) error = %v, want ErrNotFound", err)
	}

	// A delete record: no ranges and no new side.
	del := testRecord("s1", "r2", "t2", "gone.txt")
	del.ChangeType, del.OldHash = prsm.ChangeDelete, old
	if err := InsertRecord(ctx, q, del); err != nil {
		t.Fatal(err)
	}
	got, err = GetRecord(ctx, q, "s1", "r2")
	if err != nil {
		t.Fatal(err)
	}
	if got.AddedRanges == nil || len(got.AddedRanges) != 0 || got.RemovedRanges == nil || len(got.RemovedRanges) != 0 {
		t.Fatalf("ranges = %#v %#v, want empty non-nil", got.AddedRanges, got.RemovedRanges)
	}
	if got.NewHash != "" || got.PreToolHash != "" || got.OldHash != old {
		t.Fatalf("hashes = %q %q %q", got.OldHash, got.NewHash, got.PreToolHash)
	}
}

func TestUpdateRecordStateAndPendingCount(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	q := db.Q()
	mustSession(t, q, "s1", t0)
	for _, id := range []string{"r1", "r2", "r3"} {
		if err := InsertRecord(ctx, q, testRecord("s1", id, "t-"+id, "a")); err != nil {
			t.Fatal(err)
		}
	}
	if err := UpdateRecordState(ctx, q, "s1", "r2", prsm.StatusRejected, prsm.SyncConflict); err != nil {
		t.Fatal(err)
	}
	if err := UpdateRecordState(ctx, q, "s1", "nope", prsm.StatusRejected, prsm.SyncSynced); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("UpdateRecordState(nope) error = %v, want ErrNotFound", err)
	}
	if err := UpdateRecordState(ctx, q, "s2", "r1", prsm.StatusRejected, prsm.SyncSynced); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("UpdateRecordState(other session) error = %v, want ErrNotFound", err)
	}
	r, err := GetRecord(ctx, q, "s1", "r2")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != prsm.StatusRejected || r.SyncState != prsm.SyncConflict {
		t.Fatalf("state = %s/%s, want rejected/conflict", r.Status, r.SyncState)
	}
	n, err := pendingCount(ctx, q, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := n, 2; got != want {
		t.Fatalf("PendingCount = %d, want %d", got, want)
	}
}

// TestRejectedAt: MarkRejected keeps the time of the first reject; a
// state change alone keeps none.
func TestRejectedAt(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	q := db.Q()
	mustSession(t, q, "s1", t0)
	for _, id := range []string{"r1", "r2"} {
		if err := InsertRecord(ctx, q, testRecord("s1", id, "t-"+id, "a")); err != nil {
			t.Fatal(err)
		}
	}
	get := func(id string) *prsm.Record {
		t.Helper()
		r, err := GetRecord(ctx, q, "s1", id)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if err := UpdateRecordState(ctx, q, "s1", "r2", prsm.StatusRejected, prsm.SyncSynced); err != nil {
		t.Fatal(err)
	}
	if r := get("r2"); !r.RejectedAt.IsZero() || r.Status != prsm.StatusRejected {
		t.Fatalf("r2 rejected by a state change only: %s, rejected_at %v", r.Status, r.RejectedAt)
	}
	first := time.Date(2026, 11, 24, 10, 0, 0, 123456789, time.UTC)
	if err := MarkRejected(ctx, q, "s1", "r1", first); err != nil {
		t.Fatal(err)
	}
	if err := MarkRejected(ctx, q, "s1", "r1", first.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if r := get("r1"); !r.RejectedAt.Equal(first) {
		t.Fatalf("rejected_at %v, want the first reject's %v", r.RejectedAt, first)
	}
	if err := MarkRejected(ctx, q, "s1", "nope", first); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("MarkRejected(nope) = %v, want ErrNotFound", err)
	}
}

func TestListRecordsFilters(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	q := db.Q()
	mustSession(t, q, "s1", t0)
	mustSession(t, q, "s2", t0)
	add := func(sess, id, tc, rel, status string) {
		t.Helper()
		r := testRecord(sess, id, tc, rel)
		r.Status = status
		if err := InsertRecord(ctx, q, r); err != nil {
			t.Fatal(err)
		}
	}
	add("s1", "r1", "t1", "a", prsm.StatusPending)
	add("s1", "r2", "t10", "a", prsm.StatusPending)
	add("s1", "r3", "t1:0", "b", prsm.StatusAccepted)
	add("s2", "r4", "t1", "a", prsm.StatusPending)
	add("s1", "r5", "t1:1", "a", prsm.StatusPending)
	add("s1", "r6", "t1:x", "a", prsm.StatusPending)
	add("s1", "r7", "t1:", "a", prsm.StatusPending)
	add("s1", "r8", "t1:12", "c", prsm.StatusRejected)
	add("s1", "r9", "xt1", "a", prsm.StatusPending)

	ids := func(f RecordFilter) string {
		t.Helper()
		rs, err := ListRecords(ctx, q, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		var last int64
		for _, r := range rs {
			if r.Seq <= last {
				t.Fatalf("records not in seq order: %d after %d", r.Seq, last)
			}
			last = r.Seq
			out = append(out, r.SessionID+"/"+r.ID)
		}
		return strings.Join(out, " ")
	}
	r4, err := GetRecord(ctx, q, "s2", "r4")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		f    RecordFilter
		want string
	}{
		{RecordFilter{SessionID: "s1", ToolCallID: "t1"}, "s1/r1 s1/r3 s1/r5 s1/r8"},
		{RecordFilter{SessionID: "s1", AfterSeq: r4.Seq}, "s1/r5 s1/r6 s1/r7 s1/r8 s1/r9"},
		{RecordFilter{AfterSeq: r4.Seq - 1}, "s2/r4 s1/r5 s1/r6 s1/r7 s1/r8 s1/r9"},
		{RecordFilter{SessionID: "s1", Status: prsm.StatusPending, AfterSeq: r4.Seq}, "s1/r5 s1/r6 s1/r7 s1/r9"},
		{RecordFilter{ToolCallID: "t1"}, "s1/r1 s1/r3 s2/r4 s1/r5 s1/r8"},
		{RecordFilter{SessionID: "s1", ToolCallID: "t1:0"}, "s1/r3"},
		{RecordFilter{SessionID: "s1", ToolCallID: "t10"}, "s1/r2"},
		{RecordFilter{SessionID: "s1", RelPath: "a", Status: prsm.StatusPending}, "s1/r1 s1/r2 s1/r5 s1/r6 s1/r7 s1/r9"},
		{RecordFilter{Status: prsm.StatusAccepted}, "s1/r3"},
		{RecordFilter{SessionID: "s2"}, "s2/r4"},
		{RecordFilter{}, "s1/r1 s1/r2 s1/r3 s2/r4 s1/r5 s1/r6 s1/r7 s1/r8 s1/r9"},
		{RecordFilter{SessionID: "nope"}, ""},
	} {
		if got := ids(tc.f); got != tc.want {
			t.Errorf("ListRecords(%+v) = %q, want %q", tc.f, got, tc.want)
		}
	}
	rs, err := ListRecords(ctx, q, RecordFilter{SessionID: "nope"})
	if err != nil {
		t.Fatal(err)
	}
	if rs == nil {
		t.Fatal("ListRecords(no match) = nil, want empty non-nil")
	}
}

// TestListRecordsByToolCallSeeksIndex: a tool call's records are found
// through records_tool_call by range, not by reading every record of the
// session (a repeated complete, GET of a tool call's changes, an accept
// by tool call, in a session of 100k records).
func TestListRecordsByToolCallSeeksIndex(t *testing.T) {
	db := openTestDB(t)
	for _, f := range []RecordFilter{{SessionID: "s1", ToolCallID: "t1"}, {SessionID: "s1", ToolCallID: "t1", Status: prsm.StatusPending}} {
		plan := queryPlan(t, db, f)
		want := "SEARCH records USING INDEX records_tool_call (session_id=? AND tool_call_id>? AND tool_call_id<?)"
		if !slices.Contains(plan, want) {
			t.Errorf("plan of a tool call's records (%+v):\n%s\nwant a step %q", f, strings.Join(plan, "\n"), want)
		}
	}
}

// TestListPendingOfAFileSeeksIndex: the pending records of one file (a
// reject's cascade, an accept's chain in review mode) are found through
// records_rel_path, not by reading every pending record of the session:
// sqlite took records_status, and a reject of all 20k files of a session
// read 20k records for each of them (7 minutes).
func TestListPendingOfAFileSeeksIndex(t *testing.T) {
	db := openTestDB(t)
	plan := queryPlan(t, db, RecordFilter{SessionID: "s1", RelPath: "a.txt", Status: prsm.StatusPending})
	want := "SEARCH records USING INDEX records_rel_path (session_id=? AND rel_path=?)"
	if !slices.Contains(plan, want) {
		t.Errorf("plan of a file's pending records:\n%s\nwant a step %q", strings.Join(plan, "\n"), want)
	}
}

// TestRecordPagesSeekBySeq: a page of a session's records (a list of
// 200k streamed a page at a time) starts where the last one ended, with
// no sort of the whole session.
func TestRecordPagesSeekBySeq(t *testing.T) {
	db := openTestDB(t)
	for _, f := range []RecordFilter{
		{SessionID: "s1", AfterSeq: 5, Limit: 100},
		{SessionID: "s1", Status: prsm.StatusPending, AfterSeq: 5, Limit: 100},
	} {
		plan := strings.Join(queryPlan(t, db, f), "\n")
		if strings.Contains(plan, "TEMP B-TREE") || !strings.Contains(plan, "rowid>?") {
			t.Errorf("plan of a page (%+v):\n%s", f, plan)
		}
	}
	// And the pages hold every record once, in order.
	ctx := context.Background()
	q := db.Q()
	mustSession(t, q, "s1", t0)
	mustSession(t, q, "s2", t0)
	var want []string
	for i := 0; i < 25; i++ {
		sid := []string{"s1", "s2"}[i%3/2]
		id := fmt.Sprintf("r%02d", i)
		if err := InsertRecord(ctx, q, testRecord(sid, id, "t1", id)); err != nil {
			t.Fatal(err)
		}
		if sid == "s1" {
			want = append(want, id)
		}
	}
	var got []string
	f := RecordFilter{SessionID: "s1", Limit: 4}
	for {
		page, err := ListRecords(ctx, q, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page {
			got = append(got, r.ID)
		}
		if len(page) < f.Limit {
			break
		}
		f.AfterSeq = page[len(page)-1].Seq
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("pages: %v, want %v", got, want)
	}
}

// queryPlan is sqlite's plan of ListRecords' query for f, a step a line.
func queryPlan(t *testing.T, db *DB, f RecordFilter) []string {
	t.Helper()
	query, args := recordsQuery(f)
	return planOf(t, db, query, args...)
}

// planOf is sqlite's plan of query, a step a line.
func planOf(t *testing.T, db *DB, query string, args ...any) []string {
	t.Helper()
	rows, err := db.Q().QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}

// TestLastRecordSeq: the newest record sequence number over all sessions
// (what a checkpoint notes to order itself among records), found from the
// rowid's end: a lookup by session would read every entry of the
// session's index, and checkpoints would slow down as sessions grow.
func TestLastRecordSeq(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	q := db.Q()
	mustSession(t, q, "a", t0)
	mustSession(t, q, "b", t0)
	if n, err := LastRecordSeq(ctx, q); err != nil || n != 0 {
		t.Fatalf("LastRecordSeq of no records = %d, %v; want 0", n, err)
	}
	for i, s := range []string{"a", "b", "a", "b", "b"} {
		if err := InsertRecord(ctx, q, testRecord(s, fmt.Sprint("r", i), "t", "f")); err != nil {
			t.Fatal(err)
		}
	}
	var newest int64
	if err := q.QueryRowContext(ctx, "SELECT seq FROM records WHERE id = 'r4'").Scan(&newest); err != nil {
		t.Fatal(err)
	}
	if n, err := LastRecordSeq(ctx, q); err != nil || n != newest {
		t.Fatalf("LastRecordSeq = %d, %v; want %d (r4, session b's)", n, err, newest)
	}
	rows, err := q.QueryContext(ctx, "EXPLAIN QUERY PLAN "+lastRecordSeqQuery)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(detail, "INDEX") || strings.HasPrefix(detail, "SCAN") {
			t.Errorf("plan of LastRecordSeq reads an index or scans: %s", detail)
		}
	}
}
