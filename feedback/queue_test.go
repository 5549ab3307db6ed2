package feedback

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
)

// clock is a settable clock for the queue's staleness.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// newQueue is a queue over a real store in a temp dir, with two active
// sessions s1 and s2 and one ended, s3; every record's sides are
// appBefore and appAfter (none when diff is "").
func newQueue(t *testing.T, diff string) (*Queue, *clock, map[string]*prsm.Session) {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "prsm.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	sessions := map[string]*prsm.Session{}
	for _, id := range []string{"s1", "s2", "s3"} {
		s := &prsm.Session{ID: id, Name: id, AgentID: "claude", Mode: prsm.ModeAuto, Status: prsm.SessionActive, CreatedAt: c.t}
		if id == "s3" {
			s.Status, s.EndedAt = prsm.SessionEnded, &c.t
		}
		if err := store.CreateSession(context.Background(), db, s); err != nil {
			t.Fatal(err)
		}
		sessions[id] = s
	}
	q := &Queue{DB: db, Now: c.now}
	if diff != "" {
		q.Content = func(_ context.Context, _, _, side string) ([]byte, error) {
			if side == "before" {
				return []byte(appBefore), nil
			}
			return []byte(appAfter), nil
		}
	}
	return q, c, sessions
}

const appDiff = "yes"

// The two sides of src/app.go: line 11 became lines 11-12.
var (
	appHead   = strings.Repeat("// head\n", 9) + "func retry() {\n"
	appBefore = appHead + "\tfor i := 0; i < 3; i++ {\n\t}\n}\n"
	appAfter  = appHead + "\tfor {\n\t\t// forever\n\t}\n}\n"
)

// appRecord is a record of src/app.go whose one hunk is lines 11-12.
func appRecord(session string) *prsm.Record {
	return &prsm.Record{ID: "toolu_1", SessionID: session, RelPath: "src/app.go",
		Hunks: []prsm.Hunk{{Index: 0, OldStart: 11, OldLines: 1, NewStart: 11, NewLines: 2}}}
}

