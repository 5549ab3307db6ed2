package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
)

func TestSessionRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	q := db.Q()
	zone := time.FixedZone("X", 3*3600)
	ended := time.Date(2025, 3, 5, 1, 2, 3, 4, zone)
	in := &prsm.Session{
		ID: "s1", Name: "name", AgentID: "agent", Mode: prsm.ModeReview, Status: prsm.SessionActive,
		WorktreePath: "/home/u/.prsm/projects/x/s1", Branch: "prsm/s1", BaseCommit: "abc123",
		CreatedAt: time.Date(2025, 3, 4, 5, 6, 7, 8, zone), EndedAt: &ended,
		PendingCount: 99, // ignored on write
	}
	if err := CreateSession(ctx, q, in); err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{prsm.StatusPending, prsm.StatusPending, prsm.StatusAccepted} {
		r := testRecord("s1", fmt.Sprintf("r%d", count(t, q, "SELECT COUNT(*) FROM records")), "t1", "a")
		r.Status = st
		if err := InsertRecord(ctx, q, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := GetSession(ctx, q, "s1")
	if err != nil {
		t.Fatal(err)
	}
	want := *in
	want.CreatedAt = in.CreatedAt.UTC()
	endedUTC := ended.UTC()
	want.EndedAt = &endedUTC
	want.PendingCount = 2
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("GetSession =\n%+v\nwant\n%+v", *got, want)
	}
	if err := CreateSession(ctx, q, in); !errors.Is(err, prsm.ErrConflict) {
		t.Fatalf("duplicate CreateSession error = %v, want ErrConflict", err)
	}
	if _, err := GetSession(ctx, q, "nope"); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("GetSession(nope) error = %v, want ErrNotFound", err)
	}
}

func TestListAndEndSessions(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	q := db.Q()
	// Created out of order, and two share a time: order is created_at, id.
	mustSession(t, q, "c", t0.Add(2*time.Second))
	mustSession(t, q, "b", t0)
	mustSession(t, q, "a", t0)
	// A whole second must sort after a fraction of the second before it.
	mustSession(t, q, "d", t0.Add(time.Second).Truncate(time.Second))
	if err := InsertRecord(ctx, q, testRecord("b", "r1", "t1", "x")); err != nil {
		t.Fatal(err)
	}
	end := t0.Add(time.Hour)
	if err := EndSession(ctx, q, "c", end); err != nil {
		t.Fatal(err)
	}
	if err := EndSession(ctx, q, "zzz", end); !errors.Is(err, prsm.ErrNotFound) {
		t.Fatalf("EndSession(zzz) error = %v, want ErrNotFound", err)
	}

	ids := func(ss []*prsm.Session) string {
		var out []string
		for _, s := range ss {
			out = append(out, fmt.Sprintf("%s:%s:%d", s.ID, s.Status, s.PendingCount))
		}
		return strings.Join(out, " ")
	}
	all, err := ListSessions(ctx, q, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(all), "a:active:0 b:active:1 d:active:0 c:ended:0"; got != want {
		t.Fatalf("ListSessions(all) = %q, want %q", got, want)
	}
	active, err := ListSessions(ctx, q, prsm.SessionActive)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(active), "a:active:0 b:active:1 d:active:0"; got != want {
		t.Fatalf("ListSessions(active) = %q, want %q", got, want)
	}
	c, err := GetSession(ctx, q, "c")
	if err != nil {
		t.Fatal(err)
	}
	if c.EndedAt == nil || !c.EndedAt.Equal(end) {
		t.Fatalf("EndedAt = %v, want %v", c.EndedAt, end)
	}
	none, err := ListSessions(ctx, q, "no-such-status")
	if err != nil {
		t.Fatal(err)
	}
	if none == nil || len(none) != 0 {
		t.Fatalf("ListSessions(no match) = %#v, want empty non-nil", none)
	}
}

func TestResolveSession(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	q := db.Q()
	for _, id := range []string{"ab", "abc123", "abd456", "abd789", "ABE000"} {
		mustSession(t, q, id, t0)
	}
	for _, tc := range []struct{ in, want string }{
		{"abc", "abc123"},
		{"abc123", "abc123"},
		{"ab", "ab"}, // exact id beats its prefix matches
		{"abd7", "abd789"},
	} {
		s, err := ResolveSession(ctx, q, tc.in)
		if err != nil {
			t.Fatalf("ResolveSession(%q): %v", tc.in, err)
		}
		if got := s.ID; got != tc.want {
			t.Fatalf("ResolveSession(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}

	_, err := ResolveSession(ctx, q, "abd")
	var amb *AmbiguousError
	if !errors.As(err, &amb) {
		t.Fatalf("ResolveSession(abd) error = %v, want *AmbiguousError", err)
	}
	if !errors.Is(err, prsm.ErrAmbiguous) {
		t.Fatalf("error %v does not wrap ErrAmbiguous", err)
	}
	if got, want := strings.Join(amb.Matches, ","), "abd456,abd789"; got != want {
		t.Fatalf("Matches = %q, want %q", got, want)
	}
	if got, want := amb.Prefix, "abd"; got != want {
		t.Fatalf("Prefix = %q, want %q", got, want)
	}
	for _, id := range amb.Matches {
		if !strings.Contains(err.Error(), id) {
			t.Fatalf("error %q does not list %s", err, id)
		}
	}

	for _, in := range []string{"x", "abe", "a%", "a_"} { // case-sensitive, no wildcards
		if _, err := ResolveSession(ctx, q, in); !errors.Is(err, prsm.ErrNotFound) {
			t.Fatalf("ResolveSession(%q) error = %v, want ErrNotFound", in, err)
		}
	}
	if _, err := ResolveSession(ctx, q, ""); !errors.Is(err, prsm.ErrInvalid) {
		t.Fatalf("ResolveSession(\"\") error = %v, want ErrInvalid", err)
	}
}

// A session is found by its name when no id starts so: the active session
// of that name, else the newest (issue 44, item 6).
func TestResolveSessionByName(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	q := db.Q()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, id := range []string{"aaa111", "bbb222", "ccc333"} {
		s := &prsm.Session{ID: id, Name: "edge", Mode: prsm.ModeAuto, Status: prsm.SessionEnded, CreatedAt: t0.Add(time.Duration(i) * time.Hour)}
		if id == "bbb222" {
			s.Status = prsm.SessionActive
		}
		if id == "ccc333" {
			s.Name = "aaa"
		}
		if err := CreateSession(ctx, q, s); err != nil {
			t.Fatal(err)
		}
	}
	if s, err := ResolveSession(ctx, q, "edge"); err != nil || s.ID != "bbb222" {
		t.Errorf("edge: %v %v, want the active bbb222", s, err)
	}
	// An id's prefix comes before a name.
	if s, err := ResolveSession(ctx, q, "aaa"); err != nil || s.ID != "aaa111" {
		t.Errorf("aaa: %v %v, want aaa111 by its id", s, err)
	}
	if _, err := ResolveSession(ctx, q, "nosuch"); !errors.Is(err, prsm.ErrNotFound) {
		t.Errorf("nosuch: %v, want not found", err)
	}
}