func take(t *testing.T, q *Queue, session string) *api.Delivery {
	t.Helper()
	d, err := q.Take(context.Background(), session, api.TakeFeedbackRequest{Agent: "claude", Event: "PostToolUse", ToolCallID: "toolu_9"})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func list(t *testing.T, q *Queue, s *prsm.Session) []*prsm.Feedback {
	t.Helper()
	items, err := q.List(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// A reject of a hunk with a note is one message naming the file, the
// lines, the decision, the hunk's lines and the user's words; it is
// handed out once and delivered with the event that carried it.
func TestRejectWithNoteDelivered(t *testing.T) {
	ctx := context.Background()
	q, _, ss := newQueue(t, appDiff)
	if err := q.Decided(ctx, Decision{Session: ss["s1"], Verb: DecidedReject, Records: []*prsm.Record{appRecord("s1")},
		Hunks: []int{0}, Say: "keep the retry loop; only fix the timeout", Author: "cli"}); err != nil {
		t.Fatal(err)
	}
	d := take(t, q, "s1")
	for _, want := range []string{"src/app.go, lines 11-12", "change toolu_1", "rejected hunk 0", "prsm took it out",
		"-\tfor i := 0; i < 3; i++ {", "+\tfor {", "The user says: keep the retry loop; only fix the timeout"} {
		if !strings.Contains(d.Text, want) {
			t.Errorf("message lacks %q:\n%s", want, d.Text)
		}
	}
	if strings.Contains(d.Text, "func retry") {
		t.Errorf("message holds a context line outside the hunk:\n%s", d.Text)
	}
	if len(d.IDs) != 1 {
		t.Fatalf("ids %v, want one", d.IDs)
	}
	if again := take(t, q, "s1"); len(again.IDs) != 0 || again.Text != "" {
		t.Errorf("handed out twice before its staleness: %+v", again)
	}
	if err := q.Confirm(ctx, "s1", d.IDs); err != nil {
		t.Fatal(err)
	}
	items := list(t, q, ss["s1"])
	if len(items) != 1 || items[0].State != prsm.FeedbackDelivered || items[0].Via != "claude PostToolUse toolu_9" ||
		items[0].Attempts != 1 || items[0].DeliveredAt == nil || items[0].Author != "cli" {
		t.Fatalf("after confirm: %+v", items[0])
	}
	if got := Status(items[0]); got != "delivered with claude PostToolUse toolu_9" {
		t.Errorf("Status = %q", got)
	}
}

// An answer that never got out (no confirm: the hook or the server died
// in between) leaves its items delivering; after Staleness they go once
// more and are then delivered: at most twice, never lost.
func TestCrashBetweenDeliveryAndMark(t *testing.T) {
	ctx := context.Background()
	q, c, ss := newQueue(t, appDiff)
	if err := q.Decided(ctx, Decision{Session: ss["s1"], Verb: DecidedReject, Records: []*prsm.Record{appRecord("s1")}}); err != nil {
		t.Fatal(err)
	}
	first := take(t, q, "s1")
	if len(first.IDs) != 1 {
		t.Fatalf("first take: %+v", first)
	}
	c.t = c.t.Add(Staleness - time.Second)
	if d := take(t, q, "s1"); len(d.IDs) != 0 {
		t.Fatalf("taken again before its staleness: %+v", d)
	}
	c.t = c.t.Add(2 * time.Second)
	second := take(t, q, "s1")
	if len(second.IDs) != 1 || second.IDs[0] != first.IDs[0] || second.Text != first.Text {
		t.Fatalf("second take %+v, want the first's item again", second)
	}
	items := list(t, q, ss["s1"])
	if items[0].State != prsm.FeedbackDelivered || items[0].Attempts != 2 {
		t.Fatalf("after the second hand-out: %+v", items[0])
	}
	c.t = c.t.Add(time.Hour)
	if d := take(t, q, "s1"); len(d.IDs) != 0 {
		t.Fatalf("handed out a third time: %+v", d)
	}
}

// A reject of 2,000 files is one item of a few lines: the files summed
// up by directory, the message bounded.
func TestBulkRejectAggregated(t *testing.T) {
	ctx := context.Background()
	q, _, ss := newQueue(t, "")
	var recs []*prsm.Record
	for i := 0; i < 1990; i++ {
		recs = append(recs, &prsm.Record{ID: fmt.Sprintf("r%d", i), SessionID: "s1", RelPath: fmt.Sprintf("node_modules/pkg%d/index.js", i)})
	}
	for i := 0; i < 10; i++ {
		recs = append(recs, &prsm.Record{ID: fmt.Sprintf("s%d", i), SessionID: "s1", RelPath: fmt.Sprintf("src/f%d.go", i)})
	}
	// The answer of a bulk decision lists 1000 records; the job counts
	// them all.
	if err := q.Decided(ctx, Decision{Session: ss["s1"], Verb: DecidedReject, Records: recs[990:], Total: 2000}); err != nil {
		t.Fatal(err)
	}
	d := take(t, q, "s1")
	if len(d.IDs) != 1 {
		t.Fatalf("%d items, want 1", len(d.IDs))
	}
	if n := strings.Count(d.Text, "\n"); n > 4 || len(d.Text) > 600 {
		t.Errorf("message of %d lines, %d bytes:\n%s", n, len(d.Text), d.Text)
	}
	for _, want := range []string{"rejected 2,000 changes", "node_modules/… (1,000 files)", "src/… (10 files)", "and 990 more files", "took them out of the files"} {
		if !strings.Contains(d.Text, want) {
			t.Errorf("message lacks %q:\n%s", want, d.Text)
		}
	}
}

// A reject or a rewind without a note queues a notice, unless NoNotices;
// an accept without a note queues nothing.
func TestNotices(t *testing.T) {
	ctx := context.Background()
	q, _, ss := newQueue(t, appDiff)
	rec := []*prsm.Record{appRecord("s1")}
	for _, d := range []Decision{
		{Session: ss["s1"], Verb: DecidedAccept, Records: rec},
		{Session: ss["s1"], Verb: DecidedReject, Records: rec},
		{Session: ss["s1"], Verb: DecidedRewind, Checkpoint: "checkpoint c1", Records: rec, Total: 1},
	} {
		if err := q.Decided(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	items := list(t, q, ss["s1"])
	if len(items) != 2 || items[0].Kind != prsm.FeedbackNotice || items[0].Decision != "rejected the change" ||
		items[1].Decision != "rewound the session to checkpoint c1, undoing 1 change" {
		for _, f := range items {
			t.Logf("%+v", f)
		}
		t.Fatalf("%d items, want the reject's and the rewind's notices", len(items))
	}
	if items[0].Why != WhyWaiting {
		t.Errorf("queued item's why %q, want %q", items[0].Why, WhyWaiting)
	}
	q.NoNotices = true
	if err := q.Decided(ctx, Decision{Session: ss["s2"], Verb: DecidedReject, Records: rec}); err != nil {
		t.Fatal(err)
	}
	if items := list(t, q, ss["s2"]); len(items) != 0 {
		t.Errorf("NoNotices: %d items", len(items))
	}
	if err := q.Decided(ctx, Decision{Session: ss["s2"], Verb: DecidedReject, Records: rec, Say: "no"}); err != nil {
		t.Fatal(err)
	}
	if items := list(t, q, ss["s2"]); len(items) != 1 || items[0].Kind != prsm.FeedbackNote {
		t.Errorf("NoNotices keeps notes: %+v", items)
	}
}

// Each session hears only its own; an ended session's note is stored
// and not delivered.
func TestSessionsApartAndEnded(t *testing.T) {
	ctx := context.Background()
	q, _, ss := newQueue(t, appDiff)
	for _, id := range []string{"s1", "s2", "s3"} {
		if err := q.Decided(ctx, Decision{Session: ss[id], Verb: DecidedReject, Records: []*prsm.Record{appRecord(id)},
			Say: "words of " + id}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"s1", "s2"} {
		d := take(t, q, id)
		if !strings.Contains(d.Text, "words of "+id) || strings.Count(d.Text, "words of") != 1 {
			t.Errorf("%s heard:\n%s", id, d.Text)
		}
	}
	if d := take(t, q, "s3"); len(d.IDs) != 0 {
		t.Errorf("ended session handed out %+v", d)
	}
	items := list(t, q, ss["s3"])
	if len(items) != 1 || items[0].State != prsm.FeedbackUndeliverable || Status(items[0]) != "not delivered: the session has ended" {
		t.Fatalf("ended session's note: %+v", items)
	}
}

// A note over 16 KiB is refused with 413's code, naming the limit;
// 16 KiB is taken. Control characters are kept, and escaped in the
// message.
func TestNoteBounds(t *testing.T) {
	ctx := context.Background()
	q, _, ss := newQueue(t, appDiff)
	err := q.Decided(ctx, Decision{Session: ss["s1"], Verb: DecidedReject, Records: []*prsm.Record{appRecord("s1")},
		Say: strings.Repeat("x", api.MaxNote+1)})
	var pe *prsm.Error
	if !errors.As(err, &pe) || pe.Code != api.CodeNoteTooLarge || api.StatusOf(pe.Code) != 413 || !strings.Contains(pe.Msg, "16384 bytes") {
		t.Fatalf("over the limit: %v", err)
	}
	if items := list(t, q, ss["s1"]); len(items) != 0 {
		t.Fatalf("a refused note was stored: %+v", items)
	}
	say := "\x1b[31mred\x07 " + strings.Repeat("y", api.MaxNote-10)
	if err := q.Decided(ctx, Decision{Session: ss["s1"], Verb: DecidedReject, Records: []*prsm.Record{appRecord("s1")}, Say: say}); err != nil {
		t.Fatal(err)
	}
	items := list(t, q, ss["s1"])
	if len(items) != 1 || items[0].Text != say {
		t.Fatal("the note is not kept as given")
	}
	d := take(t, q, "s1")
	if strings.ContainsAny(d.Text, "\x1b\x07") || !strings.Contains(d.Text, "^[[31mred^G") {
		t.Errorf("control bytes not escaped: %q", d.Text[:200])
	}
	if len(d.Text) > maxWords+1000 || !strings.Contains(d.Text, "more bytes]") {
		t.Errorf("message of %d bytes: the words are not bounded", len(d.Text))
	}
}

// A comment names its lines and their excerpt; bad lines are refused.
func TestComment(t *testing.T) {
	ctx := context.Background()
	q, _, ss := newQueue(t, appDiff)
	f, err := q.Comment(ctx, ss["s1"], appRecord("s1"), api.CommentRequest{Lines: "12-13", Text: "why forever?"})
	if err != nil {
		t.Fatal(err)
	}
	if f.Lines != "12-13" || f.Excerpt != " \t\t// forever\n \t}" || f.Decision != "" {
		t.Errorf("comment: %+v", f)
	}
	d := take(t, q, "s1")
	for _, want := range []string{"src/app.go, lines 12-13", "the user commented (no decision", "why forever?"} {
		if !strings.Contains(d.Text, want) {
			t.Errorf("message lacks %q:\n%s", want, d.Text)
		}
	}
	for _, bad := range []string{"0", "5-3", "x", "1-", "-2", "1-2-3"} {
		_, err := q.Comment(ctx, ss["s1"], appRecord("s1"), api.CommentRequest{Lines: bad, Text: "t"})
		var pe *prsm.Error
		if !errors.As(err, &pe) || pe.Code != api.CodeBadLines {
			t.Errorf("lines %q: %v", bad, err)
		}
	}
	if _, err := q.Comment(ctx, ss["s1"], appRecord("s1"), api.CommentRequest{Text: "  "}); err == nil {
		t.Error("an empty comment was taken")
	}
}

// A Stop takes nothing unless OnStop; with it, once per item.
func TestStopOptIn(t *testing.T) {
	ctx := context.Background()
	q, _, ss := newQueue(t, appDiff)
	if err := q.Decided(ctx, Decision{Session: ss["s1"], Verb: DecidedReject, Records: []*prsm.Record{appRecord("s1")}}); err != nil {
		t.Fatal(err)
	}
	stop := api.TakeFeedbackRequest{Agent: "claude", Event: "Stop", Stop: true}
	d, err := q.Take(ctx, "s1", stop)
	if err != nil || len(d.IDs) != 0 {
		t.Fatalf("Stop without OnStop: %+v %v", d, err)
	}
	q.OnStop = true
	if d, err = q.Take(ctx, "s1", stop); err != nil || len(d.IDs) != 1 {
		t.Fatalf("Stop with OnStop: %+v %v", d, err)
	}
	if err := q.Confirm(ctx, "s1", d.IDs); err != nil {
		t.Fatal(err)
	}
	if d, err = q.Take(ctx, "s1", stop); err != nil || len(d.IDs) != 0 {
		t.Fatalf("a second Stop: %+v %v", d, err)
	}
}
